"""The secrecy scanner: finds any card value a page or push shows that its viewer may not
see (a face-down card, the draw pile, another player's drawn card)."""

from __future__ import annotations

import re

from app.engine import DOWN, GONE, UP, Game
from tests.web.web_helpers import Node, parse

# ----- the secrecy scanner -------------------------------------------------------------
ALLOWED_HIDDEN = {"csrf_token", "version", "type", "next"}
# The theme switch's way back: the table page's own address (no free number).
QUERY = r"(lang=[A-Za-z-]+|chat=1|mode=[a-z_]+)"
NEXT = re.compile(rf"/t/[A-Z0-9]+(\?{QUERY}(&{QUERY})*)?")
# The data attributes the page's script reads, and the values each may have (none can
# carry a card value: no free number but the countdowns' seconds).
ALLOWED_DATA = {
    "data-status": re.compile(r"lobby|playing|finished|closed"),
    "data-turn": re.compile(r"[01]"),
    "data-turn-title": re.compile(r"[^\d]+"),
    "data-round": re.compile(r"\d+-\d+"),
    "data-left": re.compile(r"\d+(\.\d+)?"),
    "data-until": re.compile(r"1"),
    "data-copy": re.compile(r"invite"),
    "data-share": re.compile(r"invite"),
    "data-done": re.compile(r"[^\d]+"),
    "data-fail": re.compile(r"[^\d]+"),
    "data-title": re.compile(r"[^\d]+"),
    "data-graphemes": re.compile(r"20|200"),  # a name's length, a chat message's
    "data-too-long": re.compile(r"[^\d]*(20|200)[^\d]*"),
    "data-sound": re.compile(r""),
    "data-part": re.compile(r"banner|piles|actions|mine"),
    "data-mode": re.compile(r"take|flip|"),
    "data-sound-menu": re.compile(r""),
    "data-volume": re.compile(r""),
    "data-down": re.compile(r"[^\d]+"),
    "data-not-sent": re.compile(r"[^\d]+"),
    "data-failed": re.compile(r"[^\d]+"),
    "data-sw": re.compile(r"/sw\.js"),
    "data-sounds": re.compile(r"/static/sounds-1\.js\?v=[0-9a-f]{10}"),
    "data-lobby": re.compile(r"/static/lobby-1\.js\?v=[0-9a-f]{10}"),
    "data-push": re.compile(r"/static/push-1\.js\?v=[0-9a-f]{10}"),  # turn alerts' module
}
MOVE_TYPES = {"reveal", "take_discard", "draw", "keep_drawn", "discard_drawn"}
LOCATOR = re.compile(r"Row \d+, column \d+")
PUT = re.compile(r"Put the (-?\d+) here")


def _grid_owner(label: str, game: Game, viewer: str | None) -> str | None:
    if label == "Your grid":
        return viewer
    for p in game.players:
        if label == f"{p.name}'s grid":
            return p.id
    return None


def _contains_run(tokens: list[int], run: list[int]) -> bool:
    n = len(run)
    return any(tokens[i : i + n] == run for i in range(len(tokens) - n + 1))


def scan(html: str, game: Game | None, viewer: str | None, version=None, doc=None) -> list:
    """Everything in `html` (sent to `viewer`, None for a spectator) that shows what that
    viewer may not know. Returns the problems found; empty means clean. The content of
    each <template> (another mode of the turn, swapped in by the page's script) is
    scanned as a document of its own."""
    doc = doc if doc is not None else parse(html)
    problems = scan_document(html, game, viewer, version, doc)
    for tpl in [n for n in doc.iter(templates=True) if n.tag == "template"]:
        content = Node("#root", children=tpl.children)
        content.comments = []
        found = scan_document("", game, viewer, version, content)
        problems += [f"<template data-mode={tpl.attrs.get('data-mode')!r}>: {p}" for p in found]
    return problems


def scan_document(html: str, game: Game | None, viewer: str | None, version, doc) -> list:
    problems = []
    if doc.comments:
        problems.append(f"HTML comments: {doc.comments!r}")
    nodes = list(doc.iter())
    for node in nodes:
        for name, value in node.attrs.items():
            allowed = ALLOWED_DATA.get(name)
            bad = allowed is None or not allowed.fullmatch(value or "")
            if name.startswith("data-") and name != "data-version" and bad:
                problems.append(f"data attribute {name}={value!r}")
            if name == "data-version" and version is not None and value != str(version):
                problems.append(f"data-version {value} is not {version}")
        if node.tag == "script" and (node.text().strip() or not node.attrs.get("src")):
            problems.append("an inline script")
        if node.tag == "input" and node.attrs.get("type") == "hidden":
            name, value = node.attrs.get("name"), node.attrs.get("value", "")
            if name not in ALLOWED_HIDDEN:
                problems.append(f"hidden input {name}={value!r}")
            elif name == "version" and version is not None and value != str(version):
                problems.append(f"hidden version {value} is not {version}")
            elif name == "type" and value not in MOVE_TYPES:
                problems.append(f"hidden type {value!r}")
            elif name == "next" and not NEXT.fullmatch(value):
                problems.append(f"hidden next {value!r}")
        if "back" in node.classes:
            if node.text().strip():
                problems.append(f"text on a card back: {node.text()!r}")
            if any(c.startswith("v-") for c in node.classes):
                problems.append(f"a card back with a value colour: {node.attrs['class']}")
    if game is None or not game.rounds:
        return problems
    if str(game.seed) in html:
        problems.append("the game's seed")
    for word in ("draw_pile", '"values"', '"grids"', "seed"):
        if word in html:
            problems.append(f"engine data: {word}")
    rnd = game.round
    drawer = rnd.turn if rnd.drawn is not None else None
    public = set()
    if rnd.discard:
        public.add(rnd.discard[-1])
    if drawer is not None and drawer == viewer:
        public.add(rnd.drawn)

    # Each grid, cell by cell, against the engine's state.
    seen = []
    for g in [n for n in nodes if "grid" in n.classes]:
        owner = _grid_owner(g.attrs.get("aria-label", ""), game, viewer)
        if owner is None or owner not in rnd.grids:
            problems.append(f"a grid of nobody: {g.attrs.get('aria-label')!r}")
            continue
        seen.append(owner)
        grid = rnd.grids[owner]
        cells = [n for n in g.iter() if "card" in n.classes]
        if len(cells) != grid.rows * grid.cols:
            problems.append(f"{owner}'s grid shows {len(cells)} cells")
            continue
        for i, cell in enumerate(cells):
            r, c = divmod(i, grid.cols)
            where = f"{owner} ({r},{c}) for {viewer}"
            label = cell.attrs.get("aria-label", "")
            if f"Row {r + 1}, column {c + 1}" not in label:
                problems.append(f"{where}: label {label!r} names another cell")
            state, value = grid.state[i], grid.values[i]
            if state == UP:
                if cell.text().strip() != str(value):
                    problems.append(f"{where}: shows {cell.text()!r}, is {value}")
                continue
            # Face down or cleared: nothing on the card may say a number.
            if cell.text().strip():
                problems.append(f"{where}: text {cell.text()!r} on a hidden card")
            if state == DOWN and "back" not in cell.classes:
                problems.append(f"{where}: a face-down card not drawn as a back")
            if state == GONE and "gone" not in cell.classes:
                problems.append(f"{where}: a cleared card not drawn as cleared")
            if any(cls.startswith("v-") for cls in cell.classes):
                problems.append(f"{where}: value colour {cell.attrs['class']!r}")
            rest = LOCATOR.sub("", label)
            for m in PUT.finditer(rest):
                if int(m.group(1)) not in public:
                    problems.append(f"{where}: label offers a card {m.group(1)} not in view")
            rest = PUT.sub("", rest)
            if re.search(r"\d", rest):
                problems.append(f"{where}: label {label!r}")
            if state == DOWN and "face down" not in label:
                problems.append(f"{where}: label {label!r} does not say face down")
            for name, val in cell.attrs.items():
                if name in ("aria-label", "class"):
                    continue
                if name == "value" and val == f"{r}-{c}":
                    continue
                if re.search(r"\d", val):
                    problems.append(f"{where}: attribute {name}={val!r}")
    board = next((n for n in nodes if n.tag == "div" and "board" in n.classes), None)
    if board is not None and sorted(seen) != sorted(rnd.grids):
        problems.append(f"grids shown {sorted(seen)}, players {sorted(rnd.grids)}")

    # The drawn card: its value for the drawer only.
    mine = [n for n in nodes if "Your drawn card" in n.attrs.get("aria-label", "")]
    if drawer is not None and viewer == drawer:
        labels = [n.attrs["aria-label"] for n in mine]
        expected = [f"Your drawn card: {rnd.drawn}"]
        if labels != expected and (board is not None or labels):
            problems.append(f"the drawer sees {labels}")
    elif mine:
        problems.append(f"{viewer} is shown a drawn card: {mine[0].attrs['aria-label']}")
    if drawer is not None and viewer != drawer and board is not None:
        banner = next((n for n in nodes if n.tag == "p" and "banner" in n.classes), None)
        if banner is not None and re.search(r"\d", banner.text()):
            problems.append(f"banner while someone else holds a card: {banner.text()!r}")
        if "You drew" in html or "You drew" in doc.text():
            problems.append("'You drew' shown to someone else")
    if board is not None and rnd.discard and game.phase in ("setup", "play"):
        tops = [n for n in nodes if n.attrs.get("aria-label", "").startswith(("Discard", "Take"))]
        for n in tops:
            if n.text().strip() != str(rnd.discard[-1]):
                problems.append(f"discard shows {n.text()!r}, top is {rnd.discard[-1]}")

    # The draw pile's order (top first), in any run of numbers anywhere in the markup.
    pile = list(reversed(rnd.draw_pile))
    if len(pile) >= 6:
        tokens = [int(t) for t in re.findall(r"-?\d+", html)]
        run = pile[:10]
        if _contains_run(tokens, run) or _contains_run(tokens, run[::-1]):
            problems.append("the draw pile's order")
    return problems

"""The table's hottest HTML, built in Python rather than by templates: every card of
every grid, another player's box and the viewer's own grid are rendered for every push
(app.web.presenter decides what they show; nothing here reads a game). Values are
escaped and translations are trusted markup, as in the templates."""

from __future__ import annotations

from markupsafe import Markup, escape

from app import i18n
from app.i18n import gettext as _


def esc(value) -> str:
    """markupsafe's `escape`, as a plain `str` for a `str` (a board's values are joined
    into larger strings, where a Markup would escape what it is added to) or a number
    (digits and a sign: nothing to escape); anything else goes through `escape` (whose
    `__html__` is kept: Markup is not escaped twice)."""
    kind = type(value)
    if kind is str:
        return str.__str__(escape(value))  # the Markup's text as a plain str
    if kind is int:
        return str(value)
    return escape(value)


def card_tone(value: int) -> str:
    """Colour families of the physical cards."""
    if value < 0:
        return "neg"
    if value == 0:
        return "zero"
    if value <= 4:
        return "low"
    if value <= 8:
        return "mid"
    return "high"


def card_html(cell: dict) -> str:
    """A card that is not a button, as the grids show it (the hottest bit of a push:
    built here rather than by a template macro)."""
    label = esc(cell["label"])
    if cell["state"] == "up":
        return (
            f'<span class="card v-{cell["tone"]}" role="img" aria-label="{label}">'
            f"{int(cell['value'])}</span>"
        )
    kind = "back" if cell["state"] == "down" else "gone"
    return f'<span class="card {kind}" role="img" aria-label="{label}"></span>'


def grid_html(rows: tuple[tuple[dict, ...], ...], label: str) -> str:
    """Another player's grid, without buttons (built when the grid changes: see
    app.web.presenter.Shared), shown to all."""
    cards = "".join(cell["html"] for row in rows for cell in row)
    return (
        f'<div class="grid small" role="group" aria-label="{esc(label)}" '
        f'style="--cols:{len(rows[0])}">{cards}</div>'
    )


# What another player's box shows (opponent_html reads nothing else of it).
BOX = ("name", "total", "bot", "forfeited", "present", "is_turn", "is_ender", "face_up")


def opponent_html(o: dict, slot: str, show_totals: bool, phase: str) -> str:
    """Another player's box as everyone else sees it, built once per state of the box
    and language (most boxes do not change from one push to the next); `slot` is their
    reaction slot. Kept by content, as strings: nothing the garbage collector walks."""
    key = (*(o[k] for k in BOX), o["grid_html"], str(slot), show_totals, phase)
    return i18n.per_catalog(_BOXES, key, lambda: _box(o, slot, show_totals, phase), 4096)


_BOXES: dict[int, tuple] = {}


def _box(o: dict, slot: str, show_totals: bool, phase: str) -> str:
    """Translations are trusted markup, values escaped, as in the templates."""
    classes = (" turn" if o["is_turn"] else "") + (" out" if o["forfeited"] else "")
    dot = " on" if o["present"] else ""
    total = ""
    if show_totals:
        said = Markup(_("total %(total)s")) % {"total": o["total"]}
        total = f' <span class="total" aria-label="{said}">{esc(o["total"])}</span>'
    tags = ""
    if o["bot"] or o["forfeited"] or o["is_ender"] or not o["present"]:
        tags = (
            '<p class="otags">'
            + (f'<span class="tag">{Markup(_("bot"))}</span> ' if o["bot"] else "")
            + (
                f'<span class="tag away">{Markup(_("away"))}</span> '
                if not o["present"] and not o["bot"]
                else ""
            )
            + (f'<span class="tag">{Markup(_("left"))}</span> ' if o["forfeited"] else "")
            + (f'<span class="tag ender">{Markup(_("ended"))}</span>' if o["is_ender"] else "")
            + "</p>"
        )
    showing = ""
    if show_totals and phase in ("setup", "play"):
        short, said = _("Face up: %(points)s"), _("Points of the face-up cards: %(points)s")
        showing = showing_html(short, said, o["face_up"])
    return (
        f'\n<article class="opponent{classes}">\n'
        f'<h3><span class="dot{dot}"></span><span class="oname">{esc(o["name"])}</span>'
        f"{total}</h3>\n{tags}\n{slot}\n{o['grid_html']}\n{showing}\n</article>"
    )


def showing_html(short: str, said: str, points: int) -> str:
    """A grid's face-up points: short on screen ("Face up: 18", which fits the narrowest
    box), said in full to a screen reader and on hover (18 points, not 18 cards)."""
    short, said = short % {"points": points}, said % {"points": points}
    return (
        f'<p class="showing" title="{esc(said)}"><span aria-hidden="true">{short}</span>'
        f'<span class="sr-only">{said}</span></p>'
    )


def cells(grid) -> tuple[tuple[dict, ...], ...]:
    """A view's grid as cards to show: position, state, value, colour, spoken label and
    HTML. Rows are tuples and each card a dict of strings and numbers only: kept with a
    table's shared part, none of it is anything the garbage collector walks (it stops
    tracking such tuples and never tracks such dicts). A card's label and HTML are
    worked out once per position, card and language."""
    t = i18n.catalog()
    kept = _CARDS.get(id(t))
    if kept is None or kept[0] is not t:
        kept = _CARDS[id(t)] = (t, {})
    known = kept[1]
    rows = []
    for r, row in enumerate(grid):
        out = []
        for c, cell in enumerate(row):
            state, value = cell["state"], cell.get("value")
            found = known.get((r, c, state, value))
            if found is None:
                if len(known) >= 4096:
                    known.clear()
                found = known[r, c, state, value] = _card(t, r, c, state, value)
            out.append(found)
        rows.append(tuple(out))
    return tuple(rows)


# id(catalog) -> (catalog, {(row, col, state, value): card}); a card is shared by every
# grid that shows it (read-only: copy one to change it, as presenter.my_cells does).
_CARDS: dict[int, tuple] = {}


def _card(t, r: int, c: int, state: str, value) -> dict:
    where = t.ugettext("Row %(row)s, column %(col)s") % {"row": r + 1, "col": c + 1}
    entry = {"row": r, "col": c, "state": state, "action": None}
    if state == "up":
        entry["value"] = value
        entry["tone"] = card_tone(value)
        entry["label"] = t.ugettext("%(where)s: %(card)s") % {"where": where, "card": value}
    elif state == "down":
        entry["label"] = t.ugettext("%(where)s: face down") % {"where": where}
    else:
        entry["label"] = t.ugettext("%(where)s: cleared") % {"where": where}
    entry["html"] = card_html(entry)
    return entry


def my_grid_html(rows, label: str, move_url: str, version, csrf: str) -> str:
    """The viewer's own grid: one form whose pressable cards are its buttons (the
    pressed card says its position), or plain cards when none can be pressed."""
    kind = _pressed(rows)
    cols = len(rows[0])
    if kind is None:
        cards = "".join([c["html"] for row in rows for c in row])
        return (
            f'<div class="grid mine" role="group" aria-label="{esc(label)}" '
            f'style="--cols:{cols}">{cards}</div>'
        )
    parts = []
    for row in rows:
        for c in row:
            if not c["action"]:
                parts.append(c["html"])
                continue
            up = c["state"] == "up"
            look = f"v-{c['tone']}" if up else "back"
            parts.append(
                f'<button class="card {look}" name="pos" value="{c["row"]}-{c["col"]}" '
                f'aria-label="{esc(c["action"]["verb"])}">{c["value"] if up else ""}</button>'
            )
    url = esc(move_url)
    return (
        # Named, the form is a form landmark (a <form> may not be a group).
        f'<form method="post" action="{url}" hx-post="{url}" class="grid mine act-{kind}" '
        f'aria-label="{esc(label)}" style="--cols:{cols}">\n'
        f'<input type="hidden" name="csrf_token" value="{esc(csrf)}">'
        f'<input type="hidden" name="version" value="{esc(version)}">'
        f'<input type="hidden" name="type" value="{kind}">{"".join(parts)}</form>'
    )


def _pressed(rows) -> str | None:
    """The kind of move the viewer's pressable cards make, if any (plain loops: run for
    every viewer of every push, where a generator costs a frame per card)."""
    for row in rows:
        for c in row:
            if c["action"]:
                return c["action"]["type"]
    return None

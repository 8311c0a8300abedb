"""The lesson's hints (/learn): what to do next and why, for the learner's view of the
table now. Each hint is worked out from the view alone (its legal actions, the grids,
the piles, the round's events and result), never from a script of presses: a learner
who plays otherwise than advised gets the hint that is true for where they are, and no
face-down card is read (a view has none).

A hint is {"text", "point", "cell"}: `point` names the control it is about ("grid",
"draw", "take", "flip", "discard", "next"), `cell` the card ("row-col") where one card
is meant; the table page marks both (static/learn-1.css)."""

from __future__ import annotations

from app import i18n
from app.engine import RuleSet
from app.i18n import gettext as _
from app.i18n import ngettext

LOW = 1  # a discard pile's card this low is worth taking onto a face-down card
FAIR = 4  # a drawn card this low is worth keeping on a face-down card (worth 5 or so)
HIGH = 9  # a card this high is called high
TAKE_GAIN = 4  # the discard pile's card is worth taking when it gains this much
KEEP_GAIN = 3  # a drawn card is worth keeping in place of a card this much higher


def hint(v, names: dict, my_id: str | None, mode: str | None = None) -> dict | None:
    """The hint for `my_id`'s view `v` in the turn's `mode` (None, "take" or "flip")."""
    if my_id is None or v["round"] is None:
        return None
    phase = v["phase"]
    if phase in ("round_over", "game_over"):
        return ended(v, names, my_id)
    if phase == "setup":
        return setup(v)
    legal = v["legal"]
    said = [cleared(v, names, my_id)]
    if not legal:
        said.append(waiting(v, names, my_id))
        return joined(said, None)
    rnd = v["round"]
    if rnd["ender"] is not None and rnd["ender"] != my_id:
        said.append(
            _(
                "Last turn! %(name)s has turned over every card: you play once more, "
                "then the round is scored.",
                name=names.get(rnd["ender"], ""),
            )
        )
    grid = rnd["grids"][my_id]
    if rnd["drawn"] is not None:
        text, point, cell = drawn(grid, rnd["drawn"], legal, mode)
    else:
        text, point, cell = choosing(grid, rnd["discard_top"], mode)
    said.append(text)
    return joined(said, point, cell)


def joined(said: list, point: str | None, cell: tuple[int, int] | None = None) -> dict:
    return {
        "text": " ".join(s for s in said if s),
        "point": point or "",
        "cell": f"{cell[0]}-{cell[1]}" if cell else "",
    }


def setup(v) -> dict:
    left = v["round"]["setup_left"].get(v["me"], 0)
    if not left:
        return joined([_("Whoever shows the most points once the cards are turned starts.")], None)
    if left >= 2:
        text = ngettext(
            "Welcome! Each card counts its points against you: the lowest total wins. "
            "Start by turning over %(num)d card: press any one, say in the first column.",
            "Welcome! Each card counts its points against you: the lowest total wins. "
            "Start by turning over %(num)d cards: press any of them, say in the first column.",
            left,
        )
    else:
        text = ngettext("Turn over %(num)d more card.", "Turn over %(num)d more cards.", left)
    # Any card will do; the first column's top and bottom make a good start on the
    # lesson's deal (app.tables.lesson).
    grid = v["round"]["grids"][v["me"]]
    first = next((r for r in (0, len(grid) - 1) if grid[r][0]["state"] == "down"), None)
    return joined([text], "grid", (first, 0) if first is not None else None)


def choosing(grid, top, mode: str | None) -> tuple[str, str, tuple | None]:
    """Before drawing: take the discard pile's card, or draw one."""
    clear = completing(grid, top)
    high = highest(grid)
    better = high is not None and top <= high[0] - TAKE_GAIN
    if mode == "take":  # (without JavaScript: the page for choosing where it goes)
        if clear:
            return _column_text(top, clear), "grid", clear
        if high and high[0] > top:
            text = _("Put the %(card)s in place of your %(high)s.", card=top, high=high[0])
            return text, "grid", high[1]
        return _("Put the %(card)s on a face-down card.", card=top), "grid", spare_down(grid)
    if clear:
        text = _(
            "Take the %(card)s from the discard pile and put it in column %(col)s: "
            "three equal cards in a column are cleared and count nothing.",
            card=top,
            col=clear[1] + 1,
        )
        return text, "take", clear
    if better:
        text = _(
            "Take the %(card)s from the discard pile and put it in place of your "
            "%(high)s: lower is better.",
            card=top,
            high=high[0],
        )
        return text, "take", high[1]
    spare = spare_down(grid)
    if top <= LOW and spare:
        text = _(
            "A %(card)s is low: take it from the discard pile and put it on a face-down card.",
            card=top,
        )
        return text, "take", spare
    text = _(
        "The %(card)s on the discard pile would not help you: draw a card from the draw pile.",
        card=top,
    )
    return text, "draw", None


def drawn(grid, card: int, legal, mode: str | None) -> tuple[str, str, tuple | None]:
    """After drawing: keep the card (where), or discard it and turn a card over."""
    can_flip = any(a["type"] == "discard_drawn" and a["flip"] for a in legal)
    pair = open_pair(grid)
    said = i18n.card(card)
    said = said[:1].upper() + said[1:]  # it starts the sentence
    if mode == "flip":  # (without JavaScript: the page for choosing the card)
        if pair:
            return _pair_text(pair), "grid", pair[:2]
        return _("Press a face-down card to turn it over."), "grid", None
    clear = completing(grid, card)
    if clear:
        return _column_text(card, clear), "grid", clear
    high = highest(grid)
    if high and card <= high[0] - KEEP_GAIN:
        text = _("%(card)s is low: keep it in place of your %(high)s.", card=said, high=high[0])
        return text, "grid", high[1]
    spare = spare_down(grid)
    if card <= FAIR and spare:
        text = _("%(card)s is low: keep it. Press a face-down card to put it there.", card=said)
        return text, "grid", spare
    if not can_flip:
        return _("%(card)s would not help you: discard it.", card=said), "discard", None
    if card >= HIGH:
        text = _(
            "%(card)s is high: discard it and turn over one of your face-down cards.", card=said
        )
    else:
        text = _(
            "%(card)s would not lower your score much: discard it and turn over one of "
            "your face-down cards.",
            card=said,
        )
    if pair:
        return f"{text} {_pair_text(pair)}", "flip", pair[:2]
    return text, "flip", None


def _pair_text(pair: tuple[int, int, int]) -> str:
    return _(
        "Try the last card of column %(col)s: if it is a %(card)s too, the column clears.",
        col=pair[1] + 1,
        card=pair[2],
    )


def _column_text(card: int, cell: tuple[int, int]) -> str:
    return _(
        "Put the %(card)s in column %(col)s: three equal cards in a column are cleared "
        "and count nothing.",
        card=card,
        col=cell[1] + 1,
    )


def cleared(v, names: dict, my_id: str) -> str:
    """A column the last move cleared, or the learner's own last move did (told again
    on their next turn: the bot may have played meanwhile)."""
    others_moved = False
    for event in reversed(v["round"]["log"]):
        kind = event["type"]
        if kind == "ended" or (kind == "draw" and event["player"] != my_id):
            continue  # another's draw shows nothing; "ended" follows the move that ended
        if kind == "clear" and event["player"] == my_id:
            return _("Cleared! Three equal cards in a column leave the grid and count nothing.")
        if kind == "clear" and not others_moved:
            return _(
                "%(name)s cleared a column: three equal cards leave the grid and count nothing.",
                name=names.get(event["player"], ""),
            )
        if event.get("player") == my_id:
            return ""  # the learner's last move cleared nothing
        others_moved = True
    return ""


def waiting(v, names: dict, my_id: str) -> str:
    rnd = v["round"]
    if rnd["ender"] == my_id:
        return _(
            "You turned over your last card: the others play once more, then the round "
            "is scored. If your score is not the lowest, it counts double."
        )
    return _(
        "%(name)s is playing. Watch the discard pile: what they throw away may suit you.",
        name=names.get(rnd["turn"], ""),
    )


def ended(v, names: dict, my_id: str) -> dict:
    """A round's or the game's end: how it was scored, the ender's penalty above all."""
    rnd = v["round"]
    result = rnd["result"]
    said = [_("Every card still face down was turned over and counted.")]
    if result:
        said.append(penalty(result, names, my_id))
    if v["phase"] == "game_over":
        said.append(
            _(
                "The game is over: the lowest total wins. A real game goes on round after "
                "round until someone reaches %(score)s points.",
                score=RuleSet().end_score,
            )
        )
        return joined(said, "next")
    said.append(_("Press Next round when you are ready."))
    return joined(said, "next")


def penalty(result, names: dict, my_id: str) -> str:
    ender = result["ender"]
    if ender not in result["raw"]:
        return ""
    raw = result["raw"]
    lowest = all(raw[ender] < score for pid, score in raw.items() if pid != ender)
    doubled = result["scores"][ender] != raw[ender]
    if ender == my_id:
        if doubled:
            return _("You ended the round without the lowest score, so your score counted double.")
        if lowest:
            return _(
                "You ended the round with the lowest score: well done. Had someone scored "
                "lower, your score would have counted double."
            )
        return _(
            "You ended the round without the lowest score, but a score of zero or less "
            "never counts double."
        )
    name = names.get(ender, "")
    if doubled:
        return _(
            "%(name)s ended the round without the lowest score, so their score counted double.",
            name=name,
        )
    if lowest:
        return _(
            "%(name)s ended the round with the lowest score. Had you scored lower, their "
            "score would have counted double.",
            name=name,
        )
    return _(
        "%(name)s ended the round without the lowest score, but a score of zero or less "
        "never counts double.",
        name=name,
    )


# ----- reading the learner's grid ---------------------------------------------------
def columns(grid):
    """(column index, its cells top to bottom) for each column of a grid of rows."""
    return enumerate(zip(*grid, strict=True))


def completing(grid, card: int) -> tuple[int, int] | None:
    """The cell where `card` would make a column of three equal face-up cards: the
    column's one cell that is not already that card."""
    for col, cells in columns(grid):
        if len(cells) != 3 or any(c["state"] == "gone" for c in cells):
            continue
        same = [c["state"] == "up" and c["value"] == card for c in cells]
        if sum(same) == 2:
            return same.index(False), col
    return None


def open_pair(grid) -> tuple[int, int, int] | None:
    """(row, column, value): a column with two equal face-up cards and its last card
    face down."""
    for col, cells in columns(grid):
        up = [c["value"] for c in cells if c["state"] == "up"]
        down = [r for r, c in enumerate(cells) if c["state"] == "down"]
        if len(cells) == 3 and len(up) == 2 and up[0] == up[1] and len(down) == 1:
            return down[0], col, up[0]
    return None


def highest(grid) -> tuple[int, tuple[int, int]] | None:
    """The highest face-up card worth replacing and where it lies (the first such one):
    not one of two equal cards of a column (a third would clear them)."""
    best = None
    for r, row in enumerate(grid):
        for c, cell in enumerate(row):
            if cell["state"] != "up" or paired(grid, r, c):
                continue
            if best is None or cell["value"] > best[0]:
                best = (cell["value"], (r, c))
    return best


def paired(grid, r: int, c: int) -> bool:
    """Whether the face-up card at (r, c) has an equal face-up card in its column."""
    value = grid[r][c]["value"]
    return any(
        i != r and row[c]["state"] == "up" and row[c]["value"] == value
        for i, row in enumerate(grid)
    )


def spare_down(grid) -> tuple[int, int] | None:
    """A face-down card to put a kept card on: not the last card of a column of two
    equal face-up cards (it may be the third)."""
    pair = open_pair(grid)
    for r, row in enumerate(grid):
        for c, cell in enumerate(row):
            if cell["state"] == "down" and not (pair and pair[:2] == (r, c)):
                return r, c
    return None

"""What the table shows, from a committed snapshot: no Flask app, request or template is
needed (strings go through Flask-Babel, which falls back to English outside an app), so
it is tested on its own.

A push shows one table to several people. `Shared` is what they all see alike (the
seats, every grid as cards, the move log), built once per push; `board` adds one
viewer's own part (what their cards do when pressed, their drawn card, their banner).

Only a view (app.engine.view) is read, never the engine state beyond who plays: no
face-down value can reach a page or a socket message."""

from __future__ import annotations

from flask_babel import get_translations, ngettext
from flask_babel import gettext as _
from markupsafe import Markup, escape

from .. import i18n
from ..engine import RuleSet, view
from ..models import Seat
from ..tables import Snapshot

MODES = ("take", "flip")


def a(value) -> str:
    """'a 7', 'an 8', 'an 11': the article a card value takes when read aloud (in the
    current language: 'un 7', 'eine 7')."""
    return i18n.card(value)


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


def card_html(cell: dict) -> Markup:
    """A card that is not a button, as the grids show it (the hottest bit of a push:
    built here rather than by a template macro)."""
    label = escape(cell["label"])
    if cell["state"] == "up":
        return Markup(
            f'<span class="card v-{cell["tone"]}" role="img" aria-label="{label}">'
            f"{int(cell['value'])}</span>"
        )
    kind = "back" if cell["state"] == "down" else "gone"
    return Markup(f'<span class="card {kind}" role="img" aria-label="{label}"></span>')


def grid_html(rows: list[list[dict]], label: str) -> Markup:
    """Another player's grid, without buttons (built once per push, shown to all)."""
    cards = "".join(cell["html"] for row in rows for cell in row)
    return Markup(
        f'<div class="grid small" role="group" aria-label="{escape(label)}" '
        f'style="--cols:{len(rows[0])}">{cards}</div>'
    )


def face_up(grid: list[list[dict]]) -> int:
    """The points a grid's face-up cards add up to (shown while a round is played)."""
    return sum(c["value"] for row in grid for c in row if c["state"] == "up")


def cells(grid: list[list[dict]]) -> list[list[dict]]:
    """A view's grid as cards to show: state, value, colour, spoken label and HTML."""
    t = get_translations()  # looked up once per grid: this runs for every card
    where_of = t.gettext("Row %(row)s, column %(col)s")
    up, down, gone = (
        t.gettext("%(where)s: %(card)s"),
        t.gettext("%(where)s: face down"),
        t.gettext("%(where)s: cleared"),
    )
    rows = []
    for r, row in enumerate(grid):
        out = []
        for c, cell in enumerate(row):
            where = where_of % {"row": r + 1, "col": c + 1}
            entry = {"row": r, "col": c, "state": cell["state"], "action": None}
            if cell["state"] == "up":
                entry["value"] = cell["value"]
                entry["tone"] = card_tone(cell["value"])
                entry["label"] = up % {"where": where, "card": cell["value"]}
            elif cell["state"] == "down":
                entry["label"] = down % {"where": where}
            else:
                entry["label"] = gone % {"where": where}
            entry["html"] = card_html(entry)
            out.append(entry)
        rows.append(out)
    return rows


class Shared:
    """What every viewer of one committed snapshot sees alike, in the current language:
    built once per push (and once per page)."""

    def __init__(self, snap: Snapshot, present: set[int]):
        table = snap.table
        self.game = snap.game
        self.rules = RuleSet.from_dict(table.rules)
        self.votes = table.votes or {}
        self.seats = [
            {
                "id": s.id,
                "name": i18n.person(s.name),
                "bot": s.bot,
                "is_host": s.id == table.host_seat,
                "present": s.bot is not None or s.id in present,
                "player_id": s.player_id,
            }
            for s in snap.seats
        ]
        rematch = self.votes.get("rematch", [])
        self.rematch_names = [s["name"] for s in self.seats if s["id"] in rematch]
        if self.game is None:
            return
        v = view(self.game, None)
        rnd = v["round"]
        self.names = {p["id"]: i18n.person(p["name"]) for p in v["players"]}
        self.by_player = {p["id"]: p for p in v["players"]}
        present_of = {s["player_id"]: s["present"] for s in self.seats}
        # Every grid is public (face-down cards are backs for everyone, their owner too).
        self.cells = {pid: cells(grid) for pid, grid in rnd["grids"].items()}
        self.opponent = {
            pid: {
                "id": pid,
                "name": self.names[pid],
                "total": self.by_player[pid]["total"],
                "bot": self.by_player[pid]["bot"],
                "forfeited": self.by_player[pid]["forfeited"],
                "present": present_of.get(pid, False),
                "is_turn": rnd["turn"] == pid,
                "is_ender": rnd["ender"] == pid,
                "grid_html": grid_html(self.cells[pid], _("%(name)s's grid", name=self.names[pid])),
                "face_up": face_up(self.cells[pid]),
                "setup_left": rnd["setup_left"].get(pid, 0),
            }
            for pid in rnd["seating"]
        }
        lines = (log_line(e, self.names) for e in rnd["log"][-12:])
        self.log = [line for line in lines if line][-6:][::-1]

    def seat_list(self, me: Seat | None) -> list[dict]:
        my_id = me.id if me is not None else None
        return [dict(s, is_me=s["id"] == my_id) for s in self.seats]


class Turn:
    """What the viewer's own cards do when pressed, right now."""

    __slots__ = ("phase", "my_turn", "mode", "drawn", "top", "setup_left")

    def __init__(self, phase, my_turn, mode, drawn, top, setup_left):
        self.phase, self.my_turn, self.mode = phase, my_turn, mode
        self.drawn, self.top, self.setup_left = drawn, top, setup_left


def board(shared: Shared, me: Seat | None, mode: str | None = None) -> dict:
    """One viewer's board: the shared parts, and their own grid, turn and banner."""
    game = shared.game
    my_id = me.player_id if me is not None else None
    v = view(game, my_id)
    rnd = v["round"]
    names = shared.names
    phase = v["phase"]
    playing = my_id is not None and my_id in game.totals and my_id not in game.forfeited
    my_turn = playing and rnd["turn"] == my_id
    drawn = rnd["drawn"]
    setup_left = rnd["setup_left"].get(my_id, 0) if playing else 0
    mode = mode if mode in MODES else None
    if phase != "play" or not my_turn:
        mode = None
    if (drawn is not None and mode == "take") or (drawn is None and mode == "flip"):
        mode = None
    seating = rnd["seating"]
    if my_id in seating:
        i = seating.index(my_id)
        others = seating[i + 1 :] + seating[:i]
    else:
        others = list(seating)
    me_entry = None
    face_down_left = False
    if my_id in rnd["grids"]:
        face_down_left = playing and any(
            c["state"] == "down" for row in rnd["grids"][my_id] for c in row
        )
        turn = Turn(phase, my_turn, mode, drawn, rnd["discard_top"], setup_left)
        me_entry = {
            "id": my_id,
            "name": names.get(my_id),
            "total": shared.by_player[my_id]["total"],
            "grid": my_cells(shared.cells[my_id], turn),
            "is_ender": rnd["ender"] == my_id,
        }
    votes = shared.votes
    my_seat_id = me.id if me is not None else None
    top = rnd["discard_top"]
    return {
        "phase": phase,
        "round_number": rnd["number"],
        "rules": game.rules,
        "playing": playing,
        "my_turn": my_turn,
        "mode": mode,
        "me": me_entry,
        "opponents": [shared.opponent[pid] for pid in others],
        "draw_count": rnd["draw_count"],
        "discard_top": top,
        "discard_tone": card_tone(top) if top is not None else "",
        "drawn": drawn,
        "drawn_tone": card_tone(drawn) if drawn is not None else "",
        "someone_drew": rnd["has_drawn"] and not my_turn,
        "face_down_left": face_down_left,
        "setup_left": setup_left,
        "banner": banner(v, names, my_id, my_turn, setup_left, drawn, mode),
        "log": shared.log,
        "result": round_result(game, rnd["result"], names, my_id) if rnd["result"] else None,
        "ranking": ranking(v, names, my_id) if v["ranking"] else None,
        "voted_next": my_seat_id in votes.get("next", []),
        "next_votes": len(votes.get("next", [])),
        "opted_rematch": my_seat_id in votes.get("rematch", []),
        "rematch_names": shared.rematch_names,
        "show_totals": v["rules"]["show_running_score"] or phase == "game_over",
        "forfeited": my_id in game.forfeited if my_id else False,
    }


def my_cells(grid: list[list[dict]], turn: Turn) -> list[list[dict]]:
    """The viewer's own cards, each with what pressing it does (if anything)."""
    out = []
    for row in grid:
        mine = []
        for cell in row:
            action = cell_action(cell, turn) if cell["state"] != "gone" else None
            mine.append(dict(cell, action=action) if action else cell)
        out.append(mine)
    return out


def cell_action(cell: dict, turn: Turn) -> dict | None:
    down = cell["state"] == "down"
    label = cell["label"]
    if turn.phase == "setup" and turn.setup_left > 0 and down:
        return {"type": "reveal", "verb": _("Turn over. %(cell)s", cell=label)}
    if not turn.my_turn:
        return None
    if turn.mode == "take":
        verb = _("Put the %(card)s here. %(cell)s", card=turn.top, cell=label)
        return {"type": "take_discard", "verb": verb}
    if turn.drawn is not None and turn.mode == "flip":
        if down:
            verb = _("Turn this card over. %(cell)s", cell=label)
            return {"type": "discard_drawn", "verb": verb}
        return None
    if turn.drawn is not None:
        verb = _("Put the %(card)s here. %(cell)s", card=turn.drawn, cell=label)
        return {"type": "keep_drawn", "verb": verb}
    return None


def banner(v, names, my_id, my_turn, setup_left, drawn, mode) -> dict:
    rnd = v["round"]
    phase = v["phase"]
    last = rnd["ender"] is not None and phase == "play"
    ender = names.get(rnd["ender"])
    if phase == "setup":
        if setup_left:
            text = ngettext(
                "Turn over %(num)d card of your grid.",
                "Turn over %(num)d cards of your grid.",
                setup_left,
            )
            return {"tone": "you", "text": text}
        waiting = i18n.and_list(names[p] for p, n in rnd["setup_left"].items() if n > 0)
        text = _("Waiting for %(names)s to turn their cards.", names=waiting)
        return {"tone": "wait", "text": text}
    if phase == "round_over":
        return {"tone": "wait", "text": _("Round %(number)s is over.", number=rnd["number"])}
    if phase == "game_over":
        return {"tone": "wait", "text": _("The game is over.")}
    prefix = _("Last turn! %(name)s ended the round.", name=ender) + " " if last else ""
    top = rnd["discard_top"]
    if my_turn:
        if drawn is not None and mode == "flip":
            text = _("Discard the %(card)s: tap a face-down card to turn it over.", card=drawn)
        elif drawn is not None:
            text = _("You drew %(card)s: tap a card to replace it, or discard it.", card=a(drawn))
        elif mode == "take":
            text = _("Tap the card the %(card)s replaces.", card=top)
        else:
            text = _("Your turn: draw a card or take the %(card)s.", card=top)
        return {"tone": "last" if last else "you", "text": prefix + text}
    turn = names.get(rnd["turn"], "")
    if rnd["has_drawn"]:
        doing = _("%(name)s is choosing where to put a drawn card.", name=turn)
    else:
        doing = _("%(name)s is playing.", name=turn)
    return {"tone": "last" if last else "wait", "text": prefix + doing}


def log_line(event: dict, names: dict) -> str | None:
    who = names.get(event.get("player"), "")
    kind = event["type"]
    if kind == "take_discard":
        return _("%(name)s took the %(card)s from the discard pile", name=who, card=event["value"])
    if kind == "keep_drawn":
        return _("%(name)s drew and kept %(card)s", name=who, card=a(event["value"]))
    if kind == "discard_drawn":
        flip = event["flip"]
        if flip:
            return _(
                "%(name)s discarded %(card)s and turned over %(other)s",
                name=who,
                card=a(event["value"]),
                other=a(flip["value"]),
            )
        return _("%(name)s discarded %(card)s", name=who, card=a(event["value"]))
    if kind == "clear":
        if event["line"] == "row":
            return _("%(name)s: Row of %(card)ss cleared", name=who, card=event["value"])
        return _("%(name)s: Column of %(card)ss cleared", name=who, card=event["value"])
    if kind == "ended":
        return _("%(name)s ended the round", name=who)
    if kind == "reshuffle":
        return _("The discard pile was shuffled into a new draw pile")
    if kind == "forfeit":
        return _("%(name)s left the game", name=who)
    if kind == "reveal":
        return _("%(name)s turned over %(card)s", name=who, card=a(event["value"]))
    return None


def round_result(game, result: dict, names: dict, my_id) -> dict:
    rows = []
    ender = result["ender"]
    for pid in result["raw"]:
        rows.append(
            {
                "name": names[pid],
                "is_me": pid == my_id,
                "raw": result["raw"][pid],
                "score": result["scores"][pid],
                "total": result["totals"][pid] if result["totals"] else None,
                "ender": pid == ender,
                "penalised": result["scores"][pid] != result["raw"][pid],
            }
        )
    rows.sort(key=lambda r: r["score"])
    penalty_note = None
    if ender in result["raw"] and result["scores"][ender] != result["raw"][ender]:
        penalty_note = _(
            "%(name)s ended the round without the strictly lowest score: "
            "%(raw)s became %(score)s (%(penalty)s).",
            name=names[ender],
            raw=result["raw"][ender],
            score=result["scores"][ender],
            penalty=i18n.describe_penalty(game.rules.penalty),
        )
    return {"rows": rows, "penalty_note": penalty_note, "ender": names.get(ender)}


def ranking(v, names, my_id) -> list[dict]:
    forfeited = {p["id"] for p in v["players"] if p["forfeited"]}
    return [
        {
            "rank": r["rank"],
            "name": names[r["player"]],
            "total": r["total"],
            "is_me": r["player"] == my_id,
            "forfeited": r["player"] in forfeited,
        }
        for r in v["ranking"]
    ]

"""What the table shows, from a committed snapshot: no Flask app, request or template is
needed (strings go through the catalog app.i18n binds, English outside an app), so it is
tested on its own.

A push shows one table to several people. `Shared` is what they all see alike (the
seats, every grid as cards, the move log), built once per push; `board` adds one
viewer's own part (what their cards do when pressed, their drawn card, their banner).
What a viewer may do comes from their view's `legal` list (the engine's statement of
it), never worked out again here. No HTML: partials/_board.html shows it
(app.web.board).

Only a view (app.engine.view) is read, never the engine state beyond who plays: no
face-down value can reach a page or a socket message."""

from __future__ import annotations

from app import i18n
from app.engine import RuleSet, view
from app.features import lesson
from app.features.outcome import a, card_tone, log_line, ranking, round_result
from app.i18n import gettext as _
from app.i18n import ngettext
from app.storage.models import Seat
from app.tables import Snapshot, rematch_seats, rematch_starter

__all__ = ["Shared", "board", "cells"]

MODES = ("take", "flip")


def face_up(grid: list[list[dict]]) -> int:
    """The points a grid's face-up cards add up to (shown while a round is played)."""
    return sum(c["value"] for row in grid for c in row if c["state"] == "up")


def rule_set(rules: dict) -> RuleSet:
    """A table's rules as a RuleSet: checked and built once per set of rules (every
    snapshot decodes its table's rules afresh)."""
    key = tuple((k, tuple(v.items()) if isinstance(v, dict) else v) for k, v in rules.items())
    try:
        found = _RULES.get(key)
    except TypeError:  # a value that cannot be a key (not one of ours): built each time
        return RuleSet.from_dict(rules)
    if found is None:
        found = RuleSet.from_dict(rules)
        if len(_RULES) >= 1024:
            _RULES.clear()
        _RULES[key] = found
    return found


_RULES: dict[tuple, RuleSet] = {}


class Shared:
    """What every viewer of one committed snapshot sees alike, in the current language:
    built once per push (and once per page). Kept until the table's next version
    (app.web.render.shared_part), so young at most collections of the garbage
    collector's middle generation, which walks it: strings, numbers, tuples and dicts of
    those (nothing to walk). `previous` (an earlier version's) lends what did not change."""

    def __init__(
        self,
        snap: Snapshot,
        present: set[int],
        previous: Shared | None = None,
        marks: dict[int, tuple[str, str]] | None = None,
    ):
        table = snap.table
        marks = marks or {}  # seat id -> (text, its longer label): accounts' marks
        self.game = snap.game
        self.rules = rule_set(table.rules)
        self.votes = table.votes or {}
        self.seats = tuple(
            {
                "id": s.id,
                "name": i18n.person(s.name),
                "bot": s.bot,
                "is_host": s.id == table.host_seat,
                "present": s.bot is not None or s.id in present,
                "player_id": s.player_id,
                "mark": marks.get(s.id),
            }
            for s in snap.seats
        )
        # As the server decides (app.tables.playing): who starts the rematch, and who
        # would play it if it started now (2 at least to start).
        starter, self.rematch_in = None, ()
        if table.status == table.FINISHED:
            starter = rematch_starter(table, snap.seats, snap.game)
            in_it = rematch_seats(table, snap.seats, snap.game)
            self.rematch_in = tuple((s.id, i18n.person(s.name)) for s in in_it)
        self.rematch_starter = starter.id if starter is not None else None
        self.rematch_starter_name = i18n.person(starter.name) if starter is not None else None
        self.rematch_ready = len(self.rematch_in) > 1
        self.banners: dict[tuple, dict] = {}  # see `board`
        self.lesson = bool(table.lesson)  # a lesson's board has hints (app.features.lesson)
        if self.game is None:
            return
        v = view(self.game, None)
        rnd = v["round"]
        self.names = {p["id"]: i18n.person(p["name"]) for p in v["players"]}
        self.totals = {p["id"]: p["total"] for p in v["players"]}
        if previous is None or getattr(previous, "names", None) != self.names:
            previous = None
        # Every grid is public (face-down cards are backs for everyone, their owner too).
        self.grids = rnd["grids"]  # the view's: kept while a grid is unchanged
        self.cells = {pid: self._cells(pid, grid, previous) for pid, grid in self.grids.items()}
        present_of = {s["player_id"]: s["present"] for s in self.seats}
        mark_of = {s["player_id"]: s["mark"] for s in self.seats}
        players = {p["id"]: p for p in v["players"]}
        self.opponent = {
            pid: {
                "id": pid,
                "name": self.names[pid],
                "total": players[pid]["total"],
                "bot": players[pid]["bot"],
                "forfeited": players[pid]["forfeited"],
                "present": present_of.get(pid, False),
                "mark": mark_of.get(pid),
                "is_turn": rnd["turn"] == pid,
                "is_ender": rnd["ender"] == pid,
                "face_up": self._face_up(pid, previous),
                "setup_left": rnd["setup_left"].get(pid, 0),
            }
            for pid in rnd["seating"]
        }
        self.log = self._log(rnd["log"][-12:], previous)

    def _cells(self, pid: str, grid, previous: Shared | None):
        if previous is not None and previous.grids.get(pid) is grid:
            return previous.cells[pid]
        return cells(grid)

    def _face_up(self, pid: str, previous: Shared | None) -> int:
        before = previous.opponent.get(pid) if previous is not None else None
        if before is not None and previous.cells.get(pid) is self.cells[pid]:
            return before["face_up"]  # the same cards: most grids, most pushes
        return face_up(self.cells[pid])

    def _log(self, events, previous: Shared | None) -> tuple[str, ...]:
        """The last few events said, newest first, each worked out once: the view keeps
        a round's events (the same objects from version to version), and `previous`
        (keeping its game, so these ids are its events') has the lines it showed."""
        known = previous.said if previous is not None else {}
        self.said = {}
        for event in events:
            line = known.get(id(event))
            if line is None:
                line = log_line(event, self.names) or ""
            self.said[id(event)] = line
        return tuple(line for line in self.said.values() if line)[-6:][::-1]

    def seat_list(self, me: Seat | None) -> list[dict]:
        my_id = me.id if me is not None else None
        return [dict(s, is_me=s["id"] == my_id) for s in self.seats]


def cells(grid) -> tuple[tuple[dict, ...], ...]:
    """A view's grid as cards to show: position, state, value, colour and spoken label.
    Rows are tuples and each card a dict of strings and numbers only: kept with a
    table's shared part, none of it is anything the garbage collector walks (it stops
    tracking such tuples and never tracks such dicts). A card's label is worked out
    once per position, card and language."""
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
# grid that shows it (read-only: copy one to change it, as my_cells does).
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
    return entry


# What a press on one of the viewer's cards does, by the mode they chose: the legal
# actions of that type are the cards that are buttons.
PRESS = {None: ("reveal", "keep_drawn"), "take": ("take_discard",), "flip": ("discard_drawn",)}


def board(shared: Shared, me: Seat | None, mode: str | None = None) -> dict:
    """One viewer's board: the shared parts, and their own grid, turn and banner."""
    game = shared.game
    my_id = me.player_id if me is not None else None
    v = view(game, my_id)
    rnd = v["round"]
    names = shared.names
    phase = v["phase"]
    legal = v.get("legal", ())
    kinds = {a["type"] for a in legal}
    playing = my_id is not None and my_id in game.totals and my_id not in game.forfeited
    my_turn = phase == "play" and bool(legal)
    drawn = rnd["drawn"]
    setup_left = rnd["setup_left"].get(my_id, 0) if playing else 0
    # A mode counts only when a move of its kind is legal now.
    if mode not in PRESS or mode is None or PRESS[mode][0] not in kinds:
        mode = None
    seating = rnd["seating"]
    if my_id in seating:
        i = seating.index(my_id)
        others = seating[i + 1 :] + seating[:i]
    else:
        others = list(seating)
    me_entry = None
    if my_id in rnd["grids"]:
        pressed = presses(legal, mode)
        me_entry = {
            "id": my_id,
            "name": names.get(my_id),
            "total": shared.totals[my_id],
            "grid": my_cells(shared.cells[my_id], pressed, rnd["discard_top"], drawn),
            # The kind of move a press on one of their cards makes (one kind at a time).
            "pressing": next(iter(pressed.values()), None),
            "face_up": shared.opponent[my_id]["face_up"],
            "is_ender": rnd["ender"] == my_id,
        }
    # The banner reads nothing of the viewer but these: the players waiting for the one
    # whose turn it is share one.
    key = (my_turn, setup_left, drawn, mode)
    said = shared.banners.get(key)
    if said is None:
        said = shared.banners[key] = banner(v, names, my_id, my_turn, setup_left, drawn, mode)
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
        "can_draw": "draw" in kinds and mode is None,
        "me": me_entry,
        "opponents": [shared.opponent[pid] for pid in others],
        "draw_count": rnd["draw_count"],
        "discard_top": top,
        "discard_tone": card_tone(top) if top is not None else "",
        "drawn": drawn,
        "drawn_tone": card_tone(drawn) if drawn is not None else "",
        "someone_drew": rnd["has_drawn"] and not my_turn,
        # The drawn card may be discarded by turning a card over (else: discarded alone).
        "face_down_left": any(a["type"] == "discard_drawn" and a["flip"] for a in legal),
        "setup_left": setup_left,
        "banner": said,
        "log": shared.log,
        "result": round_result(game, rnd["result"], names, my_id) if rnd["result"] else None,
        "ranking": ranking(v, names, my_id) if v["ranking"] else None,
        "voted_next": my_seat_id in votes.get("next", []),
        "next_votes": len(votes.get("next", [])),
        "opted_rematch": my_seat_id in votes.get("rematch", []),
        "starts_rematch": my_seat_id is not None and my_seat_id == shared.rematch_starter,
        "rematch_starter": shared.rematch_starter_name,
        # Who else is in (the reader is never named to themselves).
        "rematch_others": [name for sid, name in shared.rematch_in if sid != my_seat_id],
        "rematch_ready": shared.rematch_ready,
        "show_totals": v["rules"]["show_running_score"] or phase == "game_over",
        "forfeited": my_id in game.forfeited if my_id else False,
        "hint": lesson.hint(v, names, my_id, mode) if shared.lesson and playing else None,
    }


def other_modes(b: dict) -> tuple[str, ...]:
    """The modes the viewer may switch this turn to from board `b`: taking the discard
    pile's top card, or discarding the drawn card to turn one over."""
    if not b["my_turn"] or b["mode"] is not None:
        return ()
    modes = []
    if b["can_draw"] and b["discard_top"] is not None:
        modes.append("take")
    if b["drawn"] is not None and b["face_down_left"]:
        modes.append("flip")
    return tuple(modes)


def presses(legal, mode: str | None) -> dict[tuple[int, int], str]:
    """The viewer's cards that are buttons now: position -> the type of the move a press
    makes. From the legal actions of the kinds the mode presses."""
    kinds = PRESS[mode]
    out = {}
    for action in legal:
        kind = action["type"]
        if kind == "discard_drawn" and kind in kinds:
            if action["flip"]:
                out[tuple(action["flip"])] = kind
        elif kind in kinds:
            out[action["row"], action["col"]] = kind
    return out


def verb(kind: str, cell: str, top, drawn) -> str:
    """What pressing a card does, said with where it is (for screen readers): worked out
    once per card, move and language (the player whose turn it is has up to 12)."""
    key = (kind, cell, top if kind == "take_discard" else drawn)
    return i18n.per_catalog(_VERBS, key, lambda: _verb(kind, cell, top, drawn), 20_000)


_VERBS: dict[tuple, tuple] = {}


def _verb(kind: str, cell: str, top, drawn) -> str:
    if kind == "reveal":
        return _("Turn over. %(cell)s", cell=cell)
    if kind == "discard_drawn":
        return _("Turn this card over. %(cell)s", cell=cell)
    card = top if kind == "take_discard" else drawn
    return _("Put the %(card)s here. %(cell)s", card=card, cell=cell)


def my_cells(grid: list[list[dict]], pressed: dict, top=None, drawn=None) -> list[list[dict]]:
    """The viewer's own cards, each with what pressing it does (if anything)."""
    if not pressed:
        return grid
    out = []
    for row in grid:
        mine = []
        for cell in row:
            kind = pressed.get((cell["row"], cell["col"]))
            if kind is None:
                mine.append(cell)
                continue
            action = {"type": kind, "verb": verb(kind, cell["label"], top, drawn)}
            mine.append(dict(cell, action=action))
        out.append(mine)
    return out


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
            text = _("Discard the %(card)s: choose a face-down card to turn over.", card=drawn)
        elif drawn is not None:
            text = _("You drew %(card)s: choose a card it replaces, or discard it.", card=a(drawn))
        elif mode == "take":
            text = _("Choose the card the %(card)s replaces.", card=top)
        else:
            text = _("Your turn: draw a card or take the %(card)s.", card=top)
        return {"tone": "last" if last else "you", "text": prefix + text}
    turn = names.get(rnd["turn"], "")
    if rnd["has_drawn"]:
        doing = _("%(name)s is choosing where to put a drawn card.", name=turn)
    else:
        doing = _("%(name)s is playing.", name=turn)
    return {"tone": "last" if last else "wait", "text": prefix + doing}

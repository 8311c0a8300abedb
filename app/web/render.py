"""Turn a table and a player's view into what the templates show.

Templates only ever get a view (app.engine.view), never the engine state, so a
face-down value cannot reach a page or a socket message."""

from __future__ import annotations

from functools import lru_cache

import segno
from flask import render_template, url_for
from flask_babel import force_locale, ngettext
from flask_babel import gettext as _
from markupsafe import Markup, escape

from .. import games, i18n
from ..engine import RuleSet, view
from ..engine.bots import BOTS
from ..hub import Connection, hub
from ..models import Seat, Table

MODES = ("take", "flip")


def a(value) -> str:
    """'a 7', 'an 8', 'an 11': the article a card value takes when read aloud (in the
    current language: 'un 7', 'eine 7')."""
    return i18n.card(value)


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


def seat_list(table: Table, me: Seat | None, seats: list[Seat] | None = None) -> list[dict]:
    present = hub.present(table.code)
    return [
        {
            "id": s.id,
            "name": i18n.person(s.name),
            "bot": s.bot,
            "is_host": s.id == table.host_seat,
            "is_me": me is not None and s.id == me.id,
            "present": s.bot is not None or s.id in present,
            "player_id": s.player_id,
        }
        for s in (games.seats_of(table) if seats is None else seats)
    ]


def table_context(
    table: Table,
    me: Seat | None,
    *,
    mode: str | None = None,
    error: str | None = None,
    field: str | None = None,
    form=None,
    seat_rows: list[Seat] | None = None,
    game=None,
) -> dict:
    """Everything the table templates show to `me`. `seat_rows` and `game` let a push
    load the table once and render it for every player."""
    seats = seat_list(table, me, seat_rows)
    rules = RuleSet.from_dict(table.rules)
    ctx = {
        "table": table,
        "code": table.code,
        "version": table.version,
        "status": table.status,
        "me": me,
        "is_host": me is not None and me.id == table.host_seat,
        "seats": seats,
        "rules": rules,
        "error": error,
        "error_field": field,
        "form": form,
        "invite_url": url_for("table.show", code=table.code, _external=True),
        "board": None,
        "max_seats": games.MAX_SEATS,
        "bot_kinds": list(BOTS),
        "bot_kind_names": i18n.bot_kind_names(),
    }
    if table.status == Table.LOBBY:
        ctx["qr"] = qr_svg(ctx["invite_url"])
    if game is None:
        game = games.load_game(table)
    if game is not None:
        ctx["board"] = board(table, game, me, seats, mode if mode in MODES else None)
    return ctx


@lru_cache(maxsize=256)
def qr_svg(url: str) -> str:
    return segno.make(url, error="m").svg_inline(scale=4, border=2, dark="#1b2a3a")


def board(table: Table, game, me: Seat | None, seats: list[dict], mode: str | None) -> dict:
    my_id = me.player_id if me is not None else None
    v = view(game, my_id)
    rnd = v["round"]
    names = {p["id"]: i18n.person(p["name"]) for p in v["players"]}
    by_player = {p["id"]: p for p in v["players"]}
    present = {s["player_id"]: s["present"] for s in seats}
    phase = v["phase"]
    playing = my_id is not None and my_id in game.totals and my_id not in game.forfeited
    my_turn = playing and rnd["turn"] == my_id
    drawn = rnd["drawn"]

    setup_left = rnd["setup_left"].get(my_id, 0) if playing else 0
    if phase != "play" or not my_turn:
        mode = None
    if drawn is not None and mode == "take":
        mode = None
    if drawn is None and mode == "flip":
        mode = None

    def grid_of(pid: str, mine: bool) -> list[list[dict]]:
        rows = []
        face_down_left = any(c["state"] == "down" for row in rnd["grids"][pid] for c in row)
        for r, row in enumerate(rnd["grids"][pid]):
            out = []
            for c, cell in enumerate(row):
                where = _("Row %(row)s, column %(col)s", row=r + 1, col=c + 1)
                entry = {"row": r, "col": c, "state": cell["state"], "action": None}
                if cell["state"] == "up":
                    entry["value"] = cell["value"]
                    entry["tone"] = card_tone(cell["value"])
                    entry["label"] = _("%(where)s: %(card)s", where=where, card=cell["value"])
                elif cell["state"] == "down":
                    entry["label"] = _("%(where)s: face down", where=where)
                else:
                    entry["label"] = _("%(where)s: cleared", where=where)
                if mine and cell["state"] != "gone":
                    entry["action"] = cell_action(cell, entry, face_down_left)
                entry["html"] = card_html(entry)
                out.append(entry)
            rows.append(out)
        return rows

    def cell_action(cell, entry, face_down_left) -> dict | None:
        down = cell["state"] == "down"
        if phase == "setup" and setup_left > 0 and down:
            return {"type": "reveal", "verb": _("Turn over. %(cell)s", cell=entry["label"])}
        if not my_turn:
            return None
        if mode == "take":
            top = rnd["discard_top"]
            verb = _("Put the %(card)s here. %(cell)s", card=top, cell=entry["label"])
            return {"type": "take_discard", "verb": verb}
        if drawn is not None and mode == "flip":
            if down:
                verb = _("Turn this card over. %(cell)s", cell=entry["label"])
                return {"type": "discard_drawn", "verb": verb}
            return None
        if drawn is not None:
            verb = _("Put the %(card)s here. %(cell)s", card=drawn, cell=entry["label"])
            return {"type": "keep_drawn", "verb": verb}
        return None

    seating = rnd["seating"]
    if my_id in seating:
        i = seating.index(my_id)
        others = seating[i + 1 :] + seating[:i]
    else:
        others = list(seating)
    opponents = [
        {
            "id": pid,
            "name": names[pid],
            "total": by_player[pid]["total"],
            "bot": by_player[pid]["bot"],
            "forfeited": by_player[pid]["forfeited"],
            "present": present.get(pid, False),
            "is_turn": rnd["turn"] == pid,
            "is_ender": rnd["ender"] == pid,
            "grid": grid_of(pid, False),
            "setup_left": rnd["setup_left"].get(pid, 0),
        }
        for pid in others
    ]
    face_down_left = playing and any(
        c["state"] == "down" for row in rnd["grids"][my_id] for c in row
    )
    result = None
    if rnd["result"] is not None:
        result = round_result(game, rnd["result"], names, my_id)
    votes = table.votes or {}
    my_seat_id = me.id if me is not None else None
    return {
        "phase": phase,
        "round_number": rnd["number"],
        "rules": game.rules,
        "playing": playing,
        "my_turn": my_turn,
        "mode": mode,
        "me": {
            "id": my_id,
            "name": names.get(my_id),
            "total": by_player[my_id]["total"] if my_id in by_player else None,
            "grid": grid_of(my_id, True) if playing or my_id in rnd["grids"] else None,
            "is_ender": rnd["ender"] == my_id,
        }
        if my_id in rnd["grids"]
        else None,
        "opponents": opponents,
        "draw_count": rnd["draw_count"],
        "discard_top": rnd["discard_top"],
        "discard_tone": card_tone(rnd["discard_top"]) if rnd["discard_top"] is not None else "",
        "drawn": drawn,
        "drawn_tone": card_tone(drawn) if drawn is not None else "",
        "someone_drew": rnd["has_drawn"] and not my_turn,
        "face_down_left": face_down_left,
        "setup_left": setup_left,
        "banner": banner(v, names, my_id, my_turn, setup_left, drawn, mode),
        "log": [line for line in (log_line(e, names) for e in rnd["log"][-12:]) if line][-6:][::-1],
        "result": result,
        "ranking": ranking(v, names, my_id) if v["ranking"] else None,
        "voted_next": my_seat_id in votes.get("next", []),
        "next_votes": len(votes.get("next", [])),
        "opted_rematch": my_seat_id in votes.get("rematch", []),
        "rematch_names": [s["name"] for s in seats if s["id"] in votes.get("rematch", [])],
        "show_totals": v["rules"]["show_running_score"] or phase == "game_over",
        "forfeited": my_id in game.forfeited if my_id else False,
    }


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


# ----- pushes --------------------------------------------------------------------------
def render_push(
    code: str, conns: list[Connection], what: str, snapshot=None
) -> tuple[int, list[tuple[Connection, str]]]:
    """The hub's renderer: each connection's own partials as out-of-band swaps. The
    table, its seats and its game are loaded once for all of them (or come from the
    `snapshot` (table, game) a change just saved)."""
    from flask import current_app

    from ..models import db

    if not conns:
        return -1, []
    with current_app.test_request_context(base_url=conns[0].base_url), db.connection_context():
        if snapshot is not None:
            table, game = snapshot
        else:
            table = Table.get_or_none(Table.code == code)
            if table is None:
                return -1, []
            game = games.load_game(table)
        seat_rows = games.seats_of(table)
        by_id = {s.id: s for s in seat_rows}
        lobby = what == "lobby" and table.status == Table.LOBBY
        template = "partials/_lobby_push.html" if lobby else "partials/_table.html"
        out = []
        for conn in conns:
            me = by_id.get(conn.seat_id) if conn.seat_id else None
            # Each player reads their own language (two at one table may differ).
            with force_locale(conn.locale):
                ctx = table_context(table, me, seat_rows=seat_rows, game=game)
                ctx["csrf"] = conn.csrf
                ctx["join_name"] = conn.name
                ctx["oob"] = True
                out.append((conn, render_template(template, **ctx)))
        return table.version, out

"""Turn a table and a player's view into what the templates show.

Templates only ever get a view (app.engine.view), never the engine state, so a
face-down value cannot reach a page or a socket message."""

from __future__ import annotations

from functools import lru_cache

import segno
from flask import render_template, url_for
from markupsafe import Markup, escape

from .. import games
from ..engine import RuleSet, view
from ..hub import Connection, hub
from ..models import Seat, Table

MODES = ("take", "flip")


def a(value) -> str:
    """'a 7', 'an 8', 'an 11': the article a card value takes when read aloud."""
    return f"an {value}" if value in (8, 11) else f"a {value}"


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
            "name": s.name,
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
        "bot_kinds": ["random", "greedy", "strong"],
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
    return segno.make(url, error="m").svg_inline(border=2, dark="#1b2a3a", omitsize=True)


def board(table: Table, game, me: Seat | None, seats: list[dict], mode: str | None) -> dict:
    my_id = me.player_id if me is not None else None
    v = view(game, my_id)
    rnd = v["round"]
    names = {p["id"]: p["name"] for p in v["players"]}
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
                where = f"Row {r + 1}, column {c + 1}"
                entry = {"row": r, "col": c, "state": cell["state"], "action": None}
                if cell["state"] == "up":
                    entry["value"] = cell["value"]
                    entry["tone"] = card_tone(cell["value"])
                    entry["label"] = f"{where}: {cell['value']}"
                elif cell["state"] == "down":
                    entry["label"] = f"{where}: face down"
                else:
                    entry["label"] = f"{where}: cleared"
                if mine and cell["state"] != "gone":
                    entry["action"] = cell_action(cell, entry, face_down_left)
                entry["html"] = card_html(entry)
                out.append(entry)
            rows.append(out)
        return rows

    def cell_action(cell, entry, face_down_left) -> dict | None:
        down = cell["state"] == "down"
        if phase == "setup" and setup_left > 0 and down:
            return {"type": "reveal", "verb": f"Turn over. {entry['label']}"}
        if not my_turn:
            return None
        if mode == "take":
            top = rnd["discard_top"]
            return {"type": "take_discard", "verb": f"Put the {top} here. {entry['label']}"}
        if drawn is not None and mode == "flip":
            if down:
                return {"type": "discard_drawn", "verb": f"Turn this card over. {entry['label']}"}
            return None
        if drawn is not None:
            return {"type": "keep_drawn", "verb": f"Put the {drawn} here. {entry['label']}"}
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
            plural = "s" if setup_left > 1 else ""
            return {"tone": "you", "text": f"Turn over {setup_left} card{plural} of your grid."}
        waiting = [names[p] for p, n in rnd["setup_left"].items() if n > 0]
        return {"tone": "wait", "text": f"Waiting for {', '.join(waiting)} to turn their cards."}
    if phase == "round_over":
        return {"tone": "wait", "text": f"Round {rnd['number']} is over."}
    if phase == "game_over":
        return {"tone": "wait", "text": "The game is over."}
    prefix = f"Last turn! {ender} ended the round. " if last else ""
    if my_turn:
        if drawn is not None and mode == "flip":
            text = f"Discard the {drawn}: tap a face-down card to turn it over."
        elif drawn is not None:
            text = f"You drew {a(drawn)}: tap a card to replace it, or discard it."
        elif mode == "take":
            text = f"Tap the card the {rnd['discard_top']} replaces."
        else:
            text = f"Your turn: draw a card or take the {rnd['discard_top']}."
        return {"tone": "last" if last else "you", "text": prefix + text}
    turn = names.get(rnd["turn"], "")
    doing = " is choosing where to put a drawn card." if rnd["has_drawn"] else " is playing."
    return {"tone": "last" if last else "wait", "text": prefix + turn + doing}


def log_line(event: dict, names: dict) -> str | None:
    who = names.get(event.get("player"), "")
    kind = event["type"]
    if kind == "take_discard":
        return f"{who} took the {event['value']} from the discard pile"
    if kind == "keep_drawn":
        return f"{who} drew and kept {a(event['value'])}"
    if kind == "discard_drawn":
        flip = event["flip"]
        if flip:
            return f"{who} discarded {a(event['value'])} and turned over {a(flip['value'])}"
        return f"{who} discarded {a(event['value'])}"
    if kind == "clear":
        value = event["value"]
        return f"{who}: {event['line'].capitalize()} of {value}s cleared"
    if kind == "ended":
        return f"{who} ended the round"
    if kind == "reshuffle":
        return "The discard pile was shuffled into a new draw pile"
    if kind == "forfeit":
        return f"{who} left the game"
    if kind == "reveal":
        return f"{who} turned over {a(event['value'])}"
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
        penalty_note = (
            f"{names[ender]} ended the round without the strictly lowest score: "
            f"{result['raw'][ender]} became {result['scores'][ender]} "
            f"({game.rules.penalty.describe()})."
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
            ctx = table_context(table, me, seat_rows=seat_rows, game=game)
            ctx["csrf"] = conn.csrf
            ctx["join_name"] = conn.name
            ctx["oob"] = True
            out.append((conn, render_template(template, **ctx)))
        return table.version, out

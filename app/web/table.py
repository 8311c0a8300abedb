"""The table at /t/<code>: lobby, game and results, and every action taken there.

Every action is a real form. With htmx the response is the #table partial (errors too,
with a 4xx status that htmx is configured to swap); without JavaScript a success
redirects back to the table (303) and an error renders the whole page."""

from __future__ import annotations

import json

from flask import Blueprint, Response, abort, redirect, render_template, request, session, url_for
from flask_babel import gettext as _
from htmx_flask import make_response as htmx_response

from .. import accounts, games
from ..engine import DiscardDrawn, Draw, KeepDrawn, Reveal, TakeDiscard
from ..engine.rules import BOUNDS
from ..hub import hub
from .auth import signed_in
from .lobby import remember_seat
from .render import table_context
from .security import csrf_token

bp = Blueprint("table", __name__, url_prefix="/t")


@bp.app_context_processor
def limits() -> dict:
    """Ranges and delays the table's text states, from where they are enforced (the
    rules' bounds, the lobby's timers, the server's settings), for pages and pushes."""
    return {
        "rule_bounds": {
            **BOUNDS,
            "grace_seconds": games.GRACE_RANGE,
            "rejoin_seconds": games.REJOIN_RANGE,
        },
        "next_round_seconds": f"{games.settings.next_round_seconds:g}",
    }


def current_seat(table):
    """By the seat token of this browser, or by the signed-in account (any device)."""
    token = session.get("seats", {}).get(table.code)
    seat = accounts.find_seat(table, token, signed_in())
    if seat is not None:
        hub.touch(table.code, seat.id)  # a request counts as presence (no-JS players)
    return seat


def render_table(code: str, *, status: int = 200, page: bool = False, **extra):
    try:
        table = games.get_table(code)
    except games.TableError as exc:
        return render_error(exc.message, exc.status)
    seat = current_seat(table)
    ctx = table_context(table, seat, **extra)
    ctx["csrf"] = csrf_token()
    user = signed_in()
    ctx["join_name"] = user.username if user else ""  # prefilled in the join form
    if page or not request.htmx:
        return render_template("pages/table.html", **ctx), status
    return render_template("partials/_table.html", **ctx), status


def render_error(message: str, status: int):
    return render_template("pages/error.html", message=message, status=status), status


def done(code: str, **extra):
    """After a successful action: the fresh partial for htmx, a redirect otherwise."""
    if request.htmx:
        return render_table(code, **extra)
    return redirect(url_for("table.show", code=code), 303)


def act(code: str, fn, *args, **kwargs):
    """Run a service call and answer it; bad input changes nothing and says why."""
    try:
        table = games.get_table(code)
    except games.TableError as exc:
        return render_error(exc.message, exc.status)
    seat = current_seat(table)
    try:
        fn(code, seat, *args, **kwargs)
    except games.Stale:
        notice = _("The table changed before your action arrived: here it is now.")
        return render_table(code, error=notice, status=409 if not request.htmx else 200)
    except games.TableError as exc:
        return render_table(
            code, error=exc.message, field=exc.field, status=exc.status, form=request.form
        )
    return done(code)


@bp.get("/<code>")
def show(code: str):
    mode = request.args.get("mode")
    return render_table(code.upper(), page=not request.htmx, mode=mode)


@bp.post("/<code>/join")
def join(code: str):
    code = code.upper()
    try:
        table = games.get_table(code)
    except games.TableError as exc:
        return render_error(exc.message, exc.status)
    if current_seat(table) is not None:
        return done(code)
    try:
        user = signed_in()
        seat = games.join(code, request.form.get("name", ""), user.id if user else None)
    except games.TableError as exc:
        return render_table(
            # Only name errors sit next to the name field (a full or started table
            # shows no join form: its message goes at the top).
            code,
            error=exc.message,
            field=exc.field,
            status=exc.status,
            form=request.form,
        )
    remember_seat(code, seat.token)
    session["name"] = seat.name
    if request.htmx:
        # The page's socket was opened before this browser had a seat: reload the page
        # so the socket reconnects as the player.
        return htmx_response("", 204, refresh=True)
    return done(code)


@bp.post("/<code>/rules")
def rules(code: str):
    return act(code.upper(), games.update_rules, request.form)


@bp.post("/<code>/bots")
def add_bot(code: str):
    return act(code.upper(), games.add_bot, request.form.get("bot", ""))


@bp.post("/<code>/seats/<seat_id>/remove")
def remove_seat(code: str, seat_id: str):
    return act(code.upper(), games.remove_seat, seat_id)


@bp.post("/<code>/start")
def start(code: str):
    return act(code.upper(), games.start, request.form.get("version"))


def parse_action(form):
    kind = form.get("type", "")
    try:
        if kind == "draw":
            return Draw()
        if form.get("pos"):  # one form per grid: the pressed card says "row-col"
            row, col = (int(part) for part in form["pos"].split("-", 1))
        else:
            row, col = int(form.get("row", "")), int(form.get("col", ""))
        if kind == "reveal":
            return Reveal(row, col)
        if kind == "take_discard":
            return TakeDiscard(row, col)
        if kind == "keep_drawn":
            return KeepDrawn(row, col)
        if kind == "discard_drawn":
            return DiscardDrawn((row, col))
    except (TypeError, ValueError):
        if kind == "discard_drawn" and not any(form.get(k) for k in ("row", "col", "pos")):
            return DiscardDrawn(None)
        raise games.TableError(_("That is not a position on your grid.")) from None
    raise games.TableError(_("That is not a move of this game."))


@bp.post("/<code>/move")
def move(code: str):
    code = code.upper()

    def play(code, seat, form):
        games.play(code, seat, parse_action(form), form.get("version"))

    return act(code, play, request.form)


@bp.post("/<code>/next-round")
def next_round(code: str):
    return act(code.upper(), games.vote_next_round, request.form.get("version"))


@bp.post("/<code>/leave")
def leave(code: str):
    return act(code.upper(), games.forfeit)


@bp.post("/<code>/rematch")
def rematch(code: str):
    return act(code.upper(), games.opt_rematch, request.form.get("version"))


@bp.post("/<code>/rematch/start")
def rematch_start(code: str):
    return act(code.upper(), games.start_rematch, request.form.get("version"))


@bp.get("/<code>/games/<int(max=1000000):number>/record.json")  # max: SQLite's ints
def record(code: str, number: int):
    code = code.upper()
    row = games.game_record(code, number)
    if row is None:
        abort(404)
    body = json.dumps(row.record, indent=1)
    return Response(
        body,
        mimetype="application/json",
        headers={"Content-Disposition": f'attachment; filename="skymo-{code}-{number}.json"'},
    )

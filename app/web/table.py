"""The table at /t/<code>: lobby, game and results, and every action taken there.

Every action is a real form. With htmx the response is the #table partial (errors too,
with a 4xx status that htmx is configured to swap); without JavaScript a success
redirects back to the table (303) and an error renders the whole page."""

from __future__ import annotations

import json
import secrets
import time

from flask import Blueprint, Response, abort, redirect, render_template, request, session, url_for
from flask_babel import get_locale
from flask_babel import gettext as _
from htmx_flask import make_response as htmx_response

from app import i18n, tables
from app.engine import DiscardDrawn, Draw, KeepDrawn, Reveal, TakeDiscard
from app.engine.rules import BOUNDS
from app.features import accounts
from app.tables import clock
from app.web import reactions, services
from app.web.auth import signed_in
from app.web.board import table_html
from app.web.lobby import remember_seat
from app.web.render import pushed_answer, table_context
from app.web.security import csrf_token

bp = Blueprint("table", __name__, url_prefix="/t")


@bp.app_context_processor
def limits() -> dict:
    """Ranges the table's text states, from where they are enforced (the rules' bounds,
    the lobby's timers), for pages and pushes."""
    return {
        "rule_bounds": {
            **BOUNDS,
            "grace_seconds": tables.GRACE_RANGE,
            "rejoin_seconds": tables.REJOIN_RANGE,
        },
        "turn_clocks": clock.choices(),
    }


def current_seat(table):
    """By the seat token of this browser, or by the signed-in account (any device):
    resolved once per request. `table` is the row or just its code."""
    code = table if isinstance(table, str) else table.code
    # Kept on the request (not on `g`: an app context can outlive one request).
    cache = request.environ.setdefault("skymo.seats", {})
    if code not in cache:
        token = session.get("seats", {}).get(code)
        seat = accounts.find_seat(code, token, signed_in())
        if seat is not None:
            services.presence().touch(code, seat.id)  # a request counts as presence (no-JS players)
        cache[code] = seat
    return cache[code]


def render_table(code: str, *, status: int = 200, page: bool = False, snap=None, **extra):
    """The table as this visitor sees it: from `snap` (the snapshot a change just
    committed) when given, else as stored now."""
    if snap is None:
        try:
            snap = tables.store.snapshot_of(tables.get_table(code))
        except tables.TableError as exc:
            return render_error(exc.message, exc.status)
    elif snap.table.status == snap.table.CLOSED:
        return render_error(_("There is no table with that code."), 404)
    seat = current_seat(snap.table)
    htmx = bool(request.htmx)
    if not page and not extra and htmx:
        html = pushed_answer(snap, seat, csrf_token(), str(get_locale()))
        if html is not None:
            return html, status
    # The catalog looked up once for the whole rendering (not at each of its phrases).
    with i18n.bound():
        ctx = table_context(snap, seat, **extra)
        ctx["csrf"] = csrf_token()
        user = signed_in()
        ctx["join_name"] = user.username if user else ""  # prefilled in the join form
        if htmx and not page and snap.table.status != snap.table.LOBBY:
            # The partial is only the section, rendered as a push renders it: the
            # `?mode=` links and stale answers skip the context processors.
            return table_html(ctx), status
        template = "pages/table.html" if page or not htmx else "partials/_table.html"
        # The page's id: its socket (`?p=`) and its htmx requests (a header) carry it,
        # so the push of a change the page's own request made skips that page's socket.
        ctx["page_id"] = secrets.token_urlsafe(8)
        return render_template(template, **ctx), status


def render_error(message: str, status: int):
    return render_template("pages/error.html", message=message, status=status), status


def done(code: str, snap=None, **extra):
    """After a successful action: the fresh partial for htmx (from the snapshot the
    action committed), a redirect otherwise."""
    if request.htmx:
        return render_table(code, snap=snap, **extra)
    return redirect(url_for("table.show", code=code), 303)


def act(code: str, fn, *args, **kwargs):
    """Run a service call and answer it; bad input changes nothing and says why. (A
    table that does not exist is the change step's TableError: 404.)"""
    seat = current_seat(code)
    try:
        snap = fn(code, seat, *args, **kwargs)
    except tables.Stale:
        notice = _("The table changed before your action arrived: here it is now.")
        return render_table(code, error=notice, status=409 if not request.htmx else 200)
    except tables.TableError as exc:
        return render_table(
            code, error=exc.message, field=exc.field, status=exc.status, form=request.form
        )
    return done(code, snap)


@bp.get("/<code>")
def show(code: str):
    mode = request.args.get("mode")
    return render_table(code.upper(), page=not request.htmx, mode=mode)


@bp.post("/<code>/join")
def join(code: str):
    code = code.upper()
    try:
        table = tables.get_table(code)
    except tables.TableError as exc:
        return render_error(exc.message, exc.status)
    if current_seat(table) is not None:
        return done(code)
    try:
        user = signed_in()
        seat = tables.join(code, request.form.get("name", ""), user.id if user else None)
    except tables.TableError as exc:
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
    return act(code.upper(), tables.update_rules, request.form)


@bp.post("/<code>/bots")
def add_bot(code: str):
    return act(code.upper(), tables.add_bot, request.form.get("bot", ""))


@bp.post("/<code>/seats/<seat_id>/remove")
def remove_seat(code: str, seat_id: str):
    return act(code.upper(), tables.remove_seat, seat_id)


@bp.post("/<code>/start")
def start(code: str):
    return act(code.upper(), start_with_rules, request.form)


def start_with_rules(code: str, seat, form):
    """The Start button sends the rules form as it stands: those rules are saved first
    (a bad value stops the start, its message next to its field), then the game starts."""
    version = form.get("version")
    if "end_score" in form:
        if str(tables.get_table(code).version) != str(version):
            raise tables.Stale()
        version = tables.update_rules(code, seat, form).version
    return tables.start(code, seat, version)


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
        raise tables.TableError(_("That is not a position on your grid.")) from None
    raise tables.TableError(_("That is not a move of this game."))


@bp.post("/<code>/move")
def move(code: str):
    code = code.upper()

    def play(code, seat, form):
        return tables.play(code, seat, parse_action(form), form.get("version"))

    return act(code, play, request.form)


@bp.post("/<code>/next-round")
def next_round(code: str):
    return act(code.upper(), tables.vote_next_round, request.form.get("version"))


@bp.post("/<code>/leave")
def leave(code: str):
    return act(code.upper(), tables.forfeit)


@bp.post("/<code>/start-now")
def start_now(code: str):
    """A Play now table's host starts without waiting: bots take the empty seats."""
    return act(code.upper(), tables.start_now)


@bp.post("/<code>/back")
def back(code: str):
    """ "I'm back": after the turn clock ran out too often, the player plays again."""
    return act(code.upper(), tables.come_back)


@bp.post("/<code>/rematch")
def rematch(code: str):
    return act(code.upper(), tables.opt_rematch, request.form.get("version"))


@bp.post("/<code>/rematch/start")
def rematch_start(code: str):
    return act(code.upper(), tables.start_rematch, request.form.get("version"))


@bp.get("/<code>/games/<int(max=1000000):number>/record.json")  # max: SQLite's ints
def record(code: str, number: int):
    code = code.upper()
    row = tables.game_record(code, number)
    if row is None:
        abort(404)
    body = json.dumps(row.record, indent=1)
    return Response(
        body,
        mimetype="application/json",
        headers={"Content-Disposition": f'attachment; filename="skymo-{code}-{number}.json"'},
    )


@bp.post("/<code>/react")
def react(code: str):
    code = code.upper()
    try:
        table = tables.get_table(code)
    except tables.TableError as exc:
        return Response(exc.message, status=exc.status)
    seat = current_seat(table)
    key = request.form.get("reaction", "")
    if seat is None or table.status != table.PLAYING:
        return render_table(code, error=_("Only players in a game can react."), status=403)
    if key not in reactions.CHOICES:
        return render_table(code, error=_("Choose one of the reactions."), status=400)
    now = time.time()
    if reactions.allowed(code, seat.id, now):
        # Through the hub: with several processes, each shows it to its own sockets.
        services.publisher().broadcast(
            code, "reaction", {"player": seat.player_id, "key": key, "at": now}
        )
    elif not request.htmx:
        return render_table(code, error=_("One reaction at a time, please."), status=429)
    if request.htmx:
        return Response(status=204)  # the socket shows it (a refused one: nothing)
    return redirect(url_for("table.show", code=code), 303)

"""The table chat on the page: its panel, its three forms (say, mute, report) and its
pushes (app.features.chat decides what is allowed).

A message travels as an event through the publisher, as reactions do (every process
shows it to its own sockets), and reaches each socket as one out-of-band fragment
appended to #chat-log, in the socket's language, unless that viewer muted the sender:
the #table section is not rendered again, so nobody's half-made move is reset. Mutes
are kept in the Flask session per table (pages without JavaScript honour them) and
copied onto the viewer's sockets (`Connection.muted`)."""

from __future__ import annotations

import secrets

from flask import (
    Blueprint,
    Response,
    current_app,
    g,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_babel import gettext as _

from app import i18n, tables
from app.features import chat
from app.storage import chat as chat_rows
from app.storage.chat import Line
from app.storage.table_store import seats_of
from app.web import services
from app.web.auth import signed_in
from app.web.render import token_digest
from app.web.security import csrf_token
from app.web.table import current_seat, render_error, render_table

bp = Blueprint("chat", __name__, url_prefix="/t")

MUTED = "chat_muted"  # session: table code -> seat ids this viewer muted
MUTED_TABLES = 20  # tables whose mutes a session keeps (the oldest go first)
COLOURS = 8  # seat colour classes: seat-c0 .. seat-c7, by seat order


# ----- mutes, kept in the session ------------------------------------------------------
def muted_here(code: str) -> frozenset[int]:
    return frozenset(session.get(MUTED, {}).get(code, ()))


def _set_muted(code: str, muted: set[int]) -> None:
    kept = {k: v for k, v in session.get(MUTED, {}).items() if k != code}
    if muted:
        kept[code] = sorted(muted)
    session[MUTED] = dict(list(kept.items())[-MUTED_TABLES:])


# ----- the panel ----------------------------------------------------------------------
def line_view(line: Line, viewer_seat: int | None, reported: set[int]) -> dict:
    """What a message's line shows to one viewer, in the current language."""
    return {
        "id": line.id,
        "name": chat.sender(line),
        "colour": line.position % COLOURS,
        "words": chat.shown(line),
        "phrase": line.phrase is not None,
        "mine": line.seat_id == viewer_seat,
        "reported": line.id in reported,
    }


def mutable(seats, viewer: int | None, muted) -> list[dict]:
    """The people this viewer may mute (not bots, not themselves), in seat order."""
    return [
        {"id": s.id, "name": i18n.person(s.name), "muted": s.id in muted}
        for s in seats
        if s.bot is None and s.id != viewer
    ]


def reporter(seat) -> tuple[str, int | None]:
    """Who reports: their seat, else their account, else their session (a spectator)."""
    user = signed_in()
    user_id = user.id if user else None
    if seat is not None:
        return f"s{seat.id}", user_id
    if user is not None:
        return f"u{user.id}", user_id
    if "visitor" not in session:
        session["visitor"] = secrets.token_urlsafe(12)
    return f"v{session['visitor']}", None


def panel(table, me) -> dict:
    """The chat panel's content for this viewer (a Jinja global: the table page)."""
    said = g.get("chat_said") or {}
    code = table.code
    on = chat_rows.chat_open(table)
    muted = muted_here(code)
    viewer = me.id if me is not None else None
    lines, people = [], []
    if on:
        who = reporter(me)[0] if me is not None or signed_in() or "visitor" in session else ""
        reported = chat_rows.reported_by(code, who) if who else set()
        lines = [
            line_view(line, viewer, reported)
            for line in chat_rows.lines(code)
            if line.seat_id not in muted
        ]
        people = mutable(seats_of(code), viewer, muted)
    return {
        "on": on,
        "can_post": on and me is not None,
        "lines": lines,
        "people": people,
        "phrases": [(key, str(label)) for key, label in chat.PHRASES.items()],
        "error": said.get("error"),
        "field": said.get("field"),
        "text": said.get("text", ""),
        "open": bool(said) or request.args.get("chat") == "1",
        "max": chat.MESSAGE_MAX,
    }


# ----- the forms ----------------------------------------------------------------------
def back(code: str):
    """Without JavaScript: the table again, the chat unfolded."""
    return redirect(url_for("table.show", code=code, chat=1, _anchor="chat"), 303)


def refused(code: str, exc: tables.TableError, text: str = ""):
    g.chat_said = {"error": exc.message, "field": exc.field or "text", "text": text}
    if request.htmx:
        return compose(code, exc.status)
    return render_table(code, status=exc.status, page=True)


def compose(code: str, status: int = 200):
    """The writing part of the panel (the htmx answer to a message)."""
    table = tables.get_table(code)
    ctx = {"chat": panel(table, current_seat(table)), "code": code, "csrf": csrf_token()}
    return render_template("partials/_chat_compose.html", **ctx), status


@bp.errorhandler(tables.TableError)
def no_table(exc: tables.TableError):
    """A table that does not exist or has closed: the error page the table's views show."""
    return render_error(exc.message, exc.status)


@bp.post("/<code>/chat")
def say(code: str):
    code = code.upper()
    table = tables.get_table(code)  # refused by `no_table` when there is none
    text = request.form.get("text", "")
    try:
        line = chat.post(table, current_seat(table), text, request.form.get("phrase"))
    except tables.TableError as exc:
        return refused(code, exc, text)
    # Through the publisher: with several processes, each shows it to its own sockets.
    services.publisher().broadcast(code, "chat", line.to_dict())
    return compose(code) if request.htmx else back(code)


@bp.post("/<code>/chat/mute")
def mute(code: str):
    """Mute or unmute a player (the button pressed says which), for this viewer only."""
    code = code.upper()
    table = tables.get_table(code)  # refused by `no_table` when there is none
    seats = {str(s.id): s for s in seats_of(code) if s.bot is None}
    muting = "mute" in request.form  # the button pressed: mute=<seat> or unmute=<seat>
    target = seats.get(request.form.get("mute" if muting else "unmute", ""))
    if target is None:
        g.chat_said = {"error": _("That player is not at this table."), "field": "mute"}
        if request.htmx:
            return whole(table, 404)
        return render_table(code, status=404, page=True)
    muted = set(muted_here(code))
    if muting:
        muted.add(target.id)
    else:
        muted.discard(target.id)
    _set_muted(code, muted)
    # This viewer's sockets (any process) hide the player's next messages too.
    services.publisher().broadcast(
        code, "chat-mute", {"token": token_digest(csrf_token()), "muted": sorted(muted)}
    )
    return whole(table) if request.htmx else back(code)


def whole(table, status: int = 200):
    ctx = {
        "chat": panel(table, current_seat(table)) | {"open": True},
        "code": table.code,
        "csrf": csrf_token(),
    }
    return render_template("partials/_chat.html", **ctx), status


@bp.post("/<code>/chat/<message>/report")
def report(code: str, message: str):
    code = code.upper()
    table = tables.get_table(code)  # refused by `no_table` when there is none
    if not chat_rows.chat_open(table):
        return render_error(_("The host has turned the chat off at this table."), 403)
    who, user_id = reporter(current_seat(table))
    try:
        chat.report(code, message, who, user_id)
    except tables.TableError as exc:
        if request.htmx:
            return Response(exc.message, status=exc.status)
        return render_error(exc.message, exc.status)
    if request.htmx:
        return render_template("partials/_chat_reported.html")
    return back(code)


# ----- pushes -------------------------------------------------------------------------
def show(code: str, data) -> None:
    """A new message (from this process or another), appended to the chat of every
    socket at the table whose viewer has not muted its sender."""
    try:
        line = Line(**data)
    except TypeError:
        return
    conns = [c for c in services.hub().connections(code) if line.seat_id not in c.muted]
    if not conns:
        return
    template = current_app.jinja_env.get_template("partials/_chat_push.html")
    seats = seats_of(code)
    made: dict[tuple, str] = {}
    for conn in conns:
        key = (conn.locale, conn.csrf, conn.seat_id, conn.muted)
        if key not in made:
            with i18n.speaking(conn.locale):
                ctx = {
                    "m": line_view(line, conn.seat_id, set()),
                    "people": mutable(seats, conn.seat_id, conn.muted),
                    "code": code,
                    "csrf": conn.csrf,
                }
                made[key] = template.render(ctx)
        # In the socket's own queue, after the table it last got (never reordered).
        conn.offer(made[key], conn.sent_version, part=True)


def muted_sockets(code: str, data) -> None:
    """A viewer muted or unmuted someone: their sockets at the table hide accordingly."""
    if not isinstance(data, dict) or not isinstance(data.get("muted"), list):
        return
    muted = frozenset(i for i in data["muted"] if isinstance(i, int))
    for conn in services.hub().connections(code):
        if token_digest(conn.csrf) == data.get("token"):
            conn.muted = muted


def init_app(app) -> None:
    app.register_blueprint(bp)
    hub = app.extensions[services.SERVICES].hub
    hub.on_event("chat", show)
    hub.on_event("chat-mute", muted_sockets)
    app.jinja_env.globals.update(chat_panel=panel)

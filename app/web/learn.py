"""The lesson at /learn: its page, starting one, skipping it, and the tables that follow
it ("Play a real game", "Invite friends"). The lesson itself is played at a real table
(app.web.table), its hints on the board (app.features.lesson).

Once a device has started or skipped the lesson (a cookie), the home page no longer
offers it first; /learn still starts one whenever asked."""

from __future__ import annotations

from contextlib import suppress

from flask import Blueprint, redirect, render_template, request, session, url_for

from app import tables
from app.tables import lesson
from app.web.auth import signed_in
from app.web.lobby import seated
from app.web.security import csrf_token, remember_on_device
from app.web.table import current_seat

bp = Blueprint("learn", __name__, url_prefix="/learn")

COOKIE = "skymo-learned"  # this device has started or skipped the lesson


def learned() -> bool:
    """Whether this device has started or skipped the lesson."""
    return request.cookies.get(COOKIE) == "1"


@bp.app_context_processor
def lesson_offer() -> dict:
    """`learned()` for the pages that offer the lesson to a device new to it."""
    return {"learned": learned}


def remember(response):
    return remember_on_device(response, COOKIE, "1")


def user_id() -> int | None:
    user = signed_in()
    return user.id if user else None


@bp.get("")
def intro(name: str | None = None, error: str | None = None, status: int = 200):
    user = signed_in()
    if name is None:
        name = user.username if user else session.get("name", "")
    page = render_template("pages/learn.html", name=name, error=error, csrf=csrf_token())
    return page, status


@bp.post("")
def start():
    name = request.form.get("name", "")
    try:
        table, seat = lesson.start_lesson(name, user_id())
    except tables.TableError as exc:
        return intro(name, exc.message, 400)
    return remember(seated(table.code, seat))


@bp.post("/skip")
def skip():
    """No lesson for now: a lesson being played ends (the learner leaves its game)."""
    seat, table = lesson_seat()
    if seat is not None and table.status == table.PLAYING:
        with suppress(tables.TableError):  # its game ended meanwhile: nothing to leave
            tables.forfeit(table.code, seat)
    return remember(redirect(url_for("lobby.home"), 303))


@bp.post("/real-game")
def real_game():
    return after_lesson(lesson.start_real_game)


@bp.post("/invite")
def invite():
    return after_lesson(tables.create_table)


def after_lesson(open_table):
    """A new table for the learner, under the name they played the lesson with."""
    seat, _table = lesson_seat()
    name = seat.name if seat is not None else session.get("name", "")
    try:
        table, new_seat = open_table(name, user_id=user_id())
    except tables.TableError:
        return redirect(url_for("lobby.home"), 303)  # no name yet: the home page asks
    return seated(table.code, new_seat)


def lesson_seat():
    """(this browser's seat, its table) at the lesson table the form names, else
    (None, None)."""
    code = request.form.get("code", "").upper()
    if not code.isalnum():
        return None, None
    try:
        table = tables.get_table(code)
    except tables.TableError:
        return None, None
    seat = current_seat(table)
    if seat is None or not table.lesson:
        return None, None
    return seat, table

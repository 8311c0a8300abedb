"""Home page, creating a table, joining by code, the rules page."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from flask import Blueprint, redirect, render_template, request, session, url_for
from markdown_it import MarkdownIt
from markupsafe import Markup

from app import tables
from app.i18n import current
from app.web.auth import signed_in
from app.web.security import csrf_token

bp = Blueprint("lobby", __name__)


def remember_seat(code: str, token: str) -> None:
    seats = dict(session.get("seats", {}))
    seats[code] = token
    session["seats"] = seats
    session["name"] = session.get("name") or ""
    session.permanent = True


@bp.get("/")
def home():
    return render_template(
        "pages/home.html",
        tables=tables.public_tables(),
        name=signed_in_name() or session.get("name", ""),
        csrf=csrf_token(),
    )


def signed_in_name() -> str:
    user = signed_in()
    return user.username if user else ""


@bp.get("/public")
def public_list():
    return render_template("partials/_public_tables.html", tables=tables.public_tables())


@bp.post("/tables")
def create():
    name = request.form.get("name", "")
    public = request.form.get("public") == "on"
    try:
        user = signed_in()
        table, seat = tables.create_table(name, public=public, user_id=user.id if user else None)
    except tables.TableError as exc:
        return home_refused(name, exc.message, 400)
    return seated(table.code, seat)


def home_refused(name: str, message: str, status: int):
    """The home page again, with the name as typed and why it was refused."""
    page = render_template(
        "pages/home.html",
        tables=tables.public_tables(),
        name=name,
        error=message,
        csrf=csrf_token(),
    )
    return page, status


def seated(code: str, seat):
    """This browser's new seat, remembered, and its table."""
    remember_seat(code, seat.token)
    session["name"] = seat.name
    return redirect(url_for("table.show", code=code), 303)


@bp.post("/play")
def play_now():
    """Play now: a seat at a public table waiting for players, or a new one."""
    name = request.form.get("name", "")
    mine = waiting_seat()
    if mine is not None:  # pressed again, or in another tab: the same table
        return redirect(url_for("table.show", code=mine), 303)
    try:
        user = signed_in()
        code, seat = tables.play_now(name, user_id=user.id if user else None)
    except tables.TableError as exc:
        return home_refused(name, exc.message, exc.status)
    return seated(code, seat)


def waiting_seat() -> str | None:
    """The code of a Play now table in its lobby where this browser already sits."""
    codes = list(session.get("seats", {}))
    for table in tables.lobbies(codes):  # one query, however many seats the session has
        if tables.starts_at(table) is not None:
            return table.code
    return None


@bp.get("/join")
def join_by_code():
    code = "".join(ch for ch in request.args.get("code", "").upper() if ch.isalnum())
    if not code:
        return redirect(url_for("lobby.home"), 303)
    try:
        tables.get_table(code)
    except tables.TableError as exc:
        return (
            render_template(
                "pages/home.html",
                tables=tables.public_tables(),
                name=session.get("name", ""),
                code_error=exc.message,
                csrf=csrf_token(),
            ),
            404,
        )
    return redirect(url_for("table.show", code=code), 303)


DOCS = Path(__file__).resolve().parents[2] / "docs"


@cache
def rules_html(lang: str) -> Markup:
    """docs/rules.<lang>.md (lang a tag: rules.pt-BR.md) when that translation exists,
    else docs/rules.md, as HTML.
    The rules are long prose, so they are translated as whole documents, not strings."""
    path = DOCS / f"rules.{lang}.md"
    if not path.is_file():
        path = DOCS / "rules.md"
    # The file is ours (no user input), but raw HTML stays off all the same.
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    return Markup(md.render(path.read_text(encoding="utf-8")))


@bp.get("/rules")
def rules():
    return render_template("pages/rules.html", rules=rules_html(current()))

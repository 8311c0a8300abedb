"""Score sheets for games played with real cards (app.features.scoresheet), at /score.

Plain forms that work without JavaScript; htmx swaps the #sheet partial (errors too,
with a 4xx status), and static/score.js queues rounds typed offline. Others follow a
sheet read-only at its link, pushed by a socket like the tables."""

from __future__ import annotations

import secrets
import uuid

from flask import (
    Blueprint,
    abort,
    current_app,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_babel import force_locale, get_locale
from flask_babel import gettext as _

from app.engine import Penalty
from app.engine.rules import MAX_PLAYERS
from app.features import scoresheet
from app.live.hub import Connection, Hub
from app.storage.models import ScoreSheet, db
from app.web import sock
from app.web.auth import signed_in
from app.web.render import qr_svg
from app.web.security import csrf_token
from app.web.ws import origin_ok, serve

bp = Blueprint("score", __name__, url_prefix="/score")
SHEETS = "skymo.sheets"  # app.extensions key of the sheets' own hub


def sheets() -> Hub:
    """The sheets' own hub: sheets are keyed by their code, viewers only receive."""
    return current_app.extensions[SHEETS]


def device() -> str:
    """This browser's token: the sheets it started are its own."""
    token = session.get("device")
    if not token:
        token = session["device"] = secrets.token_urlsafe(24)
        session.permanent = True
    return token


def user_id() -> int | None:
    user = signed_in()
    return user.id if user else None


def sheet_or_404(code: str) -> ScoreSheet:
    sheet = scoresheet.get_sheet(code)
    if sheet is None:
        abort(404)
    return sheet


def owner_sheet(code: str) -> ScoreSheet:
    sheet = sheet_or_404(code)
    if not scoresheet.can_edit(sheet, session.get("device"), user_id()):
        abort(403)
    return sheet


def penalty_text(sheet: ScoreSheet) -> str:
    penalty = scoresheet.penalty_of(sheet)
    if penalty is None:
        return _("no penalty")
    if penalty.mode == "multiplier":
        return _("×%(m)d", m=penalty.multiplier)
    if penalty.mode == "flat":
        return _("+%(f)d points", f=penalty.flat)
    return _("×%(m)d then +%(f)d points", m=penalty.multiplier, f=penalty.flat)


def sheet_context(sheet: ScoreSheet, *, editable: bool, errors=None, form=None) -> dict:
    result = scoresheet.sheet_tally(sheet)
    names = sheet.players
    notes = {}
    for rnd in result.rounds:
        if rnd["penalised"]:
            e = rnd["ender"]
            notes[rnd["number"]] = _(
                "%(name)s ended round %(n)d without the strictly lowest score: "
                "%(raw)d became %(score)d (%(rule)s).",
                name=names[e],
                n=rnd["number"],
                raw=rnd["raw"][e],
                score=rnd["scores"][e],
                rule=penalty_text(sheet),
            )
    share = url_for("score.show", code=sheet.code, _external=True)
    return {
        "sheet": sheet,
        "names": names,
        "t": result,
        "winner_names": [names[i] for i in result.winners],
        "notes": notes,
        "editable": editable,
        "errors": errors or {},
        "form": form or {},
        "round_id": uuid.uuid4().hex,
        "penalty_text": penalty_text(sheet),
        "share_url": share,
        "qr": qr_svg(share),
        "round_min": scoresheet.ROUND_MIN,
        "round_max": scoresheet.ROUND_MAX,
        # Only the owner's page has forms. A push renders for viewers inside whatever
        # request made the change (sharing its `g`): it must not mint a token there.
        "csrf": csrf_token() if editable else "",
    }


def render_sheet(sheet: ScoreSheet, *, status: int = 200, **extra):
    editable = scoresheet.can_edit(sheet, session.get("device"), user_id())
    ctx = sheet_context(sheet, editable=editable, **extra)
    if request.htmx:
        return render_template("partials/_score_sheet.html", **ctx), status
    return render_template("pages/score.html", **ctx), status


def changed(sheet: ScoreSheet):
    """After a change: push it to the viewers, then the partial or a redirect."""
    sheets().publish(sheet.code)
    if request.htmx:
        return render_sheet(scoresheet.get_sheet(sheet.code))
    return redirect(url_for("score.show", code=sheet.code), 303)


# ----- pages --------------------------------------------------------------------------
def list_context(**extra) -> dict:
    sheets = scoresheet.sheets_for(session.get("device"), user_id())
    last = sheets[0] if sheets else None
    return {
        "sheets": sheets,
        "recent": scoresheet.recent_names(sheets),
        "last_players": last.players if last else [],
        "max_players": MAX_PLAYERS,
        "errors": {},
        "form": {},
        "defaults": Penalty(),
        "csrf": csrf_token(),
        **extra,
    }


@bp.get("")
def index():
    return render_template("pages/score_list.html", **list_context())


@bp.post("")
def create():
    try:
        sheet = scoresheet.create_sheet(request.form, device(), user_id())
    except scoresheet.SheetError as exc:
        ctx = list_context(errors=exc.errors, form=request.form)
        return render_template("pages/score_list.html", **ctx), exc.status
    return redirect(url_for("score.show", code=sheet.code), 303)


@bp.get("/<code>")
def show(code: str):
    return render_sheet(sheet_or_404(code))


@bp.post("/<code>/rounds")
def add_round(code: str):
    sheet = owner_sheet(code)
    try:
        scoresheet.add_round(sheet, request.form)
    except scoresheet.SheetError as exc:
        return render_sheet(sheet, status=exc.status, errors=exc.errors, form=request.form)
    return changed(sheet)


@bp.route("/<code>/rounds/<int(max=100000):number>", methods=["GET", "POST"])
def correct(code: str, number: int):
    sheet = owner_sheet(code)
    rounds = scoresheet.live_rounds(sheet)
    if not 1 <= number <= len(rounds):
        abort(404)
    rnd = rounds[number - 1]
    form = {f"score-{i + 1}": str(v) for i, v in enumerate(rnd.raw)}
    form["ender"] = "none" if rnd.ender is None else str(rnd.ender + 1)
    errors = {}
    if request.method == "POST":
        try:
            scoresheet.correct_round(sheet, number, request.form)
        except scoresheet.SheetError as exc:
            errors, form = exc.errors, request.form
        else:
            sheets().publish(sheet.code)
            return redirect(url_for("score.show", code=sheet.code), 303)
    ctx = sheet_context(sheet, editable=True, errors=errors, form=form)
    ctx["number"] = number
    return render_template("pages/score_round.html", **ctx), 400 if errors else 200


@bp.post("/<code>/undo")
def undo(code: str):
    sheet = owner_sheet(code)
    try:
        number = int(request.form.get("round", ""))
    except ValueError:
        number = -1
    try:
        scoresheet.undo_round(sheet, number)
    except scoresheet.SheetError as exc:
        return render_sheet(sheet, status=exc.status, errors=exc.errors)
    return changed(sheet)


# ----- live viewers -------------------------------------------------------------------
def render_viewers(code: str, conns: list[Connection], what: str, snapshot=None):
    """The hub's renderer: the read-only sheet, once for every viewer."""
    if not conns:
        return -1, []
    with current_app.test_request_context(base_url=conns[0].base_url), db.connection_context():
        sheet = scoresheet.get_sheet(code)
        if sheet is None:
            return -1, []
        html = {}  # once per language the viewers read
        for locale in {conn.locale for conn in conns}:
            with force_locale(locale):
                ctx = sheet_context(sheet, editable=False)
                html[locale] = render_template("partials/_score_sheet.html", oob=True, **ctx)
        return sheet.version, [(conn, html[conn.locale]) for conn in conns]


def init_app(app) -> None:
    app.extensions[SHEETS] = Hub(renderer=render_viewers)
    app.register_blueprint(bp)

    @sock.route("/score/<code>/ws")
    def sheet_socket(ws, code):
        if not origin_ok() or scoresheet.get_sheet(code) is None:
            ws.close(reason=1008, message="No such sheet")
            return
        conn = Connection(
            code=code.upper(),
            seat_id=None,
            csrf="",
            send=ws.send,
            base_url=request.host_url,
            locale=str(get_locale()),
            queued=True,
            close=ws.close,
        )
        serve(ws, conn, "sheet", to=sheets())

"""Replays (app.features.replays): a finished game of a table at /t/<code>/games/<n>/replay, and
any `skymo.game/1` file opened at /replay (checked by replaying it, never stored).

Stepping through a stored game uses links (?step=k); an uploaded file travels back with
each step in the one form of the page, whose buttons carry the step to show. With htmx
only #replay is swapped; static/replay.js adds the arrow keys."""

from __future__ import annotations

from flask import Blueprint, abort, render_template, request
from werkzeug.exceptions import RequestEntityTooLarge

from app import tables
from app.features import replays
from app.features.outcome import card_tone
from app.web.security import csrf_token

bp = Blueprint("replay", __name__)


def step_arg(value) -> int:
    try:
        return min(max(0, int(value)), 1_000_000)
    except (TypeError, ValueError):
        return 0


def render(ctx: dict, status: int = 200):
    ctx.setdefault("csrf", csrf_token())
    ctx["card_tone"] = card_tone
    if request.htmx and ctx.get("replay") is not None:
        return render_template("partials/_replay.html", **ctx), status
    return render_template("pages/replay.html", **ctx), status


@bp.get("/t/<code>/games/<int(max=1000000):number>/replay")
def game(code: str, number: int):
    code = code.upper()
    stored = tables.game_record(code, number)
    if stored is None:
        abort(404)
    try:
        shown = replays.replay_at(stored.record, step_arg(request.args.get("step")))
    except replays.ReplayError:
        abort(500)  # a record the server wrote always replays (tests hold it to that)
    return render({"replay": shown, "code": code, "number": number, "upload": None})


@bp.get("/replay")
def upload_form():
    return render({"replay": None, "upload": None})


@bp.post("/replay")
def upload():
    try:
        file = request.files.get("record")
        data = file.read(replays.MAX_BYTES + 1) if file else None
        packed = request.form.get("packed")
        step = step_arg(request.form.get("step"))
    except RequestEntityTooLarge:
        return render({"replay": None, "upload": None, "error": replays.too_large()}, 413)
    try:
        if data is None:
            data = replays.unpack(packed) if packed else b""
        record = replays.parse_upload(data)
        shown = replays.replay_at(record, step)
    except replays.ReplayError as exc:
        return render({"replay": None, "upload": None, "error": exc.message}, exc.status)
    return render({"replay": shown, "upload": replays.pack(record), "code": None, "number": None})


def _allow_big_upload():
    """Before every other check (the CSRF one reads the form): an upload may be bigger
    than the game's forms, and one too large gets the replay page's own message."""
    if request.endpoint != "replay.upload":
        return None
    limit = replays.MAX_BYTES + 64 * 1024  # the file, the CSRF token, multipart framing
    request.max_content_length = limit
    request.max_form_memory_size = limit
    if (request.content_length or 0) > limit:
        return render({"replay": None, "upload": None, "error": replays.too_large()}, 413)
    return None


def init_app(app) -> None:
    app.register_blueprint(bp)
    app.before_request_funcs.setdefault(None, []).insert(0, _allow_big_upload)

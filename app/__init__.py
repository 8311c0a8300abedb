"""Skymo: the web app factory (Flask's tutorial style)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from flask import Flask
from htmx_flask import Htmx

from app import i18n, settings, wiring
from app.storage import models
from app.web import (
    alerts,
    assets,
    auth,
    chat,
    extras,
    learn,
    lobby,
    pwa,
    reactions,
    render,
    replay,
    score,
    security,
    sock,
    table,
    theme,
    ws,
)
from app.web import stats as stats_pages

htmx = Htmx()  # request.htmx: the HX-* request headers, read by the library


def _secret_key(instance: Path) -> str:
    """From SKYMO_SECRET_KEY, else generated once and kept in the instance folder."""
    key = os.environ.get("SKYMO_SECRET_KEY")
    if key:
        return key
    path = instance / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_hex(32))
        path.chmod(0o600)
    return path.read_text().strip()


def create_app(config: dict | None = None) -> Flask:
    settings.check()  # a wrong setup stops here with a clear message, before serving
    root = Path(__file__).resolve().parent.parent
    app = Flask(
        __name__,
        instance_path=os.environ.get("SKYMO_INSTANCE_PATH", str(root / "instance")),
        template_folder=str(root / "templates"),
        static_folder=None,  # served by app.web.assets (our scripts and styles minified)
    )
    app.config["STATIC_FOLDER"] = str(root / "static")
    instance = Path(app.instance_path)
    instance.mkdir(parents=True, exist_ok=True)
    app.config.update(
        DATABASE_URL=os.environ.get("SKYMO_DATABASE_URL", f"sqlite:///{instance / 'skymo.db'}"),
        BOT_DELAY=float(os.environ.get("SKYMO_BOT_DELAY", "0.8")),
        NEXT_ROUND_SECONDS=float(os.environ.get("SKYMO_NEXT_ROUND_SECONDS", "20")),
        # The turn clock's choices (app.tables.clock): tests add a short one.
        TURN_CLOCK_CHOICES=tuple(
            int(s) for s in os.environ.get("SKYMO_TURN_CLOCKS", "30,60,90,120").split(",")
        ),
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        # The cookie is re-sent only when the session changes (a seat, a sign-in), not
        # re-signed on every request; it lasts 30 days from then.
        SESSION_REFRESH_EACH_REQUEST=False,
        SESSION_COOKIE_SECURE=os.environ.get("SKYMO_SECURE_COOKIES", "") == "1",
        PERMANENT_SESSION_LIFETIME=60 * 60 * 24 * 30,
        # A socket that stops answering pings is closed within two intervals (8 s), and
        # a page hears something at least every SOCKET_HEARTBEAT seconds (app.web.ws):
        # both ends notice a silently dead connection within 10 s.
        SOCK_SERVER_OPTIONS={"ping_interval": 4, "max_message_size": 4096},
        SOCKET_HEARTBEAT=4.0,
        SEND_FILE_MAX_AGE_DEFAULT=60 * 60 * 24 * 365,
        # Every form is a few hundred bytes: a bigger body gets 413 before it is read.
        MAX_CONTENT_LENGTH=64 * 1024,
        INLINE_BOTS=False,
        # Multi-process mode (README): pushes and presence through Redis.
        REDIS_URL=os.environ.get("SKYMO_REDIS_URL") or None,
        REDIS_PREFIX=os.environ.get("SKYMO_REDIS_PREFIX", "skymo:"),
        DB_POOL_SIZE=int(os.environ.get("SKYMO_DB_POOL", "32")),
        DB_POOL_WAIT=float(os.environ.get("SKYMO_DB_WAIT", "30")),  # seconds, then 503
        # Web Push (turn alerts): the VAPID key, else made once into the instance folder.
        VAPID_PRIVATE_KEY=os.environ.get("SKYMO_VAPID_PRIVATE_KEY") or None,
        VAPID_SUBJECT=os.environ.get("SKYMO_VAPID_SUBJECT") or None,
        # Tests only: a push service double on http://127.0.0.1 (app.web.alerts).
        ALERTS_LOOPBACK_HTTP=os.environ.get("SKYMO_ALERTS_LOOPBACK_HTTP") == "1",
    )
    if config:
        app.config.update(config)
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = _secret_key(instance)

    i18n.init_app(app)
    models.init_app(app)
    wiring.build(app)
    sock.init_app(app)

    security.init_app(app)
    assets.init_app(app)
    htmx.init_app(app)
    auth.init_app(app)
    app.register_blueprint(lobby.bp)
    app.register_blueprint(table.bp)
    app.register_blueprint(learn.bp)
    app.register_blueprint(stats_pages.bp)
    extras.init_app(app)
    pwa.init_app(app)
    alerts.init_app(app)
    reactions.init_app(app)
    chat.init_app(app)
    render.init_app(app)
    score.init_app(app)
    replay.init_app(app)
    theme.init_app(app)
    ws.init_app(app)
    wiring.start(app)
    return app

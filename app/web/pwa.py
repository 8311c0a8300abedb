"""The installable app: web manifest, service worker and its offline page.

The service worker is served at /sw.js (not under /static/) so that its scope covers
the whole site. It keeps the static files (their URLs carry a content hash, so a cached
one is never stale) and the offline page, shown when a page cannot be loaded."""

from __future__ import annotations

import hashlib

from flask import Blueprint, current_app, jsonify, render_template
from flask_babel import gettext as _

from app.i18n import current

bp = Blueprint("pwa", __name__)

STATIC_FILES = (
    "skymo-1.css",
    "skymo-pages-1.css",
    "htmx-2.0.11.min.js",
    "htmx-ext-ws-2.0.4.min.js",
    "skymo-1.js",
    "sounds-1.js",
    "lobby-1.js",
    "push-1.js",
    "icon-32.png",
)
THEME = "#102030"


@bp.get("/manifest.webmanifest")
def manifest():
    asset = current_app.jinja_env.globals["asset"]
    body = {
        "id": "/",
        "name": _("Skymo: the card game with friends"),
        "short_name": "Skymo",
        "description": _("The card game of low scores, in your browser."),
        # A manifest is fetched without cookies: the page's link names its language.
        "lang": current(),
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "background_color": "#0f1c2b",
        "theme_color": THEME,
        "icons": [
            {"src": asset("icon-192.png"), "sizes": "192x192", "type": "image/png"},
            {"src": asset("icon-512.png"), "sizes": "512x512", "type": "image/png"},
            {
                "src": asset("icon-maskable-512.png"),
                "sizes": "512x512",
                "type": "image/png",
                "purpose": "maskable",
            },
        ],
    }
    response = jsonify(body)
    response.mimetype = "application/manifest+json"
    return response


@bp.get("/sw.js")
def service_worker():
    asset = current_app.jinja_env.globals["asset"]
    files = [asset(name) for name in STATIC_FILES]
    version = hashlib.sha256(" ".join(files).encode()).hexdigest()[:10]
    icon = asset("icon-192.png")
    body = render_template("sw.js", files=files, version=version, icon=icon)
    response = current_app.response_class(body, mimetype="application/javascript")
    response.headers["Cache-Control"] = "no-cache"  # a new version is picked up at once
    return response


@bp.get("/offline")
def offline():
    return render_template("pages/offline.html")


def init_app(app) -> None:
    app.register_blueprint(bp)

"""CSRF protection for every POST, and security headers.

The token lives in the signed session; forms carry it in a hidden field and htmx sends
it in the X-CSRF-Token header (set once on <body> with hx-headers)."""

from __future__ import annotations

import hmac
import secrets

from flask import render_template, request, session
from flask_babel import gettext as _
from werkzeug.exceptions import HTTPException


def csrf_token() -> str:
    token = session.get("csrf")
    if not token:
        token = session["csrf"] = secrets.token_urlsafe(24)
        session.permanent = True
    return token


def init_app(app) -> None:
    app.jinja_env.globals["csrf_token"] = csrf_token

    @app.before_request
    def _check_csrf():
        if request.method != "POST":
            return None
        expected = session.get("csrf")
        sent = request.headers.get("X-CSRF-Token") or request.form.get("csrf_token")
        if not expected or not sent or not hmac.compare_digest(str(expected), str(sent)):
            message = _("This form has expired: reload the page and try again.")
            return render_template("pages/error.html", message=message, status=400), 400
        return None

    @app.errorhandler(HTTPException)
    def _http_error(exc):
        """Werkzeug's own error pages are English and bare: ours, in the reader's
        language (403, 404, 405 and the rest; 413 and the CSRF check have their own)."""
        if exc.response is not None:  # already answered (flask-limiter's on_breach page)
            return exc
        messages = {
            403: _("That is not yours to change."),
            404: _("There is nothing at this address."),
            405: _("This address cannot be used that way."),
            429: _("Too many requests: wait a moment, then try again."),
        }
        message = messages.get(exc.code, _("That request could not be handled: nothing changed."))
        headers = [(k, v) for k, v in exc.get_headers() if k.lower() != "content-type"]
        status = exc.code or 500
        return render_template("pages/error.html", message=message, status=status), status, headers

    @app.errorhandler(413)
    def _too_large(exc):
        message = _("That request is too large: nothing was changed.")
        return render_template("pages/error.html", message=message, status=413), 413

    @app.after_request
    def _headers(response):
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        response.headers.setdefault("X-Frame-Options", "DENY")
        return response

"""CSRF protection for every POST (Flask-WTF's CSRFProtect), and security headers.

Forms carry the token in a hidden field; htmx sends it in the X-CSRF-Token header (set
once on <body> with hx-headers), which CSRFProtect reads. The push socket renders forms
with the token of the session that opened it; it only receives, so it needs no token of
its own, and ws.py refuses a cross-origin socket."""

from __future__ import annotations

from flask import current_app, render_template, session
from flask_babel import gettext as _
from flask_wtf.csrf import CSRFError, CSRFProtect, generate_csrf
from werkzeug.exceptions import HTTPException

csrf = CSRFProtect()


def csrf_token() -> str:
    """The token forms and htmx send back. Flask-WTF signs the session's secret anew
    each second; the first signed token is kept in the session, so that a session's
    pages, pushes and answers carry the same one (a mover's answer reuses their push,
    matched by it). Signing in clears the session: a new secret, a new token."""
    token = session.get(SIGNED)
    if token is None or "csrf_token" not in session:
        token = session[SIGNED] = generate_csrf()
    return token


SIGNED = "csrf_signed"

DEVICE_COOKIE_AGE = 60 * 60 * 24 * 365


def remember_on_device(response, name: str, value: str):
    """A choice this browser keeps for a year (the theme, the lesson seen): not for
    scripts, sent on same-site requests and links, over https only where the session's
    cookie is. (app.i18n sets the language's the same way: it is below the web layer.)"""
    response.set_cookie(
        name,
        value,
        max_age=DEVICE_COOKIE_AGE,
        samesite="Lax",
        httponly=True,
        secure=bool(current_app.config.get("SESSION_COOKIE_SECURE")),
    )
    return response


def init_app(app) -> None:
    # A table stays open for hours: the token lasts as long as the session.
    app.config.setdefault("WTF_CSRF_TIME_LIMIT", None)
    app.config.setdefault("WTF_CSRF_HEADERS", ["X-CSRF-Token", "X-CSRFToken"])
    csrf.init_app(app)

    @app.errorhandler(CSRFError)
    def _csrf_failed(exc):
        message = _("This form has expired: reload the page and try again.")
        return render_template("pages/error.html", message=message, status=400), 400

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
        # As headers.setdefault for each, with one look at the answer's headers
        # (setdefault searched them three times per header, on every request).
        headers = response.headers
        present = {name.lower() for name, _ in headers}
        for lower, name, value in SECURITY_HEADERS:
            if lower not in present:
                headers.add(name, value)
        return response


SECURITY_HEADERS = tuple(
    (name.lower(), name, value)
    for name, value in (
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "same-origin"),
        ("X-Frame-Options", "DENY"),
    )
)

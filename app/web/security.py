"""CSRF protection for every POST (Flask-WTF's CSRFProtect), and security headers.

Forms carry the token in a hidden field; htmx sends it in the X-CSRF-Token header (set
once on <body> with hx-headers), which CSRFProtect reads. The push socket renders forms
with the token of the session that opened it; it only receives, so it needs no token of
its own, and ws.py refuses a cross-origin socket."""

from __future__ import annotations

import hmac

from flask import current_app, g, render_template, request, session
from flask_babel import gettext as _
from flask_wtf.csrf import CSRFError, CSRFProtect, generate_csrf, same_origin
from werkzeug.exceptions import HTTPException


class SessionCSRF(CSRFProtect):
    """Flask-WTF's CSRFProtect, with one shortcut: the token a page sends back is
    nearly always the signed token this session was given (`csrf_token` keeps it in the
    session, next to the secret it signs), and such a token is known good without
    verifying its signature again, which was most of the check's cost on every move.
    Any other token, and any token under a time limit, is checked by Flask-WTF."""

    # The request, session and app are read through their objects, not Flask's proxies:
    # each attribute read through a proxy costs about fifteen direct ones (a failed
    # lookup, its AttributeError, then the proxy's own), and this runs on every POST.
    def protect(self, apply_exemptions=False):
        app = current_app._get_current_object()
        req = request._get_current_object()
        config = app.config
        if (
            req.method not in config["WTF_CSRF_METHODS"]
            or config["WTF_CSRF_TIME_LIMIT"] is not None
            or not self._sent_own_token(req, config)
        ):
            return super().protect(apply_exemptions)
        if apply_exemptions and (not req.endpoint or self._exempt(app, req)):
            return None
        if req.is_secure and config["WTF_CSRF_SSL_STRICT"]:
            # Flask-WTF's referrer checks over HTTPS, as its protect() makes them.
            if not req.referrer:
                self._error_response("The referrer header is missing.")
            if not same_origin(req.referrer, f"https://{req.host}/"):
                self._error_response("The referrer does not match the host.")
        g.csrf_valid = True
        return None

    def _sent_own_token(self, req, config) -> bool:
        data = session._get_current_object()
        own = data.get(SIGNED)
        if not isinstance(own, str) or "csrf_token" not in data:
            return False
        sent = self._sent_token(req, config)
        return bool(sent) and hmac.compare_digest(sent.encode(), own.encode())

    @staticmethod
    def _sent_token(req, config) -> str | None:
        """Flask-WTF's `_get_csrf_token`: the form field, one whose name ends with it
        (a prefixed form), else the first header that has it."""
        field = config["WTF_CSRF_FIELD_NAME"]
        form = req.form
        token = form.get(field)
        if token:
            return token
        for key in form:
            if key.endswith(field) and form[key]:
                return form[key]
        for header in config["WTF_CSRF_HEADERS"]:
            token = req.headers.get(header)
            if token:
                return token
        return None

    def _exempt(self, app, req) -> bool:
        """Flask-WTF's `_is_exempt`."""
        if app.blueprints.get(req.blueprint) in self._exempt_blueprints:
            return True
        view = app.view_functions.get(req.endpoint)
        return view is not None and f"{view.__module__}.{view.__name__}" in self._exempt_views


csrf = SessionCSRF()


def csrf_token() -> str:
    """The token forms and htmx send back. Flask-WTF signs the session's secret anew
    each second; the first signed token is kept in the session, so that a session's
    pages, pushes and answers carry the same one (a mover's answer reuses their push,
    matched by it). Signing in clears the session: a new secret, a new token."""
    data = session._get_current_object()  # not the proxy: see SessionCSRF
    token = data.get(SIGNED)
    if token is None or "csrf_token" not in data:
        token = data[SIGNED] = generate_csrf()
    return token


SIGNED = "csrf_signed"


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

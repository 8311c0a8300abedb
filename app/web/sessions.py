"""The session cookie: Flask's signed cookie, opened without verifying the same cookie
again on every request.

A browser sends the same cookie on every request until its session changes (a seat, a
sign-in: SESSION_REFRESH_EACH_REQUEST is off), and verifying it (signature, zlib, JSON)
was about a tenth of what a move cost the server. A cookie that verified once is
remembered with what it holds and when it was signed: the next request with exactly
those bytes, under the same secret keys, gets a fresh copy of that data, and is refused
once too old, as Flask would. Anything else takes Flask's own path."""

from __future__ import annotations

import copy
import threading
import time

from flask.sessions import SecureCookieSessionInterface
from itsdangerous import BadSignature


class RememberedCookieSessions(SecureCookieSessionInterface):
    SIZE = 4096  # cookies remembered (about one per player; the oldest go first)

    def __init__(self):
        self._lock = threading.Lock()
        self._opened: dict[tuple, tuple[dict, float]] = {}  # -> (data, signed at)
        self._signer = None  # (keys, serializer): built again when the keys change

    def get_signing_serializer(self, app):
        keys = self._keys(app)
        if keys is None:
            return None
        found = self._signer
        if found is None or found[0] != keys:
            found = self._signer = (keys, super().get_signing_serializer(app))
        return found[1]

    @staticmethod
    def _keys(app) -> tuple | None:
        if not app.secret_key:
            return None
        return (*(app.config["SECRET_KEY_FALLBACKS"] or ()), app.secret_key)

    def open_session(self, app, request):
        s = self.get_signing_serializer(app)
        if s is None:
            return None
        val = request.cookies.get(self.get_cookie_name(app))
        if not val:
            return self.session_class()
        max_age = int(app.permanent_session_lifetime.total_seconds())
        key = (self._keys(app), val)
        with self._lock:
            found = self._opened.get(key)
        if found is not None and 0 <= time.time() - found[1] <= max_age:
            # A copy: the request may change its session (a seat added to `seats`).
            return self.session_class(fresh_copy(found[0]))
        try:
            data, signed = s.loads(val, max_age=max_age, return_timestamp=True)
        except BadSignature:
            return self.session_class()
        self._remember(key, data, signed.timestamp())
        return self.session_class(fresh_copy(data))

    def save_session(self, app, session, response) -> None:
        """Flask's, after the usual case is answered at once: a session that holds
        something and was not changed sends no cookie, only `Vary: Cookie` (added
        without Werkzeug parsing and writing the header again, as every move did)."""
        if session and not self.should_set_cookie(app, session):
            if session.accessed:
                vary_on(response, "Cookie")
            return
        super().save_session(app, session, response)

    def _remember(self, key: tuple, data: dict, signed: float) -> None:
        with self._lock:
            if len(self._opened) >= self.SIZE:
                del self._opened[next(iter(self._opened))]
            self._opened[key] = (data, signed)


def vary_on(response, header: str) -> None:
    """Add `header` to the answer's Vary header, unless it is there already (cheaper than
    Werkzeug's `response.vary`, which parses the header and writes it back)."""
    vary = header_value(response.headers, "vary")
    if not vary:
        response.headers["Vary"] = header
    elif header.lower() not in {v.strip().lower() for v in vary.split(",")}:
        response.headers["Vary"] = f"{vary}, {header}"


def header_value(headers, lower: str) -> str | None:
    """An answer's header by its lower-case name, or None. Werkzeug's `get` and `in` on
    an answer's headers raise and catch a BadRequestKeyError (an HTTP exception, made in
    Python) for each header that is missing, as most looked for are."""
    for name, value in headers:
        if name.lower() == lower:
            return value
    return None


def fresh_copy(value):
    """A deep copy of a session's data: its dicts and lists made anew, its strings and
    numbers shared (immutable), anything else (what Flask's tagged JSON also keeps:
    tuples, dates, bytes) by copy.deepcopy. About a third of deepcopy's time."""
    kind = type(value)
    if kind is dict:
        return {k: fresh_copy(v) for k, v in value.items()}
    if kind is list:
        return [fresh_copy(v) for v in value]
    if kind in _SHARED or value is None:
        return value
    return copy.deepcopy(value)


_SHARED = (str, int, float, bool)


def init_app(app) -> None:
    app.session_interface = RememberedCookieSessions()

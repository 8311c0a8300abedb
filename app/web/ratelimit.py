"""The sign-in rate limit, with flask-limiter: failed sign-ins per address and per
username in a moving window. Its storage is Redis in the multi-process mode (every
process counts the same failures) and memory otherwise. Over the limit every attempt is
refused, even with the right password, until the oldest failure leaves the window; a
successful sign-in forgets that username's failures."""

from __future__ import annotations

import math
import time

from flask import current_app, request
from flask_babel import ngettext
from flask_limiter import Limiter, RequestLimit


def client_address() -> str:
    """The address the limit counts. Behind N reverse proxies (SKYMO_PROXY_HOPS=N) it is
    the one the outermost trusted proxy saw, else every visitor would share the proxy's
    address, and one visitor's failures would lock everybody out."""
    hops = current_app.config["PROXY_HOPS"]
    if hops > 0:
        forwarded = [a.strip() for a in request.headers.get("X-Forwarded-For", "").split(",")]
        forwarded = [a for a in forwarded if a]
        if len(forwarded) >= hops:
            return forwarded[-hops]
    return request.remote_addr or "?"


def _username() -> str:
    return "user:" + (request.form.get("username") or "").strip().lower()


def _signin_limit() -> str:
    config = current_app.config
    return f"{config['SIGNIN_MAX_FAILURES']} per {config['SIGNIN_WINDOW_SECONDS']} second"


def _failed(response) -> bool:
    return response.status_code == 401


def _limiter() -> Limiter:
    return current_app.extensions["skymo_limiter"]


def forget_username_failures() -> None:
    """After a successful sign-in: that username starts afresh (not the address)."""
    limiter = _limiter()
    for limit in limiter.current_limits:
        if _username() in limit.request_args:
            limiter.limiter.clear(limit.limit, *limit.request_args)


def too_many_message(seconds: float) -> str:
    minutes = max(1, math.ceil(seconds / 60))
    return ngettext(
        "Too many sign-in attempts: try again in %(num)d minute.",
        "Too many sign-in attempts: try again in %(num)d minutes.",
        minutes,
    )


def redis_key_patterns(prefix: str) -> tuple[str, str]:
    """What Skymo keeps in Redis under the key prefix `prefix`, as SCAN patterns: its own
    keys, and this limit's, which its storage (the limits library) starts with
    "LIMITS:LIMITER/" (for removing a test's or a benchmark's keys)."""
    return prefix + "*", f"LIMITS:LIMITER/{prefix}*"


def init_app(app, endpoint: str, on_breach) -> None:
    """Limit the sign-in view `endpoint` (already registered): only its failed attempts
    (401) count. `on_breach(seconds)` answers a refused attempt. One Limiter per app
    (each has its own storage and settings)."""
    app.config.setdefault("SIGNIN_MAX_FAILURES", 5)
    app.config.setdefault("SIGNIN_WINDOW_SECONDS", 15 * 60)
    app.config.setdefault("RATELIMIT_STORAGE_URI", app.config.get("REDIS_URL") or "memory://")
    app.config.setdefault("RATELIMIT_KEY_PREFIX", app.config.get("REDIS_PREFIX", "skymo:") + "rl")
    # Redis down: sign-in still works (without a limit) rather than failing every attempt.
    app.config.setdefault("RATELIMIT_SWALLOW_ERRORS", True)
    limiter = Limiter(key_func=client_address, strategy="moving-window")
    limiter.init_app(app)
    app.extensions["skymo_limiter"] = limiter

    def breached(limit: RequestLimit):
        return on_breach(max(0.0, limit.window[0] - time.time()))

    view = app.view_functions[endpoint]
    for key_func in (client_address, _username):
        view = limiter.limit(
            _signin_limit,
            key_func=key_func,
            methods=["POST"],
            deduct_when=_failed,
            on_breach=breached,
        )(view)
    app.view_functions[endpoint] = view

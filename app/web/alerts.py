"""Turn alerts at a table, per device: the page's static/push-1.js asks the browser for
a push subscription and hands it here; turning the switch off removes it. The sending
is app.features.alerts."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from flask import Blueprint, current_app, jsonify, request
from flask_babel import get_locale
from flask_babel import gettext as _

from app import tables
from app.storage import alerts
from app.web import services
from app.web.table import current_seat

bp = Blueprint("alerts", __name__, url_prefix="/t")

LOOPBACK = ("localhost",)


def refused(message: str, status: int = 400):
    return jsonify(error=message), status


def endpoint_ok(endpoint) -> bool:
    """A push service's address: https on a public host. A loopback http address only
    where the app allows it (tests: a push service double on this machine)."""
    if not isinstance(endpoint, str) or not 0 < len(endpoint) <= 1000:
        return False
    url = urlsplit(endpoint)
    host = url.hostname or ""
    if url.scheme == "http" and current_app.config.get("ALERTS_LOOPBACK_HTTP"):
        return host in LOOPBACK or _is_ip(host, loopback=True)
    return url.scheme == "https" and "." in host and not _is_ip(host, loopback=False)


def _is_ip(host: str, loopback: bool) -> bool:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback if loopback else True


def _key(value) -> bool:
    return isinstance(value, str) and 0 < len(value) <= 200 and value.isascii()


def _seat_of(code: str):
    try:
        table = tables.get_table(code.upper())
    except tables.TableError as exc:
        return None, refused(exc.message, exc.status)
    seat = current_seat(table)
    if seat is None:
        return None, refused(_("Only players seated at this table can be alerted."), 403)
    return seat, None


@bp.get("/<code>/alerts")
def key(code: str):
    """The key a page subscribes with (the server's VAPID public key), and what the
    page says when the switch is used (static/push-1.js)."""
    return jsonify(
        key=current_app.extensions[services.SERVICES].alerts.keys.public,
        on=_("Alerts on: this device is told when it is your turn and you are not looking."),
        off=_("Alerts off on this device."),
        failed=_("Alerts could not be turned on: this browser refused or does not allow them."),
    )


@bp.post("/<code>/alerts")
def subscribe(code: str):
    seat, error = _seat_of(code)
    if error:
        return error
    body = request.get_json(silent=True) or {}
    found = body.get("keys") if isinstance(body.get("keys"), dict) else {}
    endpoint, p256dh, auth = body.get("endpoint"), found.get("p256dh"), found.get("auth")
    if not endpoint_ok(endpoint) or not _key(p256dh) or not _key(auth):
        return refused(_("This browser's push subscription could not be read."))
    alerts.subscribe(seat.table_id, seat.id, endpoint, p256dh, auth, str(get_locale()))
    return jsonify(on=True)


@bp.post("/<code>/alerts/off")
def unsubscribe(code: str):
    seat, error = _seat_of(code)
    if error:
        return error
    endpoint = (request.get_json(silent=True) or {}).get("endpoint")
    if not isinstance(endpoint, str):
        return refused(_("This browser's push subscription could not be read."))
    alerts.unsubscribe(seat.id, endpoint)
    return jsonify(on=False)


def init_app(app) -> None:
    app.register_blueprint(bp)

"""The adapters app/wiring.py built for this app, as the web layer reaches them: the
hub of this process's sockets, presence, and the publisher (every process's sockets)."""

from __future__ import annotations

from flask import current_app

from app.live.hub import Hub
from app.live.presence import Presence
from app.tables.ports import Publisher

SERVICES = "skymo"  # app.extensions key (app/wiring.py)


def hub() -> Hub:
    return current_app.extensions[SERVICES].hub


def presence() -> Presence:
    return current_app.extensions[SERVICES].presence


def publisher() -> Publisher:
    return current_app.extensions[SERVICES].publisher

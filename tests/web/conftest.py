"""Fixtures of the web tests beside the shared ones (tests/conftest.py)."""

from __future__ import annotations

import pytest

from app.live.hub import Connection


@pytest.fixture
def sockets(hub, app):
    """Fake sockets registered with the real hub (inside the app, as the socket route
    does: opening one pushes the presence change); removed after the test."""
    opened = []

    def connect(code, seat_id, csrf, sink):
        conn = Connection(code=code, seat_id=seat_id, csrf=csrf, send=sink)
        with app.app_context():
            hub.add(conn)
        opened.append(conn)
        return conn

    yield connect
    with app.app_context():
        for conn in opened:
            hub.remove(conn)

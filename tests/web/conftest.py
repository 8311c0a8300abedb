"""Fixtures of the web tests beside the shared ones (tests/conftest.py)."""

from __future__ import annotations

import pytest

from app import tables
from app.live.hub import Connection
from tests.web.account_helpers import make_user


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


@pytest.fixture
def automatic(app):
    """app.tables.run_automatic, as the app's scheduler runs it (in its app context)."""

    def run(code: str, **options) -> bool:
        with app.app_context():
            return tables.run_automatic(code, **options)

    return run


@pytest.fixture
def ann_and_bob(app):
    """Two accounts, "ann" and "bob" (the stats and rating tests seat them)."""
    return make_user("ann"), make_user("bob")

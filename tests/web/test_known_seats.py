"""Who a visitor is at a table, from the seats of the table's snapshot this process
knows (no query per request), with the same answers as the database gives."""

from __future__ import annotations

import pytest

from app import tables
from app.storage.table_store import store as known_store
from tests.web.web_helpers import seat_of


@pytest.fixture
def seat_queries(monkeypatch):
    """Counts the seat lookups that reach the database."""
    asked = []
    for name in ("seat_by_token", "seat_by_user"):
        lookup = getattr(tables, name)

        def counted(*args, lookup=lookup, name=name):
            found = lookup(*args)
            asked.append((name, found))
            return found

        monkeypatch.setattr(tables, name, counted)
    return asked


def test_a_seated_players_requests_find_their_seat_without_a_query(browser, seat_queries):
    ann, bob, cleo = browser(), browser(), browser()
    code = ann.create("Ann")
    bob.join(code, "Bob")
    seat_queries.clear()
    assert known_store.known_seats(code) is not None
    page = bob.get(f"/t/{code}").data.decode()
    assert "Leave" in page and 'id="join-name"' not in page  # Bob is seated
    ann.post(f"/t/{code}/rules", {"end_score": "50"})  # the host, recognised as host
    assert seat_queries == []
    # A visitor without a seat is looked up in the database (and is not seated).
    page = cleo.get(f"/t/{code}").data.decode()
    assert 'id="join-name"' in page
    assert seat_queries and all(found is None for _, found in seat_queries)


def test_a_seat_that_left_is_no_longer_found(browser, seat_queries):
    ann, bob = browser(), browser()
    code = ann.create("Ann")
    bob.join(code, "Bob")
    bob_id = seat_of(code, "Bob").id
    assert bob.post(f"/t/{code}/seats/{bob_id}/remove", {}).status_code == 303
    assert bob_id not in [s.id for s in known_store.known_seats(code)]
    page = bob.get(f"/t/{code}").data.decode()
    assert 'id="join-name"' in page  # a visitor again

"""What the table page shows beyond the board (app/web/extras.py): the countdown before
an away player is played for, and the self-refresh of a waiting page without JavaScript."""

from __future__ import annotations

import time

from app.live.hub import Connection
from app.storage.models import Table
from app.web.extras import away_countdown
from tests.web.web_helpers import parse, seat_of, seat_table, start


def countdown_text(browser_) -> str | None:
    node = parse(browser_.page()).find("p", cls="countdown")
    return node.text() if node is not None else None


def test_everyone_sees_the_countdown_before_an_away_players_turn_is_played(
    app, hub, presence, browser
):
    ann, bob = seat_table(browser, ("Ann", "Bob"), grace_seconds=15)
    start(ann)
    code = ann.code
    ann_seat, bob_seat = seat_of(code, "Ann"), seat_of(code, "Bob")
    sockets = [
        Connection(code=code, seat_id=seat.id, csrf="", send=lambda html: None)
        for seat in (ann_seat, bob_seat)
    ]
    for conn in sockets:
        hub.add(conn)
    try:
        assert countdown_text(ann) is None  # both here
        hub.remove(sockets[1])  # Bob's phone goes away ...
        presence.seen(code, bob_seat.id, time.time())  # ... and his last request is old
        text = countdown_text(ann)
        assert text is not None and text.startswith("Bob is not connected: their cards")
        seconds = int(parse(ann.page()).find("p", cls="countdown").find("span").text())
        assert 13 <= seconds <= 15
        with app.app_context():
            due = away_countdown(Table.get(Table.code == code), now=time.time() + 10)
        assert due["name"] == "Bob" and due["setup"] and 3 <= due["seconds"] <= 5
        hub.add(sockets[1])  # back
        assert countdown_text(ann) is None
    finally:
        for conn in sockets:
            hub.remove(conn)


def test_the_away_player_reads_their_own_countdown_said_to_them(app, hub, presence, browser):
    # Bob plays without JavaScript (no socket): once his last request is old, the server
    # turns his cards for him; his own page tells him so, not "Bob is not connected".
    ann, bob = seat_table(browser, ("Ann", "Bob"), grace_seconds=15)
    start(ann)
    code = ann.code
    ann_socket = Connection(
        code=code, seat_id=seat_of(code, "Ann").id, csrf="", send=lambda html: None
    )
    hub.add(ann_socket)
    try:
        presence.seen(code, seat_of(code, "Bob").id, time.time())
        mine = countdown_text(bob)  # (this request counts Bob as seen again: still due)
        assert mine is not None and mine.startswith("Your cards are turned for you in ")
        assert mine.endswith(" s unless you turn them")
        assert countdown_text(ann).startswith("Bob is not connected: their cards")
    finally:
        hub.remove(ann_socket)


def refreshes(html: str) -> bool:
    return 'http-equiv="refresh"' in html


def test_a_waiting_page_refreshes_itself_without_javascript(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    visitor = browser()
    assert refreshes(bob.page())  # waiting for the host
    assert "This page reloads itself" in bob.page()
    assert not refreshes(ann.page())  # the host is busy with the rules
    assert not refreshes(visitor.get(f"/t/{ann.code}").data.decode())  # typing a name
    start(ann)
    for who in (ann, bob):
        assert not refreshes(who.page())  # both turn cards over
    assert refreshes(visitor.get(f"/t/{ann.code}").data.decode())  # watching

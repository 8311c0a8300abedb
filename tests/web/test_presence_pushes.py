"""Who is here, pushed only when it changes what the others see: outside a game, a socket
that opens for a page whose request (or whose join) already made its seat present pushes
nothing to the others; a seat that was away and comes back (a socket or a request) is
pushed to them, as is one whose last socket closes and who is away from then on. In a
game every first socket opening and last one closing is pushed (the countdown for a
player without a socket)."""

from __future__ import annotations

import re
import time

from app.live.hub import Connection
from tests.web.table_helpers import playing
from tests.web.web_helpers import game_of, seat_of


def bob_shown(html: str) -> str:
    """How Bob's seat in a pushed lobby shows him: "here" or "away"."""
    item = re.search(
        r'<li[^>]*><span class="dot[^"]*" title="(\w+)"></span>\s*'
        r'<span class="name">Bob</span>',
        html,
    )
    assert item is not None, html[:500]
    return item.group(1)


def test_a_socket_opening_pushes_the_others_only_when_its_seat_was_away(
    hub, presence, app, browser
):
    ann, bob = browser(), browser()
    code = ann.create("Ann")
    ann_pushes = []
    ann_socket = Connection(code, seat_of(code, "Ann").id, ann.csrf, ann_pushes.append)
    hub.add(ann_socket)
    bob_socket = None
    try:
        bob.join(code, "Bob")  # the join's push shows Bob here already
        assert ann_pushes and bob_shown(ann_pushes[-1]) == "here"
        bob_id = seat_of(code, "Bob").id
        ann_pushes.clear()

        bob.get(f"/t/{code}")  # Bob's page, then its socket: the others see no change
        bob_socket = Connection(code, bob_id, bob.csrf, lambda html: None)
        with app.test_request_context():  # as the socket's handler does
            hub.add(bob_socket)
        assert ann_pushes == []

        # Bob's last socket closes once his request's presence has lapsed: away.
        presence.seen(code, bob_id, time.time())
        with app.test_request_context():  # as the socket's handler does
            hub.remove(bob_socket)
            assert len(ann_pushes) == 1 and bob_shown(ann_pushes[-1]) == "away"

            # His socket reconnects: here again, for everyone.
            bob_socket = Connection(code, bob_id, bob.csrf, lambda html: None)
            hub.add(bob_socket)
            assert len(ann_pushes) == 2 and bob_shown(ann_pushes[-1]) == "here"
            # A second socket of his (another tab) changes nothing.
            second = Connection(code, bob_id, bob.csrf, lambda html: None)
            hub.add(second)
            hub.remove(second)
            assert len(ann_pushes) == 2
    finally:
        hub.remove(ann_socket)
        if bob_socket is not None:
            hub.remove(bob_socket)


def test_a_closing_socket_still_has_the_timers_worked_out_again(hub, presence, app, browser):
    """Closing the last socket of a seat kept present by a recent request shows the
    others nothing, but the timers of absent players are worked out again (they run
    from the end of that request's presence)."""
    ann, bob = browser(), browser()
    code = ann.create("Ann")
    bob.join(code, "Bob")
    bob_id = seat_of(code, "Bob").id
    changes, ann_pushes = [], []
    ann_socket = Connection(code, seat_of(code, "Ann").id, ann.csrf, ann_pushes.append)

    def heard(*change):
        changes.append(change)

    presence.on_change(heard)
    try:
        with app.test_request_context():
            hub.add(ann_socket)
            bob_socket = Connection(code, bob_id, bob.csrf, lambda html: None)
            hub.add(bob_socket)
            hub.remove(bob_socket)
        assert (code, bob_id, True) in changes and changes[-1] == (code, bob_id, False)
        assert ann_pushes == []
    finally:
        presence._listeners.remove(heard)
        hub.remove(ann_socket)


def test_a_request_of_a_seat_that_was_away_pushes_it_back(hub, presence, browser):
    """A player without a socket (no JavaScript) who comes back is shown here again."""
    ann, bob = browser(), browser()
    code = ann.create("Ann")
    bob.join(code, "Bob")
    bob_id = seat_of(code, "Bob").id
    presence.seen(code, bob_id, time.time())  # away from now
    ann_pushes = []
    ann_socket = Connection(code, seat_of(code, "Ann").id, ann.csrf, ann_pushes.append)
    hub.add(ann_socket)
    try:
        bob.get(f"/t/{code}")
        assert len(ann_pushes) == 1 and bob_shown(ann_pushes[-1]) == "here"
        bob.get(f"/t/{code}")  # still here: nothing more
        assert len(ann_pushes) == 1
    finally:
        hub.remove(ann_socket)


def test_in_a_game_a_socket_opening_or_closing_is_pushed_to_the_others(hub, app, browser):
    """The countdown for a player without a socket starts and stops with their socket,
    even while a recent request keeps them marked here. (A push that would show Ann
    what her page shows already is not sent: see app.live.hub.Connection.offer.)"""
    ann, bob = playing(browser)
    code = ann.code
    if game_of(code).round.turn == seat_of(code, "Ann").player_id:
        # Bob's countdown shows on his turn only (else his socket changes nothing shown)
        assert ann.move("draw").status_code == 303
        assert ann.move("discard_drawn", (0, 0)).status_code == 303
    assert game_of(code).round.turn == seat_of(code, "Bob").player_id
    ann_pushes = []
    ann_socket = Connection(code, seat_of(code, "Ann").id, ann.csrf, ann_pushes.append)
    bob_seat = seat_of(code, "Bob").id
    bob_sockets = [Connection(code, bob_seat, bob.csrf, lambda html: None) for _ in range(2)]
    countdown = 'class="countdown"'
    with app.test_request_context():
        hub.add(ann_socket)
        try:
            bob.get(f"/t/{code}")
            hub.add(bob_sockets[0])
            assert ann_pushes and countdown not in ann_pushes[-1]
            ann_pushes.clear()
            hub.remove(bob_sockets[0])  # closed: his countdown starts
            assert len(ann_pushes) == 1 and countdown in ann_pushes[0]
            hub.add(bob_sockets[1])  # open again: it stops
            assert len(ann_pushes) == 2 and countdown not in ann_pushes[1]
            hub.remove(bob_sockets[1])
        finally:
            hub.remove(ann_socket)

"""Absent players (docs/rules.md, "Leaving and coming back"): played for after the grace period,
forfeit after the rejoin window, and the lobby's host hands over."""

from __future__ import annotations

import time

import pytest

from app import tables
from app.engine import GAME_OVER
from app.live.hub import Connection
from app.storage.models import Seat, Table
from tests.web.web_helpers import stored_state


@pytest.fixture
def two_player_game(hub, presence, browser):
    ann, bob = browser(), browser()
    code = ann.create("Ann")
    bob.join(code, "Bob")
    ann.post(f"/t/{code}/rules", {"grace_seconds": "15", "rejoin_seconds": "60"})
    ann.post(f"/t/{code}/start", {"version": ann.version()})
    seats = {s.name: s for s in Seat.select().where(Seat.table == code)}
    # Ann keeps a socket open; Bob is away from now on.
    conn = Connection(code=code, seat_id=seats["Ann"].id, csrf="", send=lambda html: None)
    hub.add(conn)
    presence.seen(code, seats["Bob"].id, time.time())
    yield code, ann, bob, seats
    hub.remove(conn)


def test_an_away_players_first_flips_are_chosen_after_the_grace_period(
    automatic, presence, two_player_game
):
    code, ann, bob, seats = two_player_game
    table, game = stored_state(code)
    bob_id = seats["Bob"].player_id
    assert game.round.setup_left[bob_id] == 2
    since = presence.away_since(code, seats["Bob"].id)
    assert not automatic(code, now=since + 14)
    assert automatic(code, now=since + 16)
    table, game = stored_state(code)
    assert game.round.setup_left[bob_id] == 0
    assert game.round.setup_left[seats["Ann"].player_id] == 2  # Ann is here: she chooses


def test_an_away_players_turn_is_played_for_them_then_they_forfeit(
    automatic, presence, two_player_game
):
    code, ann, bob, seats = two_player_game
    bob_id, ann_id = seats["Bob"].player_id, seats["Ann"].player_id
    for pos in ((0, 0), (0, 1)):
        assert ann.move("reveal", pos).status_code == 303
    since = presence.away_since(code, seats["Bob"].id)
    automatic(code, now=since + 16)  # Bob's flips
    table, game = stored_state(code)
    if game.round.turn == ann_id:
        ann.move("draw")
        table, game = stored_state(code)
        flip = next(a for a in game.legal_actions(ann_id) if type(a).__name__ == "DiscardDrawn")
        ann.move("discard_drawn", flip.flip)
    table, game = stored_state(code)
    assert game.round.turn == bob_id
    moves_before = len(game.round.moves)
    later = table.updated_at.timestamp() + 16
    assert automatic(code, now=max(later, since + 16))
    table, game = stored_state(code)
    assert game.round.turn == ann_id, "Bob's whole turn was played for him"
    assert len(game.round.moves) == moves_before + 1
    # Past the rejoin window Bob forfeits; a game left with one player ends.
    assert automatic(code, now=since + 61)
    table, game = stored_state(code)
    assert game.forfeited == [bob_id]
    assert game.phase == GAME_OVER and table.status == Table.FINISHED
    assert "Bob left the game" in ann.page()


def test_a_player_who_comes_back_in_time_keeps_their_seat(automatic, presence, two_player_game):
    code, ann, bob, seats = two_player_game
    since = presence.away_since(code, seats["Bob"].id)
    page = bob.page()  # Bob is back: a request counts as presence
    assert "Turn over 2 cards" in page
    assert presence.away_since(code, seats["Bob"].id) is None
    automatic(code, now=since + 30)
    table, game = stored_state(code)
    assert game.round.setup_left[seats["Bob"].player_id] == 2, "nothing was played for Bob"
    assert not game.forfeited


def test_timers_are_set_in_the_lobby_within_bounds(browser):
    ann = browser()
    code = ann.create("Ann")
    response = ann.post(f"/t/{code}/rules", {"grace_seconds": "2"}, htmx=True)
    assert response.status_code == 400
    assert "Grace period must be from 5 to 120 seconds." in response.data.decode()
    response = ann.post(f"/t/{code}/rules", {"rejoin_seconds": "abc"}, htmx=True)
    assert "Rejoin window must be a whole number of seconds." in response.data.decode()
    table = Table.get(Table.code == code)
    assert (table.grace_seconds, table.rejoin_seconds) == (15, 180)
    ann.post(f"/t/{code}/rules", {"grace_seconds": "30", "rejoin_seconds": "600"})
    table = Table.get(Table.code == code)
    assert (table.grace_seconds, table.rejoin_seconds) == (30, 600)


def test_the_next_present_person_becomes_host_when_the_host_leaves(
    automatic, hub, presence, browser
):
    ann, bob = browser(), browser()
    code = ann.create("Ann")
    bob.join(code, "Bob")
    seats = {s.name: s for s in Seat.select().where(Seat.table == code)}
    conn = Connection(code=code, seat_id=seats["Bob"].id, csrf="", send=lambda html: None)
    hub.add(conn)
    try:
        presence.seen(code, seats["Ann"].id, time.time())  # Ann's page closed just now
        assert not automatic(code, now=time.time() + 5)
        assert automatic(code, now=time.time() + 11)
        assert Table.get(Table.code == code).host_seat == seats["Bob"].id
        assert "Save rules" in bob.page()
    finally:
        hub.remove(conn)


def test_a_lobby_with_nobody_present_closes_after_30_minutes(automatic, presence, browser):
    ann = browser()
    code = ann.create("Ann")
    seat = Seat.get(Seat.table == code)
    presence.seen(code, seat.id, time.time())
    assert not automatic(code, now=time.time() + 29 * 60)
    assert automatic(code, now=time.time() + 31 * 60)
    assert Table.get(Table.code == code).status == Table.CLOSED
    assert ann.get(f"/t/{code}").status_code == 404


def test_a_player_seen_only_by_requests_is_played_for_once_that_presence_lapses(
    automatic, services, presence, browser
):
    # No socket, just page loads (a player without JavaScript, or one who closed the
    # tab): present for a while after each request, then away. The timers must be
    # scheduled from that moment on, with no event to wake them.
    ann, bob = browser(), browser()
    code = ann.create("Ann")
    bob.join(code, "Bob")
    ann.post(f"/t/{code}/rules", {"grace_seconds": "15"})
    ann.post(f"/t/{code}/start", {"version": ann.version()})
    seats = {s.name: s for s in Seat.select().where(Seat.table == code)}
    lapse = time.time() + presence.REQUEST_PRESENCE
    presence.seen(code, seats["Ann"].id, lapse)
    presence.seen(code, seats["Bob"].id, lapse)
    table, game = stored_state(code)
    timing = services.tables.timing
    when, kind, _ = tables.next_automatic(tables.store.current(code), presence, timing)
    assert kind == "proxy_setup" and abs(when - (lapse + 15)) < 2
    assert not automatic(code, now=lapse - 1)  # still present: nothing
    assert automatic(code, now=lapse + 16)
    table, game = stored_state(code)
    assert sum(game.round.setup_left.values()) < 4

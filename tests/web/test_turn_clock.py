"""The turn clock (app/tables/clock.py): the host's choice in the rules form, the
deadline next_automatic gives, the stand-in's move when it runs out, three timeouts in
a row making a player absent (then the rejoin window counts), and coming back."""

from __future__ import annotations

import re

import pytest

from app import tables
from app.engine import PLAY, SETUP
from app.storage.models import Seat, Table
from tests.web.web_helpers import parse, stored_state


@pytest.fixture
def due(app):
    """next_automatic on the table as stored, at `now`."""

    def at(code: str, now: float):
        with app.app_context():
            service = tables.current()
            snap = tables.store.snapshot_of(tables.get_table(code))
            return tables.next_automatic(snap, service.presence, service.timing, now)

    return at


@pytest.fixture
def clocked_game(sockets, browser):
    """Ann and Bob, both with a page open, at a table with a 30 s turn clock (an away
    player forfeits after 30 s, before the stand-in's 60 s grace period)."""
    ann, bob = browser(), browser()
    code = ann.create("Ann")
    bob.join(code, "Bob")
    rules = {"turn_clock": "30", "grace_seconds": "60", "rejoin_seconds": "30"}
    assert ann.post(f"/t/{code}/rules", rules).status_code == 303
    ann.post(f"/t/{code}/start", {"version": ann.version()})
    seats = {s.name: s for s in Seat.select().where(Seat.table == code)}
    for seat in seats.values():
        sockets(code, seat.id, "", lambda html: None)
    return code, ann, bob, seats


def since(code) -> float:
    return Table.get(Table.code == code).clock["since"]


def play_setup(code, ann, bob):
    for who in (ann, bob):
        for pos in ((0, 0), (0, 1)):
            assert who.move("reveal", pos).status_code == 303
    table, game = stored_state(code)
    assert game.phase == PLAY
    return game


def test_the_rules_form_offers_the_clock_and_refuses_other_values(browser):
    ann = browser()
    code = ann.create("Ann")
    assert Table.get(Table.code == code).turn_clock is None  # an invite table: none
    page = parse(ann.page())
    choices = [o.attrs["value"] for o in page.by_id("r-clock").find_all("option")]
    assert choices == ["none", "30", "60", "90", "120"]
    for bad in ("45", "abc", "-30", "0"):
        response = ann.post(f"/t/{code}/rules", {"turn_clock": bad}, htmx=True)
        assert response.status_code == 400
        assert "Turn clock: that value is not one of the choices." in response.data.decode()
        assert Table.get(Table.code == code).turn_clock is None
    ann.post(f"/t/{code}/rules", {"turn_clock": "90"})
    assert Table.get(Table.code == code).turn_clock == 90
    assert "90 s per turn" in parse(ann.page()).by_id("rules-form").find("summary").text()
    ann.post(f"/t/{code}/rules", {"turn_clock": "none"})
    assert Table.get(Table.code == code).turn_clock is None


def test_the_lobby_summary_shows_the_clock(browser):
    ann, bob = browser(), browser()
    code = ann.create("Ann")
    bob.join(code, "Bob")
    ann.post(f"/t/{code}/rules", {"turn_clock": "60"})
    summary = parse(bob.page()).by_id("rules-summary").text()
    assert "Turn clock" in summary and "60 s per turn" in summary


def test_next_automatic_gives_the_clock_deadline(due, clocked_game):
    code, ann, bob, seats = clocked_game
    start = since(code)
    when, kind, player = due(code, start)
    assert (when, kind) == (start + 30, "clock_setup")
    game = play_setup(code, ann, bob)
    when, kind, player = due(code, since(code))
    assert (when, kind, player) == (since(code) + 30, "clock", game.round.turn)


def test_a_timed_out_setup_turns_the_cards_for_whoever_waits(automatic, clocked_game):
    code, ann, bob, seats = clocked_game
    for pos in ((0, 0), (0, 1)):
        ann.move("reveal", pos)
    start = since(code)
    assert not automatic(code, now=start + 29)
    assert automatic(code, now=start + 31)
    table, game = stored_state(code)
    assert game.phase == PLAY  # Bob's first cards were turned for him, and only them
    assert not [e for e in game.round.log if e["type"] in ("draw", "take_discard")]
    assert table.clock["timeouts"] == {seats["Bob"].player_id: 1}


def test_three_timeouts_make_a_player_absent_then_the_rejoin_window_counts(
    automatic, due, clocked_game
):
    code, ann, bob, seats = clocked_game
    play_setup(code, ann, bob)
    bob_id = seats["Bob"].player_id
    for n in range(1, 4):
        table, game = stored_state(code)
        if game.round.turn != bob_id:  # Ann plays her turn herself
            ann_plays_a_turn(code, ann, seats["Ann"].player_id)
            table, game = stored_state(code)
        assert game.round.turn == bob_id
        moves = len(game.round.moves)
        assert not automatic(code, now=since(code) + 29)
        assert automatic(code, now=since(code) + 31)
        table, game = stored_state(code)
        assert game.round.turn != bob_id and len(game.round.moves) > moves
        assert table.clock["timeouts"][bob_id] == n
        assert (bob_id in table.clock.get("absent", {})) == (n == 3)
    # Absent now: Bob's page offers "I'm back", and the rejoin window counts from then.
    assert parse(bob.page()).find("form", cls="im-back") is not None
    assert parse(ann.page()).find("form", cls="im-back") is None
    marked = table.clock["absent"][bob_id]
    ann_plays_a_turn(code, ann, seats["Ann"].player_id)
    # Bob counts as away from then: the forfeit is due after the rejoin window.
    assert due(code, marked) == (marked + 30, "forfeit", bob_id)
    assert automatic(code, now=marked + 31)
    assert bob_id in stored_state(code)[1].forfeited


def ann_plays_a_turn(code, ann, ann_id):
    assert ann.move("draw").status_code == 303
    table, game = stored_state(code)
    flip = next(a for a in game.legal_actions(ann_id) if type(a).__name__ == "DiscardDrawn")
    assert ann.move("discard_drawn", flip.flip).status_code == 303


def test_playing_resets_the_count(automatic, clocked_game):
    code, ann, bob, seats = clocked_game
    ann_id = seats["Ann"].player_id
    for pos in ((0, 0), (0, 1)):
        bob.move("reveal", pos)
    assert automatic(code, now=since(code) + 31)  # Ann's first cards: timed out
    assert stored_state(code)[0].clock["timeouts"] == {ann_id: 1}
    table, game = stored_state(code)
    who = ann if game.round.turn == ann_id else bob
    if who is bob:
        assert automatic(code, now=since(code) + 31)  # Bob's turn runs out too
        who = ann
    assert who.move("draw").status_code == 303
    table, _ = stored_state(code)
    assert ann_id not in table.clock["timeouts"]


def test_im_back_ends_the_absence(automatic, clocked_game, app):
    code, ann, bob, seats = clocked_game
    bob_id = seats["Bob"].player_id
    with app.app_context():

        def mark(ch):
            for n in range(3):
                tables.clock.timed_out(ch.table, bob_id, 1000.0 + n)

        tables.change(code, mark)
    assert stored_state(code)[0].clock["absent"] == {bob_id: 1002.0}  # at the third
    page = parse(bob.page())
    form = page.find("form", cls="im-back")
    assert form is not None and "I'm back" in form.text()
    assert bob.post(f"/t/{code}/back").status_code == 303
    table, _ = stored_state(code)
    assert table.clock["absent"] == {} and table.clock["timeouts"] == {}
    assert parse(bob.page()).find("form", cls="im-back") is None
    # Pressed again (a second tab): nothing changes.
    version = table.version
    assert bob.post(f"/t/{code}/back").status_code == 303
    assert stored_state(code)[0].version == version


def test_the_countdown_shows_in_pages_without_javascript_and_in_pushes(clocked_game, sockets):
    code, ann, bob, seats = clocked_game
    page = parse(ann.page())
    countdown = page.find("p", cls="countdown")
    assert countdown is not None and "clock" in countdown.classes
    left = int(countdown.find("span").attrs["data-left"])
    assert 25 <= left <= 30
    assert "s left to turn the first cards" in countdown.text()
    pushed = []
    sockets(code, seats["Ann"].id, ann.csrf, pushed.append)
    for pos in ((0, 0), (0, 1)):
        ann.move("reveal", pos)
        bob.move("reveal", pos)
    table, game = stored_state(code)
    assert game.phase == PLAY
    mover, waiter = (ann, bob) if game.round.turn == seats["Ann"].player_id else (bob, ann)
    mover_name = "Ann" if mover is ann else "Bob"
    # The player whose turn it is reads it said to them; the others read their name.
    assert "s left to play your turn" in parse(mover.page()).find("p", cls="countdown").text()
    waiting = parse(waiter.page()).find("p", cls="countdown").text()
    assert waiting.startswith(f"{mover_name}: ") and waiting.endswith(" s to play")
    # Ann's socket is told as her page is (the seconds aside).
    said_to_ann = parse(pushed[-1]).find("p", cls="countdown").text()
    on_her_page = parse(ann.page()).find("p", cls="countdown").text()
    assert re.sub(r"\d+", "N", said_to_ann) == re.sub(r"\d+", "N", on_her_page)


def test_a_table_without_a_clock_shows_no_countdown(sockets, browser):
    ann, bob = browser(), browser()
    code = ann.create("Ann")
    bob.join(code, "Bob")
    ann.post(f"/t/{code}/start", {"version": ann.version()})
    for seat in Seat.select().where(Seat.table == code):
        sockets(code, seat.id, "", lambda html: None)
    table, game = stored_state(code)
    assert game.phase == SETUP and table.clock is None
    assert parse(ann.page()).find("p", cls="countdown") is None

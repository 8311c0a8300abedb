"""Who starts a rematch and who plays it (app.tables.rematch_starter): the host starts it,
or, once the host has left the game, the first in seat order who chose "Play again";
everyone who chose it is seated, the starter always; the lines about who is in name the
others, never the reader."""

from __future__ import annotations

import random

import pytest

from app.storage.models import Seat, Table
from tests.web.table_helpers import error_text
from tests.web.web_helpers import (
    Player,
    form_posting_to,
    game_of,
    parse,
    play_until,
    seat_of,
    seat_table,
    snapshot,
    start,
    table_row,
    vote_next_round,
)


def finish(players: list[Player]) -> None:
    while play_until(players) != "game_over":
        vote_next_round(players)


def final_text(b) -> str:
    return parse(b.page()).find("section", cls="final").text()


@pytest.mark.parametrize("htmx", [False, True])
def test_a_guest_who_chose_play_again_waits_for_the_host(browser, htmx):
    """As reported: the host on her phone, a guest, a bot; the guest pressed "Play
    again", was offered the start, started, and the host was left watching her own
    table."""
    ann, ben = seat_table(browser, ("Ann", "Ben"), bots=("greedy",), rows=2, cols=2, end_score=10)
    start(ann)
    rng = random.Random(4)
    finish([Player(ann, "Ann", rng), Player(ben, "Ben", rng)])
    code = ann.code

    ben.post(f"/t/{code}/rematch", {"version": ben.version()}, htmx=htmx)
    doc = parse(ben.page())
    said = doc.find("section", cls="final").text()
    assert "You are in for a rematch with Ann and Gobbler." in said
    assert "Ben" not in said.split("You are in for a rematch")[1]  # never himself
    assert "Waiting for Ann to start the rematch." in said
    assert form_posting_to(doc, "/rematch/start") is None
    assert form_posting_to(doc, "/rematch") is None  # chosen: nothing to press again

    # A start he makes by hand is refused, in his words, and changes nothing.
    before = snapshot(code)
    response = ben.post(f"/t/{code}/rematch/start", {"version": ben.version()}, htmx=htmx)
    assert response.status_code == 403
    assert error_text(response) == "Only Ann can start the rematch."
    assert snapshot(code) == before

    # The host never pressed "Play again": she starts it and plays it.
    doc = parse(ann.page())
    assert "Ready for a rematch: Ben and Gobbler" in doc.find("section", cls="final").text()
    response = ann.post(f"/t/{code}/rematch/start", {"version": ann.version()}, htmx=htmx)
    assert response.status_code == (200 if htmx else 303)
    assert table_row(code).status == Table.PLAYING
    assert [p.name for p in game_of(code).players] == ["Ann", "Ben", "Gobbler"]
    assert table_row(code).host_seat == seat_of(code, "Ann").id
    for b in (ann, ben):
        page = b.page()
        assert "you are watching" not in page
        assert parse(page).find("section", cls="mine-wrap") is not None


def test_when_the_host_left_the_first_in_seat_order_who_chose_it_starts(browser):
    ann, bob, cat = seat_table(
        browser, ("Ann", "Bob", "Cat"), bots=("greedy",), rows=2, cols=2, end_score=10
    )
    start(ann)
    assert ann.post(f"/t/{ann.code}/leave").status_code == 303  # the host leaves for good
    rng = random.Random(6)
    finish([Player(bob, "Bob", rng), Player(cat, "Cat", rng)])
    code = ann.code
    assert table_row(code).status == Table.FINISHED
    doc = parse(ann.page())
    assert form_posting_to(doc, "/rematch") is None
    assert form_posting_to(doc, "/rematch/start") is None
    # Nobody has chosen yet: nobody may start it, and nobody waits for Ann.
    for b in (bob, cat):
        assert form_posting_to(parse(b.page()), "/rematch/start") is None
        assert "Waiting for" not in final_text(b)

    # Cat chooses first: she may start it (with the bot).
    cat.post(f"/t/{code}/rematch", {"version": cat.version()})
    assert form_posting_to(parse(cat.page()), "/rematch/start") is not None
    assert "Ready for a rematch: Gobbler" in final_text(cat)
    assert "Ready for a rematch: Cat and Gobbler" in final_text(bob)

    # Bob, before her in seat order, chooses too: he starts it now, not she.
    bob.post(f"/t/{code}/rematch", {"version": bob.version()})
    assert form_posting_to(parse(bob.page()), "/rematch/start") is not None
    doc = parse(cat.page())
    assert form_posting_to(doc, "/rematch/start") is None
    said = doc.find("section", cls="final").text()
    assert "You are in for a rematch with Bob and Gobbler." in said
    assert "Waiting for Bob to start the rematch." in said
    before = snapshot(code)
    response = cat.post(f"/t/{code}/rematch/start", {"version": cat.version()})
    assert response.status_code == 403
    assert error_text(response) == "Only Bob can start the rematch."
    assert snapshot(code) == before

    assert bob.post(f"/t/{code}/rematch/start", {"version": bob.version()}).status_code == 303
    assert [p.name for p in game_of(code).players] == ["Bob", "Cat", "Gobbler"]
    assert table_row(code).host_seat == seat_of(code, "Bob").id  # he hosts now
    # Ann chose to leave the game: she watches the next one.
    assert Seat.get((Seat.table == code) & (Seat.name == "Ann")).left is True


def test_alone_the_host_is_told_what_the_rematch_waits_for(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"), rows=2, cols=2, end_score=10)
    start(ann)
    rng = random.Random(8)
    finish([Player(ann, "Ann", rng), Player(bob, "Bob", rng)])
    said = final_text(ann)
    assert "The rematch can start once another player chooses Play again." in said
    assert "Ready for a rematch" not in said
    assert "Ready for a rematch: Ann" in final_text(bob)

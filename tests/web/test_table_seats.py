"""The table blueprint: bots, removing seats, starting the game.

Every route at /t/<code>, with good and bad input, with and without htmx. Bad input must
change nothing: the Table row (status, version, rules, state, votes) and the seats are
compared before and after."""

from __future__ import annotations

from app.storage.models import Seat, Table
from tests.web.table_helpers import error_text, is_partial
from tests.web.web_helpers import (
    data_version,
    each,
    game_of,
    grid_form,
    parse,
    seat_of,
    seat_table,
    snapshot,
    start,
    table_row,
)


# ----- POST /t/<code>/bots -------------------------------------------------------------------
@each("htmx", [False, True])
def test_host_adds_bots(browser, htmx):
    (ann,) = seat_table(browser, ("Ann",))
    options = parse(ann.page()).by_id("bot-kind").find_all("option")
    assert [o.attrs["value"] for o in options] == ["random", "greedy", "strong", "expert"]
    for kind in ("random", "greedy", "strong", "expert"):
        response = ann.post(f"/t/{ann.code}/bots", {"bot": kind}, htmx=htmx)
        assert response.status_code == (200 if htmx else 303)
        if htmx:
            assert is_partial(response)
    bots = list(
        Seat.select().where((Seat.table == ann.code) & Seat.bot.is_null(False)).order_by(Seat.id)
    )
    assert [b.bot for b in bots] == ["random", "greedy", "strong", "expert"]
    assert len({b.name.casefold() for b in bots}) == 4  # every bot has its own name
    assert [b.position for b in bots] == [1, 2, 3, 4]
    seats = parse(ann.page()).by_id("seats").text()
    assert "greedy bot" in seats and "strong bot" in seats and "expert bot" in seats


def test_unknown_bot_kind(browser):
    (ann,) = seat_table(browser, ("Ann",))
    before = snapshot(ann.code)
    response = ann.post(f"/t/{ann.code}/bots", {"bot": "cheater"})
    assert response.status_code == 400
    doc = parse(response.data)
    assert "Choose a bot" in doc.by_id("lobby-actions").find(cls="error").text()
    assert snapshot(ann.code) == before


def test_bots_by_a_guest_full_table_or_started_game(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    before = snapshot(ann.code)
    response = bob.post(f"/t/{ann.code}/bots", {"bot": "greedy"})
    assert response.status_code == 403
    assert snapshot(ann.code) == before
    for _ in range(6):
        assert ann.post(f"/t/{ann.code}/bots", {"bot": "random"}).status_code == 303
    full = snapshot(ann.code)
    response = ann.post(f"/t/{ann.code}/bots", {"bot": "random"})
    assert response.status_code == 409 and "This table is full." in error_text(response)
    assert snapshot(ann.code) == full
    assert parse(ann.page()).find("form", action=f"/t/{ann.code}/bots") is None
    start(ann)
    started = snapshot(ann.code)
    response = ann.post(f"/t/{ann.code}/bots", {"bot": "random"})
    assert response.status_code == 409
    assert snapshot(ann.code) == started


# ----- POST /t/<code>/seats/<id>/remove ----------------------------------------------------
def test_host_removes_a_seat(browser):
    ann, bob, cat = seat_table(browser, ("Ann", "Bob", "Cat"))
    bob_seat = seat_of(ann.code, "Bob")
    response = ann.post(f"/t/{ann.code}/seats/{bob_seat.id}/remove", htmx=True)
    assert response.status_code == 200 and is_partial(response)
    assert Seat.get_by_id(bob_seat.id).left is True
    # Bob is a visitor again, offered to join; Cat moved up.
    doc = parse(bob.page())
    assert doc.by_id("join") is not None and "Bob" not in doc.by_id("seats").text()
    assert "2 of 8" in doc.by_id("seats").text()


def test_a_guest_leaves_the_lobby_but_cannot_remove_others(browser):
    ann, bob, cat = seat_table(browser, ("Ann", "Bob", "Cat"))
    cat_seat = seat_of(ann.code, "Cat")
    before = snapshot(ann.code)
    response = bob.post(f"/t/{ann.code}/seats/{cat_seat.id}/remove")
    assert response.status_code == 403
    assert snapshot(ann.code) == before
    doc = parse(bob.page())
    leave = [f for f in doc.find_all("form") if f.attrs["action"].endswith("/remove")]
    assert len(leave) == 1  # only his own seat
    assert leave[0].find("button").text() == "Leave"
    bob.post(leave[0].attrs["action"], {})
    assert seat_of(ann.code, "Cat").left is False
    assert Seat.select().where((Seat.table == ann.code) & (Seat.name == "Bob")).get().left


def test_host_leaving_hands_the_table_on(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"), bots=("greedy",))
    ann_seat = seat_of(ann.code, "Ann")
    assert ann.post(f"/t/{ann.code}/seats/{ann_seat.id}/remove").status_code == 303
    assert table_row(ann.code).host_seat == seat_of(ann.code, "Bob").id
    doc = parse(bob.page())
    assert doc.by_id("rules-form") is not None
    assert "host" in doc.by_id("seats").find("li", cls="me").text()


@each("target", ["99999", "abc", "-1"])
def test_removing_a_seat_that_is_not_there(browser, target):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    before = snapshot(ann.code)
    response = ann.post(f"/t/{ann.code}/seats/{target}/remove")
    assert response.status_code == 404
    assert "That seat is already empty." in error_text(response)
    assert snapshot(ann.code) == before


def test_removing_a_seat_of_another_table(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    (other,) = seat_table(browser, ("Olga",))
    olga = seat_of(other.code, "Olga")
    response = ann.post(f"/t/{ann.code}/seats/{olga.id}/remove")
    assert response.status_code == 404
    assert Seat.get_by_id(olga.id).left is False


def test_removing_a_seat_after_the_start(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    start(ann)
    before = snapshot(ann.code)
    response = ann.post(f"/t/{ann.code}/seats/{seat_of(ann.code, 'Bob').id}/remove")
    assert response.status_code == 409
    assert snapshot(ann.code) == before


# ----- POST /t/<code>/start ----------------------------------------------------------------
@each("htmx", [False, True])
def test_host_starts_the_game(browser, htmx):
    ann, bob = seat_table(browser, ("Ann", "Bob"), bots=("greedy",))
    version = ann.version()
    response = ann.post(f"/t/{ann.code}/start", {"version": version}, htmx=htmx)
    assert response.status_code == (200 if htmx else 303)
    table = table_row(ann.code)
    assert table.status == Table.PLAYING and table.game_number == 1
    game = game_of(ann.code)
    assert [p.name for p in game.players] == ["Ann", "Bob", "Gobbler"]
    assert game.phase == "setup"
    assert game.round.setup_left[seat_of(ann.code, "Gobbler").player_id] == 0  # bots flip
    doc = parse(response.data if htmx else ann.page())
    assert grid_form(doc).find("input", name="type").attrs["value"] == "reveal"
    assert "Turn over 2 cards of your grid." in doc.find("p", cls="banner").text()


def test_start_with_one_seat(browser):
    (ann,) = seat_table(browser, ("Ann",))
    doc = parse(ann.page())
    start = next(
        b for b in doc.find_all("button") if b.attrs.get("formaction", "").endswith("/start")
    )
    assert "disabled" in start.attrs
    before = snapshot(ann.code)
    for htmx in (False, True):
        response = ann.post(f"/t/{ann.code}/start", {"version": ann.version()}, htmx=htmx)
        assert response.status_code == 400
        assert "At least 2 players are needed" in error_text(response)
        assert is_partial(response) == htmx
    assert snapshot(ann.code) == before


def test_start_by_a_guest_or_spectator(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    watcher = browser()
    watcher.get(f"/t/{ann.code}")
    before = snapshot(ann.code)
    for who in (bob, watcher):
        response = who.post(f"/t/{ann.code}/start", {"version": ann.version()})
        assert response.status_code == 403
    assert snapshot(ann.code) == before


@each("version", ["0", "abc", ""])
def test_start_with_a_stale_version_shows_the_table(browser, version):
    ann, bob = seat_table(browser, ("Ann", "Bob"))  # version is 1 after Bob joined
    before = snapshot(ann.code)
    response = ann.post(f"/t/{ann.code}/start", {"version": version})
    assert response.status_code == 409
    doc = parse(response.data)
    assert "The table changed before your action arrived" in doc.find("p", cls="error").text()
    assert data_version(doc) == before[1]
    assert snapshot(ann.code) == before
    htmx = ann.post(f"/t/{ann.code}/start", {"version": version}, htmx=True)
    assert htmx.status_code == 200 and is_partial(htmx)
    assert snapshot(ann.code) == before


def test_start_twice(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    start(ann)
    before = snapshot(ann.code)
    response = ann.post(f"/t/{ann.code}/start", {"version": ann.version()})
    assert response.status_code == 409
    assert "The game has already started." in error_text(response)
    assert snapshot(ann.code) == before

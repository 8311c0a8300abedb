"""The table blueprint: every route at /t/<code>, with good and bad input, with and
without htmx. Bad input must change nothing: the Table row (status, version, rules,
state, votes) and the seats are compared before and after."""

from __future__ import annotations

import json
import random

import pytest
from web_helpers import (
    Player,
    data_version,
    each,
    form_posting_to,
    game_of,
    grid_form,
    move_form,
    parse,
    play_until,
    seat_of,
    seat_table,
    snapshot,
    start,
    table_row,
    whose_turn,
)

from app.engine import GONE, UP
from app.models import Seat, Table

NOT_FOUND = "There is no table with that code."


def is_partial(response) -> bool:
    body = response.data.decode()
    doc = parse(body)
    return "<html" not in body and doc.by_id("table") is not None


def error_text(response) -> str:
    doc = parse(response.data)
    return " ".join(n.text() for n in doc.find_all(cls="error"))


def playing(browser, names=("Ann", "Bob"), **rules):
    """Two or more people in play (no setup flips), rows × cols 3 × 4."""
    people = seat_table(browser, names, initial_flips=0, **rules)
    start(people[0])
    assert game_of(people[0].code).phase == "play"
    return people


# ----- GET /t/<code> -----------------------------------------------------------------------
@each("htmx", [False, True])
def test_unknown_table_is_a_clear_404(client, htmx):
    headers = {"HX-Request": "true"} if htmx else {}
    response = client.get("/t/NOSUCH", headers=headers)
    assert response.status_code == 404
    doc = parse(response.data)
    assert doc.find("h1").text() == "Not found"
    assert doc.find("p", cls="error").text() == NOT_FOUND
    assert doc.find("a", href="/") is not None


def test_table_page_for_a_visitor(browser):
    (ann,) = seat_table(browser, ("Ann",))
    visitor = browser()
    response = visitor.get(f"/t/{ann.code.lower()}")
    assert response.status_code == 200
    doc = parse(response.data)
    assert f"Table {ann.code}" in doc.find("span", cls="code").text()
    live = doc.by_id("live")
    # Pushes in its language; the page's version (the table is sent on connect if newer).
    assert live.attrs["ws-connect"] == f"/t/{ann.code}/ws?lang=en&v=0"
    assert doc.find("input", id="invite").attrs["value"] == f"http://localhost/t/{ann.code}"
    assert doc.find("svg") is not None  # the QR code of the invite link
    assert doc.find("form", action=f"/t/{ann.code}/join") is not None
    assert doc.by_id("rules-form") is None and doc.by_id("rules-summary") is not None
    assert doc.find("form", action=f"/t/{ann.code}/start") is None
    assert "Join to play" in doc.text()


def test_table_partial_for_htmx(browser):
    (ann,) = seat_table(browser, ("Ann",))
    response = ann.get(f"/t/{ann.code}", headers={"HX-Request": "true"})
    assert response.status_code == 200 and is_partial(response)
    doc = parse(response.data)
    assert data_version(doc) == table_row(ann.code).version


def test_mode_links_only_work_on_your_turn(browser):
    ann, bob = playing(browser)
    current, (other,) = whose_turn(ann.code, [ann, bob])
    take = parse(current.get(f"/t/{ann.code}?mode=take").data)
    assert grid_form(take).find("input", name="type").attrs["value"] == "take_discard"
    # The other player, or a mode that does not exist, gets the plain table.
    for b, query in ((other, "?mode=take"), (current, "?mode=flip"), (current, "?mode=x")):
        doc = parse(b.get(f"/t/{ann.code}{query}").data)
        assert grid_form(doc) is None


# ----- POST /t/<code>/join -------------------------------------------------------------------
def test_join_takes_a_seat_and_remembers_it(browser):
    (ann,) = seat_table(browser, ("Ann",))
    bob = browser()
    before = table_row(ann.code).version
    response = bob.join(ann.code, "Bob")
    assert response.status_code == 303
    assert response.headers["Location"].endswith(f"/t/{ann.code}")
    seat = seat_of(ann.code, "Bob")
    assert seat.position == 1 and seat.bot is None
    assert table_row(ann.code).version == before + 1
    doc = parse(bob.page())
    me = doc.by_id("seats").find("li", cls="me")
    assert "Bob" in me.text() and "you" in me.text()
    assert doc.by_id("join") is None
    assert "Waiting for the host" in doc.text()
    # The invite link opened again on the same device returns to the seat.
    again = bob.join(ann.code, "Robert")
    assert again.status_code == 303
    assert Seat.select().where(Seat.table == ann.code).count() == 2


def test_join_with_htmx_reloads_the_page(browser):
    (ann,) = seat_table(browser, ("Ann",))
    bob = browser()
    bob.get(f"/t/{ann.code}")
    response = bob.post(f"/t/{ann.code}/join", {"name": "Bob"}, htmx=True)
    assert response.status_code == 204
    assert response.headers["HX-Refresh"] == "true"
    assert seat_of(ann.code, "Bob").position == 1
    # Seated already: htmx gets the table back.
    again = bob.post(f"/t/{ann.code}/join", {"name": "Bob"}, htmx=True)
    assert again.status_code == 200 and is_partial(again)


@each(
    "name, message, status",
    [
        ("", "Type a name.", 400),
        ("    ", "Type a name.", 400),
        ("z" * 21, "A name has at most 20 characters.", 400),
        ("aNN", "aNN is already at this table: pick another name.", 400),
        (" ann ", "ann is already at this table: pick another name.", 400),
        ("tab\there\x07", "That name has characters we cannot show.", 400),
    ],
)
@each("htmx", [False, True])
def test_join_refuses_a_bad_name(browser, name, message, status, htmx):
    (ann,) = seat_table(browser, ("Ann",))
    bob = browser()
    bob.get(f"/t/{ann.code}")
    before = snapshot(ann.code)
    response = bob.post(f"/t/{ann.code}/join", {"name": name}, htmx=htmx)
    assert response.status_code == status
    assert is_partial(response) == htmx
    doc = parse(response.data)
    field = doc.find("input", id="join-name")
    assert field.attrs.get("aria-invalid") == "true"
    assert doc.by_id(field.attrs["aria-describedby"]).text() == message
    assert snapshot(ann.code) == before


def test_join_shows_a_html_name_escaped_to_everyone(browser):
    (ann,) = seat_table(browser, ("Ann",))
    eve = browser()
    assert eve.join(ann.code, "<script>x").status_code == 303
    assert seat_of(ann.code, "<script>x").position == 1
    for page in (ann.page(), eve.page()):
        assert "&lt;script&gt;x" in page
        assert "<script>x" not in page
        doc = parse(page)
        assert all(s.attrs.get("src") for s in doc.find_all("script"))


def test_join_a_full_table(browser):
    people = seat_table(browser, ("P1", "P2", "P3", "P4"), bots=("random",) * 4)
    code = people[0].code
    late = browser()
    doc = parse(late.get(f"/t/{code}").data)
    assert "This table is full." in doc.by_id("join").text()
    assert doc.find("form", action=f"/t/{code}/join") is None
    before = snapshot(code)
    for htmx in (False, True):
        response = late.post(f"/t/{code}/join", {"name": "Late"}, htmx=htmx)
        assert response.status_code == 409
        assert "This table is full." in error_text(response)
        assert is_partial(response) == htmx
    assert snapshot(code) == before


def test_join_a_started_table(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    start(ann)
    cat = browser()
    before = snapshot(ann.code)
    response = cat.join(ann.code, "Cat")
    assert response.status_code == 409
    assert "This game has already started: you can watch it." in error_text(response)
    assert snapshot(ann.code) == before
    # A spectator sees the game, without a seat.
    doc = parse(cat.page())
    assert doc.find("div", cls="board") is not None
    assert doc.find("section", cls="mine-wrap") is None


def test_join_an_unknown_table(browser):
    bob = browser()
    response = bob.join("NOSUCH", "Bob")
    assert response.status_code == 404
    assert NOT_FOUND in error_text(response)


# ----- POST /t/<code>/rules ------------------------------------------------------------------
GOOD_RULES = {
    "end_score": "50",
    "rows": "2",
    "cols": "3",
    "initial_flips": "1",
    "penalty_mode": "both",
    "penalty_multiplier": "3",
    "penalty_flat": "20",
    "reseat": "round",
    "clear_rows": "on",
    "public": "on",
}


@each("htmx", [False, True])
def test_host_sets_the_rules(browser, htmx):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    before = table_row(ann.code).version
    response = ann.post(f"/t/{ann.code}/rules", GOOD_RULES, htmx=htmx)
    if htmx:
        assert response.status_code == 200 and is_partial(response)
        assert data_version(parse(response.data)) == before + 1
    else:
        assert response.status_code == 303
        assert response.headers["Location"].endswith(f"/t/{ann.code}")
    table = table_row(ann.code)
    assert table.version == before + 1 and table.public is True
    assert table.rules == {
        "rows": 2,
        "cols": 3,
        "initial_flips": 1,
        "end_score": 50,
        "clear_rows": True,
        "penalty": {"mode": "both", "multiplier": 3, "flat": 20},
        "show_running_score": False,
        "reseat": "round",
    }
    # The guest sees a summary; the host's form shows the stored values.
    summary = parse(bob.page()).by_id("rules-summary").text()
    for shown in ("50", "2 rows × 3 columns", "×3 then +20", "hidden until the end"):
        assert shown in summary
    assert "shuffled every round" in summary
    form = parse(ann.page()).by_id("rules-form")
    assert form.find("input", name="end_score").attrs["value"] == "50"
    assert "checked" in form.find("input", name="clear_rows").attrs
    assert "checked" not in form.find("input", name="show_running_score").attrs


BAD_RULES = {
    "end_score": ["9", "1001", "fifty", "12.5"],
    "rows": ["1", "4", "x"],
    "cols": ["1", "5", "2c"],
    "initial_flips": ["-1", "5", "two"],
    "penalty_multiplier": ["1", "6", "x2"],
    "penalty_flat": ["0", "51", "ten"],
    "penalty_mode": ["triple"],
    "reseat": ["always"],
}


@each("field", BAD_RULES)
def test_bad_rule_values_change_nothing(browser, field):
    (ann,) = seat_table(browser, ("Ann",))
    before = snapshot(ann.code)
    for value in BAD_RULES[field]:
        for htmx in (False, True):
            case = f"{field}={value!r} htmx={htmx}"
            response = ann.post(f"/t/{ann.code}/rules", {**GOOD_RULES, field: value}, htmx=htmx)
            assert 400 <= response.status_code < 500, case
            assert is_partial(response) == htmx, case
            doc = parse(response.data)
            control = doc.find(name=field)
            box = control.ancestor("field")
            errors = box.find_all(cls="error")
            assert len(errors) == 1 and errors[0].text().strip(), case
            assert doc.find_all(cls="error") == errors, case  # one message, by its field
            if control.tag == "input":
                assert control.attrs.get("aria-invalid") == "true", case
                assert control.attrs["value"] == value, case  # kept, to be corrected
            assert snapshot(ann.code) == before, case


def test_initial_flips_must_be_fewer_than_the_cards(browser):
    (ann,) = seat_table(browser, ("Ann",))
    before = snapshot(ann.code)
    form = {**GOOD_RULES, "rows": "2", "cols": "2", "initial_flips": "4"}
    response = ann.post(f"/t/{ann.code}/rules", form)
    assert response.status_code == 400
    doc = parse(response.data)
    box = doc.find("input", name="initial_flips").ancestor("field")
    assert "Cards turned at the start must be from 0 to 3" in box.find(cls="error").text()
    assert snapshot(ann.code) == before


def test_rules_by_a_guest_or_a_spectator_are_refused(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    watcher = browser()
    watcher.get(f"/t/{ann.code}")
    before = snapshot(ann.code)
    for who in (bob, watcher):
        for htmx in (False, True):
            response = who.post(f"/t/{ann.code}/rules", GOOD_RULES, htmx=htmx)
            assert response.status_code == 403
            assert "Only the host can do that." in error_text(response)
            assert is_partial(response) == htmx
    assert snapshot(ann.code) == before


def test_rules_after_the_start_are_refused(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    start(ann)
    before = snapshot(ann.code)
    response = ann.post(f"/t/{ann.code}/rules", GOOD_RULES)
    assert response.status_code == 409
    assert "The game has already started." in error_text(response)
    assert snapshot(ann.code) == before


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


# ----- POST /t/<code>/move ----------------------------------------------------------------
@each("htmx", [False, True])
def test_a_move_through_the_page(browser, htmx):
    ann, bob = playing(browser)
    current, _ = whose_turn(ann.code, [ann, bob])
    doc = parse(current.page())
    form = move_form(doc, "draw")
    data = {i.attrs["name"]: i.attrs["value"] for i in form.find_all("input")}
    before = table_row(ann.code).version
    response = current.post(form.attrs["action"], data, htmx=htmx)
    game = game_of(ann.code)
    assert game.round.drawn is not None
    assert table_row(ann.code).version == before + 1
    if htmx:
        assert response.status_code == 200 and is_partial(response)
        doc = parse(response.data)
        assert data_version(doc) == before + 1
    else:
        assert response.status_code == 303
        doc = parse(current.page())
    drawn = doc.find("span", cls="lifted")
    assert drawn.attrs["aria-label"] == f"Your drawn card: {game.round.drawn}"
    assert grid_form(doc).find("input", name="type").attrs["value"] == "keep_drawn"


def test_not_your_turn(browser):
    ann, bob = playing(browser)
    current, (other,) = whose_turn(ann.code, [ann, bob])
    name = current.name
    assert move_form(parse(other.page()), "draw") is None  # nothing offered
    before = snapshot(ann.code)
    for data in ({"type": "draw"}, {"type": "take_discard", "pos": "0-0"}):
        for htmx in (False, True):
            response = other.post(
                f"/t/{ann.code}/move", {**data, "version": other.version()}, htmx=htmx
            )
            assert response.status_code == 409
            assert f"It is {name}'s turn" in error_text(response)
            assert is_partial(response) == htmx
    assert snapshot(ann.code) == before


@each(
    "data, status, message",
    [
        ({"type": "take_discard", "pos": "9-0"}, 409, "There is no card at that position"),
        ({"type": "take_discard", "pos": "0-9"}, 409, "There is no card at that position"),
        ({"type": "take_discard", "pos": "-1-0"}, 400, "That is not a position on your grid."),
        ({"type": "take_discard", "pos": "abc"}, 400, "That is not a position on your grid."),
        ({"type": "take_discard", "pos": "1"}, 400, "That is not a position on your grid."),
        ({"type": "take_discard", "pos": "1-x"}, 400, "That is not a position on your grid."),
        ({"type": "take_discard"}, 400, "That is not a position on your grid."),
        ({"type": "take_discard", "row": "a", "col": "1"}, 400, "not a position"),
        ({"type": "keep_drawn", "pos": "0-0"}, 409, "Draw a card first"),
        ({"type": "discard_drawn", "pos": "0-0"}, 409, "Draw a card first"),
        ({"type": "reveal", "pos": "0-0"}, 409, "Play has started"),
        ({"type": "cheat", "pos": "0-0"}, 400, "That is not a move of this game."),
        ({"type": ""}, 400, "That is not a position on your grid."),
    ],
)
def test_illegal_moves_change_nothing(browser, data, status, message):
    ann, bob = playing(browser)
    current, _ = whose_turn(ann.code, [ann, bob])
    before = snapshot(ann.code)
    response = current.post(f"/t/{ann.code}/move", {**data, "version": current.version()})
    assert response.status_code == status
    assert message in error_text(response)
    assert snapshot(ann.code) == before


def test_row_and_col_fields_work_too(browser):
    ann, bob = playing(browser)
    current, _ = whose_turn(ann.code, [ann, bob])
    version = current.version()
    data = {"type": "take_discard", "row": "1", "col": "2", "version": version}
    assert current.post(f"/t/{ann.code}/move", data).status_code == 303
    grid = game_of(ann.code).round.grids[seat_of(ann.code, current.name).player_id]
    assert grid.state[grid.index(1, 2)] == UP


def test_flipping_a_face_up_card_after_drawing(browser):
    ann, bob = playing(browser)
    first, (second,) = whose_turn(ann.code, [ann, bob])
    assert first.move("take_discard", (0, 0)).status_code == 303  # (0, 0) is face up now
    assert second.move("take_discard", (0, 0)).status_code == 303
    assert first.move("draw").status_code == 303
    doc = parse(first.get(f"/t/{ann.code}?mode=flip").data)
    offered = [b.attrs["value"] for b in grid_form(doc).find_all("button", name="pos")]
    assert "0-0" not in offered and len(offered) == 11
    before = snapshot(ann.code)
    response = first.move("discard_drawn", (0, 0))
    assert response.status_code == 409
    assert "That card is already face up" in error_text(response)
    assert snapshot(ann.code) == before


def test_revealing_a_face_up_card_in_setup(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    start(ann)
    assert ann.move("reveal", (1, 1)).status_code == 303
    doc = parse(ann.page())
    offered = [b.attrs["value"] for b in grid_form(doc).find_all("button", name="pos")]
    assert "1-1" not in offered and len(offered) == 11
    before = snapshot(ann.code)
    response = ann.move("reveal", (1, 1))
    assert response.status_code == 409
    assert "That card is already face up" in error_text(response)
    assert snapshot(ann.code) == before
    assert ann.move("reveal", (2, 3)).status_code == 303
    # Both turned: Ann waits for Bob, and may not turn a third.
    assert "Waiting for Bob" in parse(ann.page()).find("p", cls="banner").text()
    before = snapshot(ann.code)
    response = ann.move("reveal", (0, 0))
    assert response.status_code == 409
    assert "You have already turned your first cards" in error_text(response)
    assert snapshot(ann.code) == before


def clear_first_column(code: str, name: str) -> None:
    """Test set-up: the player's first column has been cleared."""
    table = table_row(code)
    game = game_of(code)
    grid = game.round.grids[seat_of(code, name).player_id]
    for r in range(grid.rows):
        grid.state[grid.index(r, 0)] = GONE
    table.state = game.to_dict()
    table.save()


def test_a_cleared_card_cannot_be_chosen(browser):
    ann, bob = playing(browser)
    current, _ = whose_turn(ann.code, [ann, bob])
    clear_first_column(ann.code, current.name)
    doc = parse(current.get(f"/t/{ann.code}?mode=take").data)
    offered = [b.attrs["value"] for b in grid_form(doc).find_all("button", name="pos")]
    assert offered and not any(v.endswith("-0") for v in offered)
    assert len(doc.find("form", cls="mine").find_all("span", cls="gone")) == 3
    before = snapshot(ann.code)
    for kind in ("take_discard",):
        response = current.move(kind, (1, 0))
        assert response.status_code == 409
        assert "That card was cleared from the grid" in error_text(response)
    assert snapshot(ann.code) == before
    assert current.move("draw").status_code == 303
    drawn = snapshot(ann.code)
    for kind in ("keep_drawn", "discard_drawn"):
        response = current.move(kind, (2, 0))
        assert response.status_code == 409
        assert "That card was cleared from the grid" in error_text(response)
    assert snapshot(ann.code) == drawn


def test_moves_by_a_spectator_or_in_the_lobby(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    before = snapshot(ann.code)
    response = ann.post(f"/t/{ann.code}/move", {"type": "draw", "version": ann.version()})
    assert response.status_code == 409
    assert "There is no game in progress." in error_text(response)
    assert snapshot(ann.code) == before
    start(ann)
    watcher = browser()
    watcher.get(f"/t/{ann.code}")
    before = snapshot(ann.code)
    response = watcher.post(f"/t/{ann.code}/move", {"type": "reveal", "pos": "0-0", "version": "2"})
    assert response.status_code == 403
    assert "You are watching this table" in error_text(response)
    assert snapshot(ann.code) == before


@each("htmx", [False, True])
def test_a_repeated_move_applies_once(browser, htmx):
    ann, bob = playing(browser)
    current, _ = whose_turn(ann.code, [ann, bob])
    version = table_row(ann.code).version
    data = {"type": "take_discard", "pos": "0-0", "version": str(version)}
    first = current.post(f"/t/{ann.code}/move", data, htmx=htmx)
    assert first.status_code == (200 if htmx else 303)
    after = snapshot(ann.code)
    assert after[1] == version + 1
    # The same form sent again (a double click, a retry): the table as it is now.
    second = current.post(f"/t/{ann.code}/move", data, htmx=htmx)
    assert second.status_code == (200 if htmx else 409)
    assert is_partial(second) == htmx
    doc = parse(second.data)
    assert "The table changed before your action arrived" in doc.find("p", cls="error").text()
    assert data_version(doc) == version + 1
    assert snapshot(ann.code) == after  # applied exactly once


@each("version", ["", "abc", "-5", "99999"])
def test_a_move_with_a_bad_version(browser, version):
    ann, bob = playing(browser)
    current, _ = whose_turn(ann.code, [ann, bob])
    before = snapshot(ann.code)
    response = current.post(f"/t/{ann.code}/move", {"type": "draw", "version": version})
    assert response.status_code == 409
    assert "The table changed" in error_text(response)
    assert snapshot(ann.code) == before


# ----- POST /t/<code>/next-round ----------------------------------------------------------
def test_next_round_only_when_a_round_is_over(browser):
    ann, bob = playing(browser)
    watcher = browser()
    watcher.get(f"/t/{ann.code}")
    before = snapshot(ann.code)
    response = ann.post(f"/t/{ann.code}/next-round", {"version": ann.version()})
    assert response.status_code == 409
    assert "The round is not over." in error_text(response)
    response = watcher.post(f"/t/{ann.code}/next-round", {"version": ann.version()})
    assert response.status_code == 403
    assert snapshot(ann.code) == before


# ----- POST /t/<code>/leave -------------------------------------------------------------------
def test_leave_without_a_game(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    watcher = browser()
    watcher.get(f"/t/{ann.code}")
    before = snapshot(ann.code)
    response = ann.post(f"/t/{ann.code}/leave")
    assert response.status_code == 409
    assert "There is no game in progress." in error_text(response)
    start(ann)
    started = snapshot(ann.code)
    response = watcher.post(f"/t/{ann.code}/leave")
    assert response.status_code == 403
    assert snapshot(ann.code) == started
    assert before[0] == "lobby"


@each("htmx", [False, True])
def test_leave_in_a_three_player_game_goes_on(browser, htmx):
    ann, bob, cat = seat_table(browser, ("Ann", "Bob", "Cat"))
    start(ann)
    doc = parse(bob.page())
    form = form_posting_to(doc, "/leave")
    assert "hx-confirm" in form.attrs
    response = bob.post(form.attrs["action"], {}, htmx=htmx)
    assert response.status_code == (200 if htmx else 303)
    game = game_of(ann.code)
    assert game.forfeited == [seat_of(ann.code, "Bob").player_id]
    assert game.phase == "setup" and table_row(ann.code).status == Table.PLAYING
    doc = parse(bob.page())
    assert form_posting_to(doc, "/leave") is None and grid_form(doc) is None
    text = parse(ann.page()).text()
    assert "Bob left the game" in text
    before = snapshot(ann.code)
    again = bob.post(f"/t/{ann.code}/leave")
    assert again.status_code == 409
    assert "You have left this game" in error_text(again)
    assert snapshot(ann.code) == before


# ----- POST /t/<code>/rematch and /rematch/start ------------------------------------------
def test_rematch_only_after_the_game(browser):
    ann, bob = playing(browser)
    watcher = browser()
    watcher.get(f"/t/{ann.code}")
    before = snapshot(ann.code)
    for url in ("/rematch", "/rematch/start"):
        response = ann.post(f"/t/{ann.code}{url}", {"version": ann.version()})
        assert response.status_code == 409
        assert "The game is not over yet." in error_text(response)
        response = watcher.post(f"/t/{ann.code}{url}", {"version": ann.version()})
        assert response.status_code in (403, 409)
    assert snapshot(ann.code) == before


def finish_small_game(browser, names=("Ann", "Bob"), bots=(), **rules):
    people = seat_table(
        browser, names, bots=bots, rows=2, cols=2, end_score=10, initial_flips=0, **rules
    )
    start(people[0])
    rng = random.Random(7)
    players = [Player(b, b.name, rng) for b in people]
    while play_until(players) != "game_over":
        for p in players:
            form = form_posting_to(p.get(), "/next-round")
            if form is not None:
                p.submit(form)
    return people


def test_rematch_needs_two_players_and_an_opt_in(browser):
    ann, bob = finish_small_game(browser)
    watcher = browser()
    watcher.get(f"/t/{ann.code}")
    before = snapshot(ann.code)
    # Bob has not opted in: he may not start it; a spectator may not opt in.
    response = bob.post(f"/t/{ann.code}/rematch/start", {"version": bob.version()})
    assert response.status_code == 409 and "Choose to play again first." in error_text(response)
    response = watcher.post(f"/t/{ann.code}/rematch", {"version": bob.version()})
    assert response.status_code == 403
    assert snapshot(ann.code) == before
    # Only the host is in: not enough.
    assert ann.post(f"/t/{ann.code}/rematch", {"version": ann.version()}).status_code == 303
    opted = snapshot(ann.code)
    response = ann.post(f"/t/{ann.code}/rematch/start", {"version": ann.version()})
    assert response.status_code == 400
    assert "At least 2 players must choose to play again." in error_text(response)
    assert snapshot(ann.code) == opted
    # A press of "Play again" counts whatever version its page had (votes are
    # idempotent: pressing at the same moment as someone else must not fail).
    bob_id = Seat.get((Seat.table == ann.code) & (Seat.name == "Bob")).id
    response = bob.post(f"/t/{ann.code}/rematch", {"version": str(opted[1] - 1)})
    assert response.status_code == 303
    assert bob_id in table_row(ann.code).votes["rematch"]
    again = snapshot(ann.code)
    assert bob.post(f"/t/{ann.code}/rematch", {"version": "0"}).status_code == 303
    assert snapshot(ann.code) == again  # a second press changes nothing


# ----- GET /t/<code>/games/<n>/record.json ------------------------------------------------------
def test_record_download(browser, client):
    ann, bob = finish_small_game(browser)
    doc = parse(ann.page())
    link = doc.find("a", href=f"/t/{ann.code}/games/1/record.json")
    assert link.text() == "Download the game record" and "download" in link.attrs
    response = client.get(link.attrs["href"].lower())
    assert response.status_code == 200
    assert response.mimetype == "application/json"
    disposition = response.headers["Content-Disposition"]
    assert disposition == f'attachment; filename="skymo-{ann.code}-1.json"'
    record = json.loads(response.data)
    assert record["format"] == "skymo.game/1" and record["final"]["ended"] is True


def test_record_not_there(browser, client):
    ann, bob = playing(browser)
    assert client.get(f"/t/{ann.code}/games/1/record.json").status_code == 404  # not over
    assert client.get(f"/t/{ann.code}/games/0/record.json").status_code == 404
    assert client.get("/t/NOSUCH/games/1/record.json").status_code == 404
    assert client.get(f"/t/{ann.code}/games/x/record.json").status_code == 404


# ----- CSRF on every POST ------------------------------------------------------------------
def lobby_case(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    return ann.code, {
        "join": (browser(), "/join", {"name": "Cat"}),
        "rules": (ann, "/rules", GOOD_RULES),
        "bots": (ann, "/bots", {"bot": "greedy"}),
        "remove": (ann, f"/seats/{seat_of(ann.code, 'Bob').id}/remove", {}),
        "leave-seat": (bob, f"/seats/{seat_of(ann.code, 'Bob').id}/remove", {}),
        "start": (ann, "/start", {"version": ann.version()}),
    }


def game_case(browser):
    ann, bob = playing(browser)
    current, _ = whose_turn(ann.code, [ann, bob])
    v = {"version": ann.version()}
    return ann.code, {
        "move": (current, "/move", {"type": "draw", **v}),
        "leave": (current, "/leave", {}),
    }


def over_case(browser):
    ann, bob = finish_small_game(browser)
    v = {"version": ann.version()}
    return ann.code, {
        "rematch": (ann, "/rematch", v),
        "rematch-start": (ann, "/rematch/start", v),
        "next-round": (ann, "/next-round", v),
    }


@pytest.mark.parametrize("case", [lobby_case, game_case, over_case])
def test_every_post_needs_the_csrf_token(browser, case):
    code, posts = case(browser)
    for label, (who, url, data) in posts.items():
        who.get(f"/t/{code}")
        for token in (None, "", "forged-token"):
            for htmx in (False, True):
                before = snapshot(code)
                form = dict(data)
                if token is not None:
                    form["csrf_token"] = token
                headers = {"HX-Request": "true"} if htmx else {}
                response = who.client.post(f"/t/{code}{url}", data=form, headers=headers)
                what = f"{label} token={token!r} htmx={htmx}"
                assert response.status_code == 400, what
                assert "This form has expired" in response.data.decode(), what
                assert snapshot(code) == before, what
        # The same request with the token goes through (the case is a real one).
        if label in ("rules", "bots", "move", "leave", "rematch"):
            response = who.post(f"/t/{code}{url}", data)
            assert response.status_code == 303, label
            assert snapshot(code) != before, label


def test_a_token_of_another_session_is_refused(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    before = snapshot(ann.code)
    response = ann.client.post(
        f"/t/{ann.code}/bots", data={"bot": "greedy", "csrf_token": bob.csrf}
    )
    assert response.status_code == 400
    assert snapshot(ann.code) == before


def test_the_htmx_header_token_is_accepted(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    doc = parse(ann.get(f"/t/{ann.code}").data)
    header = json.loads(doc.find("body").attrs["hx-headers"])
    response = ann.client.post(
        f"/t/{ann.code}/bots",
        data={"bot": "greedy"},
        headers={"HX-Request": "true", **header},
    )
    assert response.status_code == 200 and is_partial(response)
    assert Seat.select().where((Seat.table == ann.code) & (Seat.bot == "greedy")).count() == 1
    # A forged header is refused (CSRFProtect reads the form field first, then it).
    response = ann.client.post(
        f"/t/{ann.code}/bots", data={"bot": "greedy"}, headers={"X-CSRF-Token": "forged"}
    )
    assert response.status_code == 400


# ----- unknown tables on every POST ------------------------------------------------------------
@each(
    "url",
    [
        "/join",
        "/rules",
        "/bots",
        "/seats/1/remove",
        "/start",
        "/move",
        "/next-round",
        "/leave",
        "/rematch",
        "/rematch/start",
    ],
)
def test_posts_to_an_unknown_table(browser, url):
    ann = browser()
    response = ann.post(f"/t/NOSUCH{url}", {"name": "Ann", "version": "0", "type": "draw"})
    assert response.status_code == 404
    assert NOT_FOUND in error_text(response)


# ----- issue 11: Start sends the rules form; a full table offers watching; game numbers ------
def test_start_saves_the_rules_form_as_it_stands(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    doc = parse(ann.page())
    button = next(
        b for b in doc.find_all("button") if b.attrs.get("formaction", "").endswith("/start")
    )
    assert button.attrs["form"] == "rules" and doc.find("form", id="rules") is not None
    form = {**GOOD_RULES, "end_score": "15", "version": ann.version()}
    response = ann.post(f"/t/{ann.code}/start", form, htmx=True)
    assert response.status_code == 200
    table = table_row(ann.code)
    assert table.status == Table.PLAYING
    assert game_of(ann.code).rules.end_score == 15 and game_of(ann.code).rules.cols == 3


@each("htmx", [False, True])
def test_start_with_a_bad_rule_starts_nothing_and_says_why_at_the_field(browser, htmx):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    before = snapshot(ann.code)
    form = {**GOOD_RULES, "rows": "2", "cols": "2", "initial_flips": "4", "version": ann.version()}
    response = ann.post(f"/t/{ann.code}/start", form, htmx=htmx)
    assert response.status_code == 400
    doc = parse(response.data)
    field = doc.by_id("r-flips")
    assert field.attrs["aria-invalid"] == "true" and field.attrs["value"] == "4"
    assert "Cards turned at the start" in doc.by_id("r-flips-error").text()
    assert doc.find("details", cls="fold").attrs.get("open") is not None  # unfolded
    assert snapshot(ann.code) == before
    # A stale page's Start changes nothing either.
    stale = {**GOOD_RULES, "version": str(int(ann.version()) - 1)}
    assert ann.post(f"/t/{ann.code}/start", stale).status_code == 409
    assert snapshot(ann.code) == before


def test_a_full_table_offers_watching_not_joining(browser):
    people = seat_table(browser, ("P1", "P2", "P3", "P4"), bots=("random",) * 4)
    late = browser()
    doc = parse(late.get(f"/t/{people[0].code}").data)
    join = doc.by_id("join")
    assert join.find("form") is None and join.find("input") is None
    assert "Watch this game" in join.text() and "You can watch" in join.text()
    assert "stay on this page to watch" in doc.by_id("lobby-actions").text()


def test_a_rematch_says_which_game_it_is(browser):
    ann, bob = finish_small_game(browser)
    assert "Game 2" not in ann.page()
    for who in (ann, bob):
        assert who.post(f"/t/{ann.code}/rematch", {"version": who.version()}).status_code == 303
    assert ann.post(f"/t/{ann.code}/rematch/start", {"version": ann.version()}).status_code == 303
    roundline = parse(bob.page()).find("p", cls="roundline")
    assert roundline.find("span").text() == "Game 2 · Round 1"

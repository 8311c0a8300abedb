"""The table blueprint in play: moves, the next round, leaving, rematches, records.

Every route at /t/<code>, with good and bad input, with and without htmx. Bad input must
change nothing: the Table row (status, version, rules, state, votes) and the seats are
compared before and after."""

from __future__ import annotations

import json

from app.engine import GONE, UP
from app.storage.models import Seat, Table
from tests.web.table_helpers import error_text, finish_small_game, is_partial, playing
from tests.web.web_helpers import (
    data_version,
    each,
    form_posting_to,
    game_of,
    grid_form,
    move_form,
    parse,
    seat_of,
    seat_table,
    snapshot,
    start,
    table_row,
    whose_turn,
)


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


def test_setup_reveals_at_once_all_count(browser):
    """Everyone turns their first cards together: a reveal chosen on a page that others'
    reveals have since made old still counts, and the rules still hold."""
    ann, bob = seat_table(browser, initial_flips=2)
    start(ann)
    shown = table_row(ann.code).version  # the page both of them see
    for person, pos in ((ann, "0-0"), (bob, "1-1"), (ann, "2-3")):
        data = {"type": "reveal", "pos": pos, "version": str(shown)}
        response = person.post(f"/t/{ann.code}/move", data, htmx=True)
        assert response.status_code == 200, error_text(response)
    game = game_of(ann.code)
    assert table_row(ann.code).version == shown + 3
    ann_id, bob_id = seat_of(ann.code, "Ann").player_id, seat_of(ann.code, "Bob").player_id
    assert game.round.grids[ann_id].state[0] == UP
    assert game.round.grids[ann_id].state[11] == UP
    assert game.round.grids[bob_id].state[5] == UP
    # A card already face up, a page this table never showed, a third reveal: refused.
    for person, pos, version, said in (
        (bob, "1-1", shown, "already face up"),
        (bob, "0-1", shown + 99, "The table changed"),
        (bob, "0-1", "abc", "The table changed"),
        (ann, "0-1", shown, ""),
    ):
        before = snapshot(ann.code)
        data = {"type": "reveal", "pos": pos, "version": str(version)}
        response = person.post(f"/t/{ann.code}/move", data)
        assert response.status_code in (400, 409), pos
        assert said in error_text(response)
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


def test_rematch_needs_two_players_and_an_opt_in(browser):
    ann, bob = finish_small_game(browser)
    watcher = browser()
    watcher.get(f"/t/{ann.code}")
    before = snapshot(ann.code)
    # Bob, a guest, may not start it; a spectator may not opt in.
    response = bob.post(f"/t/{ann.code}/rematch/start", {"version": bob.version()})
    assert response.status_code == 403
    assert "Only Ann can start the rematch." in error_text(response)
    response = watcher.post(f"/t/{ann.code}/rematch", {"version": bob.version()})
    assert response.status_code == 403
    assert snapshot(ann.code) == before
    # Only the host is in: not enough.
    opted = snapshot(ann.code)
    response = ann.post(f"/t/{ann.code}/rematch/start", {"version": ann.version()})
    assert response.status_code == 400
    assert "At least 2 players must choose to play again." in error_text(response)
    assert snapshot(ann.code) == opted
    # Her page offers no start that must fail: it says what the rematch waits for.
    alone = ann.page()
    assert "Start the rematch" not in alone
    assert "The rematch can start once another player chooses Play again." in alone
    # A press of "Play again" counts whatever version its page had (votes are
    # idempotent: pressing at the same moment as someone else must not fail).
    bob_id = Seat.get((Seat.table == ann.code) & (Seat.name == "Bob")).id
    response = bob.post(f"/t/{ann.code}/rematch", {"version": str(opted[1] - 1)})
    assert response.status_code == 303
    assert bob_id in table_row(ann.code).votes["rematch"]
    assert "Start the rematch" in ann.page()  # now it can start
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

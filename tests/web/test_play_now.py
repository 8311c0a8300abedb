"""Play now (app/tables/quickplay.py): a seat at a public table waiting for players (its
host present, the default rules), or a new public table that starts by itself with bots
in the empty seats; "Start now"; never more than four seats, whoever presses at once."""

from __future__ import annotations

import threading
import time

from app import tables
from app.engine import Game
from app.storage.models import Seat, Table
from tests.conftest import LiveServer
from tests.web.live_helpers import HttpBrowser
from tests.web.web_helpers import parse


def press(who, name):
    response = who.post("/play", {"name": name})
    if response.status_code == 303:
        who.code = response.headers["Location"].rsplit("/", 1)[1]
    return response


def seats_at(code) -> list[Seat]:
    return list(Seat.select().where((Seat.table == code) & (Seat.left == False)))  # noqa: E712


def test_the_home_page_offers_play_now_with_the_name_field(browser):
    page = parse(browser().get("/").data)
    button = page.find("button", formaction="/play")
    assert button is not None and button.text() == "Play now"
    assert button.ancestor("stack").find("input", name="name") is not None


def test_a_name_is_needed(browser):
    ann = browser()
    response = ann.post("/play", {"name": "  "})
    assert response.status_code == 400 and "Type a name." in response.data.decode()
    assert Table.select().count() == 0


def test_the_first_presser_opens_a_public_table_that_starts_by_itself(browser):
    ann = browser()
    before = time.time()
    assert press(ann, "Ann").status_code == 303
    table = Table.get_by_id(ann.code)
    assert table.public and table.status == Table.LOBBY and table.turn_clock == 60
    assert before + 29 <= table.clock["start_at"] <= time.time() + 30
    assert [s.name for s in seats_at(ann.code)] == ["Ann"]
    lobby = parse(ann.page()).by_id("lobby-actions")
    left = int(lobby.find("p", cls="countdown").find("span").attrs["data-left"])
    assert 28 <= left <= 30
    assert lobby.find("form", cls="start-now") is not None
    assert "Start the game" not in lobby.text()  # one way to start: Start now


def test_the_next_presser_sits_at_the_waiting_table(browser):
    ann, bob = browser(), browser()
    press(ann, "Ann")
    assert press(bob, "Bob").status_code == 303
    assert bob.code == ann.code
    assert [s.name for s in seats_at(ann.code)] == ["Ann", "Bob"]
    lobby = parse(bob.page()).by_id("lobby-actions")
    assert lobby.find("p", cls="countdown") is not None
    assert lobby.find("form", cls="start-now") is None  # only the host starts it


def test_pressing_again_keeps_the_same_table(browser):
    ann = browser()
    for _ in range(3):
        ann.create("Ann")  # other tables this browser sits at
    press(ann, "Ann")
    code = ann.code
    assert press(ann, "Ann").status_code == 303 and ann.code == code
    assert Table.select().where(Table.public == True).count() == 1  # noqa: E712


def test_a_table_whose_host_is_away_or_with_other_rules_or_private_is_not_chosen(browser, presence):
    ann, bob, cid, dan = browser(), browser(), browser(), browser()
    press(ann, "Ann")
    host = Table.get_by_id(ann.code).host_seat
    presence.seen(ann.code, host, time.time() - 1)  # Ann's page closed
    press(bob, "Bob")
    assert bob.code != ann.code
    bob.post(f"/t/{bob.code}/rules", {"end_score": "50", "public": "on"})  # not the default
    code = cid.create("Cid")  # a private table with the default rules
    press(dan, "Dan")
    assert dan.code not in (ann.code, bob.code, code)


def test_a_full_table_is_not_overfilled(browser):
    people = [browser() for _ in range(5)]
    for who, name in zip(people, "ABCDE", strict=True):
        assert press(who, name).status_code == 303
    first = people[0].code
    assert [p.code for p in people[:4]] == [first] * 4
    assert people[4].code != first
    assert len(seats_at(first)) == tables.PLAY_NOW_SEATS


def test_a_name_taken_at_the_waiting_table_opens_another(browser):
    ann, other = browser(), browser()
    press(ann, "Ann")
    assert press(other, "ann").status_code == 303
    assert other.code != ann.code


def test_the_table_starts_by_itself_with_bots_in_the_empty_seats(automatic, browser):
    ann, bob = browser(), browser()
    press(ann, "Ann")
    press(bob, "Bob")
    start_at = Table.get_by_id(ann.code).clock["start_at"]
    assert not automatic(ann.code, now=start_at - 1)
    assert automatic(ann.code, now=start_at + 0.5)
    table = Table.get_by_id(ann.code)
    assert table.status == Table.PLAYING
    game = Game.from_dict(table.state)
    assert [p.name for p in game.players if not p.bot] == ["Ann", "Bob"]
    assert len(game.players) == 4 and sum(1 for p in game.players if p.bot) == 2
    assert table.turn_clock == 60 and table.clock.get("since")


def test_start_now_is_the_hosts(browser):
    ann, bob = browser(), browser()
    press(ann, "Ann")
    press(bob, "Bob")
    response = bob.post(f"/t/{ann.code}/start-now", htmx=True)
    assert response.status_code == 403
    assert Table.get_by_id(ann.code).status == Table.LOBBY
    assert ann.post(f"/t/{ann.code}/start-now").status_code == 303
    table = Table.get_by_id(ann.code)
    assert table.status == Table.PLAYING and len(seats_at(ann.code)) == 4
    response = ann.post(f"/t/{ann.code}/start-now", htmx=True)  # pressed twice
    assert response.status_code == 409
    assert Table.get_by_id(ann.code).version == table.version


def test_people_pressing_at_once_share_tables_of_four_on_sqlite(tmp_path):
    server = LiveServer(tmp_path).start()
    try:
        codes = press_together([server.url], 10)
    finally:
        server.stop()
    assert_shared(codes, 10)


def press_together(bases: list[str], count: int) -> list[str]:
    """`count` people press Play now at the same moment (threads behind a barrier),
    through each of the `bases` (server processes) in turn."""
    people = [HttpBrowser(bases[i % len(bases)]) for i in range(count)]
    for who in people:
        HttpBrowser.get(who, "/")
    go = threading.Barrier(count)
    codes: list[str | None] = [None] * count

    def send(i):
        go.wait(10)
        status, head, text = people[i].send_form("/play", {"name": f"P{i}"})
        assert status == 303, (status, text[:300])
        codes[i] = head["Location"].rsplit("/", 1)[1]

    threads = [threading.Thread(target=send, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert None not in codes, codes
    return codes


def assert_shared(codes: list[str], count: int) -> None:
    """Every presser seated, tables of four but the last: nobody alone while a table
    waited, no table overfilled."""
    by_table: dict[str, int] = {}
    for code in codes:
        by_table[code] = by_table.get(code, 0) + 1
    sizes = sorted(by_table.values(), reverse=True)
    full, rest = divmod(count, 4)
    assert sizes == [4] * full + ([rest] if rest else []), by_table


def test_a_play_now_lobby_counts_its_own_seats(browser):
    ann = browser()
    press(ann, "Ann")
    heading = parse(ann.page()).by_id("seats-h").text()
    assert heading.endswith(f"1 of {tables.PLAY_NOW_SEATS}")
    others = [browser() for _ in range(tables.PLAY_NOW_SEATS - 1)]
    for who, name in zip(others, "BCD", strict=True):
        press(who, name)
    visitor = browser()
    page = parse(visitor.get(f"/t/{ann.code}").data)
    assert "This table is full." in page.by_id("join").text()  # nobody else fits
    created = browser()
    created.create("Eve")
    assert parse(created.page()).by_id("seats-h").text().endswith(f"1 of {tables.MAX_SEATS}")

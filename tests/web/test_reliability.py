"""Reliability: the share of an account's last started games it finished, kept from the
transaction that starts a game to the one that ends it; shown beside names and on the
stats page; a host's "only players who finish at least N%" checked when joining."""

from __future__ import annotations

import re

import pytest

from app import tables
from app.features import marks, rating, reliability
from app.storage.models import Entry, Table, User
from tests.web.account_helpers import (  # noqa: F401 (cheap_hashing: an autouse fixture)
    cheap_hashing,
    finish,
    game_clean_win,
    make_user,
    signin,
    table_with,
    text,
)


def entries(user: User) -> list[tuple[int, str | None]]:
    return [(e.number, e.outcome) for e in Entry.select().where(Entry.user == user)]


def start(b, code) -> None:
    assert b.post(f"/t/{code}/start", {"version": b.version()}).status_code == 303


def past_games(user: User, outcomes: list[str | None]) -> None:
    """Games over, oldest first, at a closed table: an outcome, or None (abandoned)."""
    table = Table.create(code=f"R{user.id:05d}", rules={}, status=Table.CLOSED, game_number=50)
    for number, outcome in enumerate(outcomes, 1):
        Entry.create(user=user, table=table, number=number, outcome=outcome)


def test_a_started_game_counts_and_its_end_is_kept(app, browser):
    make_user("ann")
    ann, gus = browser(), browser()
    signin(ann, "ann")
    code = ann.create("Ann")
    gus.join(code, "Gus")
    start(ann, code)
    ann_user = User.get(User.username == "ann")
    assert entries(ann_user) == [(1, None)] and Entry.select().count() == 1  # not the guest
    assert reliability.finished_share(ann_user) is None  # a game in play does not count
    assert ann.post(f"/t/{code}/leave").status_code == 303  # Ann forfeits
    assert entries(ann_user) == [(1, Entry.FORFEITED)]
    assert reliability.finished_share(ann_user) == 0
    # The same game end rated her, last (she left): below the newcomer's 1000.
    skill = rating.current([ann_user.id])[ann_user.id]
    assert skill.games == 1 and skill.shown < 1000


def test_finished_games_count_for_and_abandoned_ones_against(app):
    ann, bob = make_user("ann"), make_user("bob")
    code, (a, b) = table_with(app, ("Ann", ann), ("Bob", bob))
    with tables.store.locked(code):
        Entry.create(user=ann, table=code, number=1)
        Entry.create(user=bob, table=code, number=1)
    finish(code, game_clean_win(a, b))  # game 1, over
    assert entries(ann) == [(1, Entry.FINISHED)] and entries(bob) == [(1, Entry.FINISHED)]
    assert reliability.finished_share(ann) == 100
    # A game whose table moved on without an outcome for the seat was abandoned.
    Entry.create(user=ann, table=code, number=7)
    assert reliability.finished_share(ann) == 50


def test_only_the_last_twenty_games_count(app):
    ann = make_user("ann")
    past_games(ann, [Entry.FORFEITED] * 10 + [Entry.FINISHED] * 15 + [None] * 5)
    assert reliability.finished_share(ann) == 75  # 15 of the last 20
    assert reliability.finished_share(make_user("bob")) is None


# ----- beside names --------------------------------------------------------------------
def test_marks_beside_account_holders_in_the_lobby_and_at_the_table(app, browser):
    ann = make_user("ann")
    past_games(ann, [Entry.FINISHED] * 3 + [Entry.FORFEITED])
    host, gus = browser(), browser()
    signin(host, "ann")
    code = host.create("Ann")
    gus.join(code, "Gus")
    lobby = gus.page()
    found = re.search(
        r'<span class="name">Ann</span> <small class="muted" title="([^"]+)">([^<]+)<', lobby
    )
    assert found and found.group(2) == "1000? · 75%"
    assert "rating 1000, provisional; finishes 75% of their games" in found.group(1)
    assert not re.search(r'<span class="name">Gus</span> <small', lobby)  # guests: none
    start(host, code)
    board = gus.page()
    assert re.search(
        r'<span class="oname">Ann</span> <small class="muted" title="[^"]+">1000\? · 75%<', board
    )
    marks.forget()


def test_the_stats_page_shows_the_share_of_games_finished(app, browser):
    ann = make_user("ann")
    past_games(ann, [Entry.FINISHED, Entry.FINISHED, Entry.FORFEITED, Entry.FINISHED])
    html = text(browser().get("/u/ann"))
    assert re.search(r'id="st-finished">75&nbsp;%<', html)


# ----- the host's threshold ------------------------------------------------------------
def test_the_host_sets_a_threshold_and_bad_values_change_nothing(app, browser):
    ann = browser()
    code = ann.create("Ann")
    for bad in ("abc", "101", "-5", "1.5"):
        response = ann.post(f"/t/{code}/rules", {"min_finished": bad}, htmx=True)
        assert response.status_code == 400, bad
        assert "a whole percent from 0 to 100" in response.data.decode()
        assert Table.get_by_id(code).min_finished is None
    ann.post(f"/t/{code}/rules", {"min_finished": "80"})
    assert Table.get_by_id(code).min_finished == 80
    assert (
        'name="min_finished" type="number" inputmode="numeric" min="0" max="100" value="80"'
        in ann.page()
    )
    ann.post(f"/t/{code}/rules", {"grace_seconds": "20"})  # absent: unchanged
    assert Table.get_by_id(code).min_finished == 80
    ann.post(f"/t/{code}/rules", {"min_finished": ""})  # blank: anyone
    assert Table.get_by_id(code).min_finished is None


@pytest.fixture
def strict_table(app, browser):
    host = browser()
    code = host.create("Host")
    host.post(f"/t/{code}/rules", {"min_finished": "80", "public": "on"})
    assert Table.get_by_id(code).min_finished == 80
    return code


def seated(code) -> list[str]:
    return [s.name for s in Table.get_by_id(code).seats if not s.left]


def test_a_guest_cannot_join_such_a_table_and_is_told_so(strict_table, browser):
    gus = browser()
    page = gus.get(f"/t/{strict_table}").data.decode()
    assert "Only players with an account who finish at least 80% of their games can join." in page
    response = gus.join(strict_table, "Gus")
    assert response.status_code == 403
    assert "finish at least 80% of their games: sign in to join." in response.data.decode()
    assert seated(strict_table) == ["Host"]


def test_accounts_below_the_threshold_or_without_a_record_cannot_join(strict_table, browser):
    low, new, good = make_user("low"), make_user("new"), make_user("good")
    past_games(low, [Entry.FINISHED] * 7 + [Entry.FORFEITED] * 3)  # 70%
    past_games(good, [Entry.FINISHED] * 9 + [Entry.FORFEITED])  # 90%
    b = browser()
    signin(b, "low")
    response = b.join(strict_table, "low")
    assert response.status_code == 403
    assert "you finished 70% of your recent games." in response.data.decode()
    b = browser()
    signin(b, "new")
    response = b.join(strict_table, "new")
    assert response.status_code == 403 and "no games on record yet" in response.data.decode()
    assert seated(strict_table) == ["Host"]
    b = browser()
    signin(b, "good")
    assert b.join(strict_table, "good").status_code == 303
    assert seated(strict_table) == ["Host", "good"]
    assert (low, new) != (None, None)

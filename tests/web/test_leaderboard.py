"""The leaderboard: account holders by wins, by win rate (10 games at least) and by
average round score; paginated; the signed-in player's row highlighted."""

from __future__ import annotations

import itertools
import re

import pytest

from app.engine import RuleSet
from app.features import stats
from app.storage.models import Result, Seat, Table
from tests.web.account_helpers import (  # noqa: F401 (cheap_hashing: an autouse fixture)
    cheap_hashing,
    finish,
    game_clean_win,
    game_penalised_ender,
    make_user,
    signin,
    table_with,
)

_codes = itertools.count()


def add_results(user, outcomes) -> None:
    """Finished games for `user`: (rank, rounds played, sum of round scores) each."""
    code = f"LB{next(_codes):04d}"
    table = Table.create(code=code, rules=RuleSet().to_dict(), status=Table.FINISHED)
    for number, (rank, rounds, score_sum) in enumerate(outcomes, 1):
        seat = Seat.create(
            table=table, position=number, name=user.username, token=f"{code}{number}"
        )
        Result.create(
            table=table,
            number=number,
            seat=seat,
            user=user,
            name=user.username,
            players=2,
            rank=rank,
            total=score_sum,
            rounds_played=rounds,
            score_sum=score_sum,
        )


def rows_of(html: str) -> list[tuple[str, str, bool]]:
    """(rank, username, highlighted) of each row shown."""
    body = html.split("<tbody>")[1].split("</tbody>")[0]
    return [
        (rank, name, "me" in cls)
        for cls, rank, name in re.findall(
            r'<tr(?: class="(me)"[^>]*)?><td>(\d+)</td><td><a href="/u/[^"]+">([^<]+)</a>', body
        )
    ]


def test_ranked_by_wins_with_shared_ranks(browser, app):
    ann, bob, cat, dan = (make_user(n) for n in ("ann", "bob", "cat", "dan"))
    add_results(ann, [(1, 3, 20), (1, 3, 25), (2, 3, 40)])
    add_results(bob, [(1, 3, 30), (2, 3, 50)])
    add_results(cat, [(1, 3, 30), (1, 3, 10), (3, 3, 90), (2, 3, 60)])
    add_results(dan, [(2, 2, 10)])
    make_user("eve")  # no game yet: not ranked
    html = browser().get("/leaderboard?by=wins").data.decode()
    # Equal wins share a rank; the one with fewer games comes first.
    assert rows_of(html) == [
        ("1", "ann", False),
        ("1", "cat", False),
        ("3", "bob", False),
        ("4", "dan", False),
    ]
    assert "eve" not in html


def test_win_rate_needs_ten_games(browser, app):
    ann, bob, cat = make_user("ann"), make_user("bob"), make_user("cat")
    add_results(ann, [(1, 1, 5)] * 9)  # 100% but only 9 games
    add_results(bob, [(1, 1, 5)] * 6 + [(2, 1, 5)] * 4)  # 60%
    add_results(cat, [(1, 1, 5)] * 8 + [(2, 1, 5)] * 4)  # 67%
    html = browser().get("/leaderboard?by=win_rate").data.decode()
    assert rows_of(html) == [("1", "cat", False), ("2", "bob", False)]
    assert "at least 10 games" in html
    assert [r.username for r in stats.leaderboard("win_rate")] == ["cat", "bob"]


def test_ranked_by_average_round_score_lowest_first(browser, app):
    ann, bob, cat = make_user("ann"), make_user("bob"), make_user("cat")
    add_results(ann, [(2, 4, 60)])  # 15.0
    add_results(bob, [(1, 5, 40), (1, 5, 10)])  # 5.0
    add_results(cat, [(1, 2, 20)])  # 10.0
    make_user("dan")
    html = browser().get("/leaderboard?by=avg_round").data.decode()
    assert rows_of(html) == [("1", "bob", False), ("2", "cat", False), ("3", "ann", False)]
    assert "5.0" in html and "15.0" in html


def test_an_unknown_ranking_falls_back_to_rating(browser, app):
    add_results(make_user("ann"), [(1, 1, 1)])
    html = browser().get("/leaderboard?by=%3Cscript%3E").data.decode()
    assert 'aria-current="page">Rating' in html


def test_paginated_with_the_players_own_row_highlighted(browser, app, monkeypatch):
    from app.web import stats as stats_pages

    monkeypatch.setattr(stats_pages, "PER_PAGE", 20)
    users = [make_user(f"player{i:02d}") for i in range(25)]
    for i, u in enumerate(users):
        add_results(u, [(1, 1, 1)] * (25 - i))  # player00 has the most wins
    me = browser()
    signin(me, "player22")
    first = me.get("/leaderboard?by=wins").data.decode()
    assert len(rows_of(first)) == 20 and not any(h for *_, h in rows_of(first))
    assert "Page 1 of 2" in first and "You are number 23" in first
    assert 'href="/leaderboard?page=2&amp;by=wins">see your row</a>' in first or (
        'href="/leaderboard?by=wins&amp;page=2">see your row</a>' in first
    )
    second = me.get("/leaderboard?by=wins&page=2").data.decode()
    rows = rows_of(second)
    assert [r[0] for r in rows] == ["21", "22", "23", "24", "25"]
    assert [r for r in rows if r[2]] == [("23", "player22", True)]
    assert 'aria-current="true"' in second and '<span class="tag">you</span>' in second
    # Out of range pages show the last one; nonsense shows the first.
    assert rows_of(me.get("/leaderboard?by=wins&page=99").data.decode()) == rows
    assert len(rows_of(me.get("/leaderboard?by=wins&page=x").data.decode())) == 20


def test_guests_bots_and_deleted_players_are_not_ranked(browser, app):
    ann, bob = make_user("ann"), make_user("bob")
    code, (a, b, g) = table_with(app, ("Ann", ann), ("Bob", bob), ("Guest", None))
    finish(code, game_penalised_ender(a, b))  # Bob wins
    finish(code, game_clean_win(a, b))  # Ann wins
    html = browser().get("/leaderboard?by=wins").data.decode()
    assert rows_of(html) == [("1", "ann", False), ("1", "bob", False)]
    assert "Guest" not in html
    from app.features import accounts

    with app.app_context():
        accounts.delete_user(bob, "correct horse")
    html = browser().get("/leaderboard?by=wins").data.decode()
    assert rows_of(html) == [("1", "ann", False)] and "deleted player" not in html


def test_numbers_on_the_board_come_from_played_games(browser, app):
    ann, bob = make_user("ann"), make_user("bob")
    code, (a, b) = table_with(app, ("Ann", ann), ("Bob", bob))
    finish(code, game_penalised_ender(a, b))  # Ann 30, Bob 10
    finish(code, game_clean_win(a, b))  # Ann 1, Bob 42
    board = {r.username: r for r in stats.leaderboard("avg_round")}
    assert board["ann"].avg_round == pytest.approx(15.5)
    assert board["bob"].avg_round == pytest.approx(26.0)
    assert (board["ann"].games, board["ann"].wins, board["ann"].win_rate) == (2, 1, 0.5)
    me = browser()
    signin(me, "bob")
    html = me.get("/leaderboard?by=avg_round").data.decode()
    assert rows_of(html) == [("1", "ann", False), ("2", "bob", True)]
    assert "You are number 2" in html


def test_a_guest_is_invited_to_create_an_account(browser, app):
    html = browser().get("/leaderboard").data.decode()
    assert "Nobody is ranked here yet" in html and 'href="/signup?next=' in html

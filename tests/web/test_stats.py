"""Results are recorded once per game, in the transaction that ends it; the stats page,
its charts, the history and the results pages show numbers that match the engine's."""

from __future__ import annotations

import random
import re

import pytest

from app import tables
from app.bots.registry import choose
from app.engine import (
    ROUND_OVER,
    DiscardDrawn,
    Draw,
    Forfeit,
    Game,
    KeepDrawn,
    Reveal,
    TakeDiscard,
    to_record,
    view,
)
from app.features import stats
from app.storage.models import GameRecord, Result, Seat, Table, db
from app.web import charts
from tests.web.account_helpers import (  # noqa: F401 (cheap_hashing: an autouse fixture)
    SMALL,
    bot_game,
    cheap_hashing,
    expected_numbers,
    finish,
    game_clean_win,
    game_penalised_ender,
    make_user,
    signin,
    table_with,
    text,
)


def shown(page: str, ident: str) -> str:
    """The text of the stats figure with this id, tags removed."""
    found = re.search(rf'id="{ident}">(.*?)</dd>', page, re.S)
    assert found, ident
    return re.sub(r"<[^>]+>", "", found.group(1)).strip()


# ----- recording -----------------------------------------------------------------------
def test_results_are_recorded_once_with_the_record(app, ann_and_bob):
    ann, bob = ann_and_bob
    code, (a, b) = table_with(app, ("Ann", ann), ("Bob", bob))
    game = game_penalised_ender(a, b)
    finish(code, game)
    rows = {r.name: r for r in Result.select().where(Result.table == code)}
    assert set(rows) == {"Ann", "Bob"}
    assert GameRecord.select().where(GameRecord.table == code).count() == 1
    ann_row = rows["Ann"]
    assert (ann_row.user_id, ann_row.seat_id, ann_row.number) == (ann.id, a.id, 1)
    assert (ann_row.rank, ann_row.total, ann_row.forfeited, ann_row.players) == (2, 30, False, 2)
    assert (ann_row.rounds_played, ann_row.rounds_ended, ann_row.rounds_penalised) == (1, 1, 1)
    assert (ann_row.columns_cleared, ann_row.score_sum, ann_row.round_scores) == (1, 30, [30])
    assert (rows["Bob"].rank, rows["Bob"].total, rows["Bob"].rounds_ended) == (1, 10, 0)
    # Saving the finished game again (or recording again) adds nothing.
    with db.atomic():
        table = Table.get_by_id(code)
        tables.save_game(table, game)
        stats.record_results(table, game)
    assert Result.select().where(Result.table == code).count() == 2


def test_results_are_written_in_the_transaction_that_ends_the_game(app, ann_and_bob):
    ann, bob = ann_and_bob
    code, (a, b) = table_with(app, ("Ann", ann), ("Bob", bob))
    game = game_clean_win(a, b)

    class Abort(Exception):
        pass

    with pytest.raises(Abort), db.atomic():
        table = Table.get_by_id(code)
        table.game_number = 1
        tables.save_game(table, game)
        assert Result.select().count() == 2
        raise Abort
    assert Result.select().count() == 0 and GameRecord.select().count() == 0
    assert Table.get_by_id(code).status == Table.LOBBY


def test_a_game_ended_by_forfeits_is_recorded(browser, ann_and_bob):
    host, guest = browser(), browser()
    signin(host, "ann")
    code = host.create("Ann")
    guest.join(code, "Gus")
    host.post(f"/t/{code}/start", {"version": host.version()})
    assert host.post(f"/t/{code}/leave").status_code == 303
    assert Table.get_by_id(code).status == Table.FINISHED
    rows = {r.name: r for r in Result.select().where(Result.table == code)}
    assert rows["Ann"].forfeited and rows["Ann"].rank == 2 and rows["Ann"].user_id is not None
    assert rows["Gus"].rank == 1 and not rows["Gus"].forfeited and rows["Gus"].user_id is None
    assert rows["Gus"].rounds_played == 0  # the round in play is not scored


def test_the_numbers_of_one_game_read_from_the_engine():
    assert stats.seat_id_of("s12") == 12 and stats.seat_id_of("p1") is None
    seats = [Seat(id=1, name="A"), Seat(id=2, name="B")]
    game = game_penalised_ender(*seats)
    numbers = stats.game_numbers(game)
    for pid in ("s1", "s2"):
        expected = expected_numbers(game, pid)
        got = numbers[pid]
        assert got["rounds_played"] == expected["rounds"]
        assert got["score_sum"] == expected["sum"]
        assert got["round_scores"] == expected["scores"]
        assert got["rounds_ended"] == expected["ended"]
        assert got["rounds_penalised"] == expected["penalised"]
        assert got["columns_cleared"] == expected["columns"]
        assert (got["rank"], got["total"]) == (expected["rank"], expected["total"])


# ----- the stats page ------------------------------------------------------------------
def test_stats_match_games_with_known_results(app, browser, ann_and_bob):
    ann, bob = ann_and_bob
    code, (a, b) = table_with(app, ("Ann", ann), ("Bob", bob))
    finish(code, game_penalised_ender(a, b))  # Ann 30, second, penalised, 1 column
    finish(code, game_clean_win(a, b))  # Ann 1, wins, ended cleanly
    code2, (a2, b2) = table_with(app, ("Ann", ann), ("Bob", bob))
    forfeit = Game([{"id": a2.player_id, "name": "Ann"}, {"id": b2.player_id, "name": "Bob"}])
    forfeit.apply(a2.player_id, Forfeit())  # Ann leaves at once: Bob wins
    finish(code2, forfeit)

    s = stats.user_stats(ann)
    assert (s.games, s.wins, s.forfeits) == (3, 1, 1)
    assert s.win_rate == pytest.approx(1 / 3)
    assert (s.rounds, s.score_sum, s.avg_round) == (2, 31, 15.5)
    assert (s.rounds_ended, s.rounds_penalised, s.penalised_rate) == (2, 1, 0.5)
    assert (s.columns_cleared, s.rows_cleared) == (1, 0)
    assert (s.best.total, s.best.number) == (1, 2)  # a forfeited game is neither
    assert (s.worst.total, s.worst.number) == (30, 1)
    assert sorted(s.round_scores) == [1, 30]
    assert [r.total for r in s.recent] == [30, 1, 0]

    b_stats = stats.user_stats(bob)
    assert (b_stats.games, b_stats.wins, b_stats.avg_round) == (3, 2, 26.0)

    page = browser()
    signin(page, "ann")
    html = text(page.get("/me/stats"))
    assert shown(html, "st-games") == "3"
    assert shown(html, "st-wins") == "1"
    assert shown(html, "st-win-rate") == "33%"
    assert shown(html, "st-avg-round") == "15.5"
    assert shown(html, "st-best").startswith("1")
    assert shown(html, "st-worst").startswith("30")
    assert shown(html, "st-ended") == "2"
    assert shown(html, "st-penalised").startswith("1") and "(50%)" in shown(html, "st-penalised")
    assert shown(html, "st-columns") == "1"
    assert shown(html, "st-forfeits") == "1"
    assert f'href="/t/{code}/games/2"' in html  # the best game links to its results


def test_stats_add_up_over_bot_games(app, ann_and_bob):
    ann, bob = ann_and_bob
    played = []
    for seed in range(4):
        code, seats = table_with(app, ("Ann", ann), ("Bob", bob), ("Cat", None))
        game = bot_game(seats, seed=f"stats-{seed}")
        finish(code, game)
        played.append((game, seats[0].player_id))
    expected = [expected_numbers(game, pid) for game, pid in played]
    s = stats.user_stats(ann)
    assert s.games == 4
    assert s.wins == sum(e["won"] for e in expected)
    assert s.rounds == sum(e["rounds"] for e in expected) > 4
    assert s.score_sum == sum(e["sum"] for e in expected)
    assert s.rounds_ended == sum(e["ended"] for e in expected)
    assert s.rounds_penalised == sum(e["penalised"] for e in expected)
    assert s.columns_cleared == sum(e["columns"] for e in expected)
    assert s.best.total == min(e["total"] for e in expected)
    assert s.worst.total == max(e["total"] for e in expected)
    assert sorted(s.round_scores) == sorted(x for e in expected for x in e["scores"])


def form_for(action) -> tuple[str, tuple | None]:
    if isinstance(action, Draw):
        return "draw", None
    if isinstance(action, Reveal):
        return "reveal", (action.row, action.col)
    if isinstance(action, TakeDiscard):
        return "take_discard", (action.row, action.col)
    if isinstance(action, KeepDrawn):
        return "keep_drawn", (action.row, action.col)
    assert isinstance(action, DiscardDrawn)
    return "discard_drawn", action.flip


def test_a_game_played_through_the_pages_against_a_bot(browser, ann_and_bob):
    ann = browser()
    signin(ann, "ann")
    code = ann.create("Ann")
    ann.post(
        f"/t/{code}/rules",
        {"rows": "2", "cols": "2", "initial_flips": "3", "end_score": "30"},
    )
    ann.post(f"/t/{code}/bots", {"bot": "greedy"})
    assert ann.post(f"/t/{code}/start", {"version": ann.version()}).status_code == 303
    me = Seat.get((Seat.table == code) & (Seat.name == "Ann")).player_id
    rng = random.Random(7)
    for _ in range(500):
        table = Table.get_by_id(code)
        if table.status == Table.FINISHED:
            break
        game = Game.from_dict(table.state)
        if game.phase == ROUND_OVER:
            ann.post(f"/t/{code}/next-round", {"version": ann.version()})
            continue
        kind, pos = form_for(choose("greedy", view(game, me), rng))
        assert ann.move(kind, pos).status_code == 303
    else:
        raise AssertionError("the game did not end")
    game = Game.from_dict(Table.get_by_id(code).state)
    expected = expected_numbers(game, me)
    row = Result.get((Result.table == code) & (Result.name == "Ann"))
    assert (row.rank, row.total, row.rounds_played) == (
        expected["rank"],
        expected["total"],
        expected["rounds"],
    )
    html = text(ann.get("/me/stats"))
    assert shown(html, "st-games") == "1"
    assert shown(html, "st-wins") == ("1" if expected["won"] else "0")
    assert shown(html, "st-rounds") == str(expected["rounds"])
    assert shown(html, "st-avg-round") == f"{expected['sum'] / expected['rounds']:.1f}"
    assert shown(html, "st-ended") == str(expected["ended"])
    assert shown(html, "st-columns") == str(expected["columns"])
    # The bot's result is kept too, with nobody's account.
    bot_row = Result.get((Result.table == code) & (Result.name != "Ann"))
    assert bot_row.bot == "greedy" and bot_row.user_id is None


def test_no_games_yet(browser, ann_and_bob):
    ann = browser()
    signin(ann, "ann")
    html = text(ann.get("/me/stats"))
    assert "No finished games yet" in html and "<svg" not in html
    assert "No finished games yet" in text(ann.get("/me/history"))


def test_a_public_stats_page_per_account(app, browser, ann_and_bob):
    ann, bob = ann_and_bob
    code, (a, b) = table_with(app, ("Ann", ann), ("Bob", bob))
    finish(code, game_clean_win(a, b))
    html = text(browser().get("/u/ANN"))
    assert "<h1" in html and ">ann</h1>" in html and shown(html, "st-wins") == "1"
    assert browser().get("/u/nobody").status_code == 404


# ----- charts --------------------------------------------------------------------------
def test_the_charts_are_svg_with_text_for_screen_readers(app, browser, ann_and_bob):
    ann, bob = ann_and_bob
    code, (a, b) = table_with(app, ("Ann", ann), ("Bob", bob))
    finish(code, game_penalised_ender(a, b))
    finish(code, game_clean_win(a, b))
    page = browser()
    signin(page, "ann")
    html = text(page.get("/me/stats"))
    svgs = re.findall(r"<svg[^>]*>.*?</svg>", html, re.S)
    assert len(svgs) == 3
    for svg in svgs:
        assert 'role="img"' in svg and 'viewBox="0 0 320 180"' in svg and 'width="100%"' in svg
        assert "<title" in svg and "<desc" in svg
    rated, line, bars = svgs
    assert rated.count("<circle") == 3 and "Game 1: " in rated and "Game 2: " in rated
    assert "Game 1: 30; Game 2: 1 (won)" in line
    assert line.count("<circle") == 2 and 'class="pt win"' in line
    assert "0–4: 1 round;" in bars and "30–39: 1 round;" in bars and "5–9: 0 rounds" in bars
    assert "<script" not in html.split("<main")[1].split("</main>")[0]  # no chart library
    # The same numbers as a table.
    assert re.search(r"<td>30–39</td><td class=\"num\">1</td>", html)


def test_line_chart_geometry():
    chart = charts.line_chart(
        [{"value": v, "label": f"G{i}", "mark": v < 0} for i, v in enumerate([40, -5, 100])]
    )
    ys = [d["y"] for d in chart["dots"]]
    xs = [d["x"] for d in chart["dots"]]
    assert xs == sorted(xs) and xs[0] == chart["left"] and xs[-1] == chart["right"]
    assert ys[2] < ys[0] < ys[1]  # higher totals are drawn higher
    ticks = [t["value"] for t in chart["ticks"]]
    assert ticks[0] <= -5 and ticks[-1] >= 100 and 0 in ticks
    assert chart["zero"] is not None
    assert all(chart["ticks"][0]["y"] >= d["y"] >= chart["ticks"][-1]["y"] for d in chart["dots"])
    one = charts.line_chart([{"value": 7, "label": "G", "mark": False}])
    assert one["dots"][0]["x"] == (one["left"] + one["right"]) / 2


def test_bar_chart_geometry():
    chart = charts.bar_chart([("a", 0), ("b", 3), ("c", 6)])
    heights = [b["h"] for b in chart["bars"]]
    assert heights[0] == 0 and heights[2] == pytest.approx(2 * heights[1])
    assert all(b["y"] + b["h"] == pytest.approx(chart["bottom"]) for b in chart["bars"])
    assert chart["ticks"][-1]["value"] >= 6
    assert stats.histogram([-3, 0, 4, 5, 29, 30, 39, 40, 120]) == [
        ("< 0", 1),
        ("0–4", 2),
        ("5–9", 1),
        ("10–14", 0),
        ("15–19", 0),
        ("20–24", 0),
        ("25–29", 1),
        ("30–39", 2),
        ("40+", 2),
    ]


# ----- history and results pages -------------------------------------------------------
def test_history_lists_every_finished_game_newest_first(app, browser, ann_and_bob):
    ann, bob = ann_and_bob
    code, (a, b) = table_with(app, ("Ann", ann), ("Bob", bob))
    finish(code, game_penalised_ender(a, b))
    finish(code, game_clean_win(a, b))
    page = browser()
    signin(page, "ann")
    html = text(page.get("/me/history"))
    items = re.findall(r"<li class=\"[^\"]*\">(.*?)</li>", html.split('class="history"')[1], re.S)
    assert len(items) == 2
    newest, oldest = items
    assert "Won" in newest and ">1</span>" in newest and "Ann 1, Bob 42" in newest
    assert "Rank 2 of 2" in oldest and ">30</span>" in oldest and "Bob 10, Ann 30" in oldest
    for number, item in ((2, newest), (1, oldest)):
        results = f"/t/{code}/games/{number}"
        assert f'href="{results}"' in item
        assert f'href="{results}/record.json"' in item
        assert page.get(results).status_code == 200
        record = page.get(f"{results}/record.json")
        assert record.status_code == 200 and record.json["format"] == "skymo.game/1"


def test_history_is_paginated(app, browser, ann_and_bob, monkeypatch):
    from app.web import stats as stats_pages

    monkeypatch.setattr(stats_pages, "PER_PAGE", 2)
    ann, bob = ann_and_bob
    code, (a, b) = table_with(app, ("Ann", ann), ("Bob", bob))
    for _ in range(3):
        finish(code, game_clean_win(a, b))
    page = browser()
    signin(page, "ann")
    first = text(page.get("/me/history"))
    assert first.count("game 3") == 1 and "game 1 " not in first and "Page 1 of 2" in first
    second = text(page.get("/me/history?page=2"))
    assert "game 1 " in second and 'rel="prev"' in second
    assert text(page.get("/me/history?page=oops")).count("Results</a>") == 2
    assert "game 1 " in text(page.get("/me/history?page=99999999999999999999999"))
    assert page.get("/t/ABCDEF/games/99999999999999999999999").status_code == 404


def test_the_results_page_of_a_game(app, browser, ann_and_bob):
    ann, bob = ann_and_bob
    code, (a, b) = table_with(app, ("Ann", ann), ("Bob", bob))
    finish(code, game_penalised_ender(a, b))
    page = browser()
    signin(page, "bob")
    html = text(page.get(f"/t/{code.lower()}/games/1"))
    ranking = re.findall(r'<span class="rank">(\d)</span><span class="name">(.*?)</span>', html)
    names = [re.sub(r"<[^>]+>", "", n) for _, n in ranking]
    assert [r for r, _ in ranking] == ["1", "2"] and names == ["Bob", "Ann"]
    assert '<li class="me">' in html  # Bob's own row
    assert f'href="/t/{code}/games/1/record.json"' in html
    assert '<td class="num">30</td>' in html  # the round-by-round table
    assert browser().get(f"/t/{code}/games/9").status_code == 404
    assert browser().get("/t/NOPE42/games/1").status_code == 404


def test_a_game_recorded_before_results_existed_shows_from_its_record(app, browser, ann_and_bob):
    ann, bob = ann_and_bob
    code, (a, b) = table_with(app, ("Ann", ann), ("Bob", bob))
    game = game_clean_win(a, b)
    GameRecord.create(table=code, number=1, record=to_record(game))
    html = text(browser().get(f"/t/{code}/games/1"))
    assert re.search(r'class="rank">1</span><span class="name">Ann', html)

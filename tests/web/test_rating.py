"""Ratings stored with the results: once per finished game in its transaction, guests
and bots unrated, a recompute from the results arriving at the same numbers, gone with
the account; shown on the stats page and as the leaderboard's first tab."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from app import create_app, tables
from app.features import accounts, rating, stats
from app.storage.models import Rating, Result, Table, User, db
from tests.web.account_helpers import (  # noqa: F401 (cheap_hashing: an autouse fixture)
    PASSWORD,
    bot_game,
    cheap_hashing,
    finish,
    game_clean_win,
    game_penalised_ender,
    make_user,
    signin,
    table_with,
    text,
)

ROOT = Path(__file__).resolve().parents[2]


def ratings() -> dict[str, tuple[float, float, int]]:
    return {
        u.username: (s.mu, s.sigma, s.games)
        for u in User.select()
        for s in [rating.current([u.id]).get(u.id)]
        if s is not None
    }


def test_a_finished_game_rates_its_accounts_once(app, ann_and_bob):
    ann, bob = ann_and_bob
    code, (a, b) = table_with(app, ("Ann", ann), ("Bob", bob))
    game = game_clean_win(a, b)  # Ann wins
    finish(code, game)
    now = ratings()
    assert now["ann"][0] > 25 > now["bob"][0] and now["ann"][2] == now["bob"][2] == 1
    assert rating.current([ann.id])[ann.id].shown > 1000 > rating.current([bob.id])[bob.id].shown
    # Saving or recording the same game again rates nothing again.
    with db.atomic():
        table = Table.get_by_id(code)
        tables.save_game(table, game)
        stats.record_results(table, game)
    assert ratings() == now and Rating.select().count() == 2


def test_the_rating_is_written_in_the_transaction_that_ends_the_game(app, ann_and_bob):
    ann, bob = ann_and_bob
    code, (a, b) = table_with(app, ("Ann", ann), ("Bob", bob))

    class Abort(Exception):
        pass

    with pytest.raises(Abort), db.atomic():
        table = Table.get_by_id(code)
        table.game_number = 1
        tables.save_game(table, game_clean_win(a, b))
        assert Rating.select().count() == 2
        raise Abort
    assert Rating.select().count() == 0


def test_guests_and_bots_take_part_but_are_not_rated(app, ann_and_bob):
    ann, _bob = ann_and_bob
    code, seats = table_with(app, ("Ann", ann), ("Gus", None), ("Bot", None))
    game = bot_game(seats, seed=3)
    finish(code, game)
    assert set(ratings()) == {"ann"} and Rating.select().count() == 1
    ann_rank = next(r["rank"] for r in game.ranking() if r["player"] == seats[0].player_id)
    mu = ratings()["ann"][0]
    assert (mu > 25) if ann_rank == 1 else (mu < 25 or ann_rank == 2)


def test_a_recompute_arrives_at_the_same_numbers(app):
    users = [make_user(n) for n in ("ann", "bob", "cat", "dan")]
    people = [(u.username.title(), u) for u in users]
    for i in range(6):
        # Tables of 2 to 5, guests among them, different accounts each time.
        chosen = [people[(i + k) % 4] for k in range(2 + i % 3)] + [("Gus", None)] * (i % 2)
        code, seats = table_with(app, *chosen)
        finish(code, bot_game(seats, seed=i))
    live = {(r.user_id, r.table_id, r.number): (r.mu, r.sigma, r.games) for r in Rating.select()}
    assert len({u for u, *_ in live}) == 4
    assert rating.recompute() == 6
    again = {(r.user_id, r.table_id, r.number): (r.mu, r.sigma, r.games) for r in Rating.select()}
    assert again == live  # the very same floats


def test_the_recompute_command(app, database_url, tmp_path, ann_and_bob):
    ann, bob = ann_and_bob
    code, (a, b) = table_with(app, ("Ann", ann), ("Bob", bob))
    finish(code, game_clean_win(a, b))
    before = ratings()
    Rating.delete().execute()  # lost: the command writes them again
    db.close()
    env = {
        **os.environ,
        "SKYMO_DATABASE_URL": database_url,
        "SKYMO_INSTANCE_PATH": str(tmp_path),
        "SKYMO_SECRET_KEY": "cli-test",
    }
    env.pop("SKYMO_REDIS_URL", None)
    done = subprocess.run(
        [sys.executable, "-m", "app.cli.ratings", "recompute"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "from 1 rated game" in done.stdout
    assert ratings() == before


def test_a_guests_game_moved_to_a_new_account_stays_unrated(app, browser):
    guest = browser()
    code = guest.create("Gus")
    bob = make_user("bob")
    with app.app_context():
        tables.join(code, "Bob", bob.id)
    seats = list(Table.get_by_id(code).seats.order_by("position"))
    finish(code, game_clean_win(*seats))  # the guest wins
    assert set(ratings()) == {"bob"}
    guest.post("/signup", {"username": "gus", "password": PASSWORD})
    gus = User.get(User.username == "gus")
    assert Result.get(Result.user == gus).rated is False
    live = ratings()
    rating.recompute()
    assert ratings() == live and "gus" not in live


def test_deleting_an_account_removes_its_ratings(app, ann_and_bob):
    ann, bob = ann_and_bob
    code, (a, b) = table_with(app, ("Ann", ann), ("Bob", bob))
    finish(code, game_clean_win(a, b))
    with app.app_context():
        accounts.delete_user(bob, PASSWORD)
    assert set(ratings()) == {"ann"}
    assert Rating.select().where(Rating.user == bob.id).count() == 0


# ----- pages ---------------------------------------------------------------------------
def test_the_stats_page_shows_the_rating_and_its_chart(app, browser, ann_and_bob):
    ann, bob = ann_and_bob
    code, (a, b) = table_with(app, ("Ann", ann), ("Bob", bob))
    finish(code, game_clean_win(a, b))
    finish(code, game_clean_win(a, b))
    page = browser()
    signin(page, "ann")
    html = text(page.get("/me/stats"))
    shown = rating.current([ann.id])[ann.id].shown
    found = re.search(r'id="st-rating">(\d+) <small class="muted">provisional</small>', html)
    assert found and int(found.group(1)) == shown > 1000
    chart = re.search(r'<svg[^>]*aria-labelledby="rating-title[^>]*>.*?</svg>', html, re.S)
    assert chart and chart.group(0).count("<circle") == 3
    assert "Start: 1000; Game 1: " in chart.group(0) and f"Game 2: {shown}" in chart.group(0)
    # Another player's public page shows theirs.
    assert 'id="st-rating">' in text(browser().get("/u/bob"))


def test_the_leaderboard_is_ranked_by_rating_first(app, browser):
    ann, bob, cat = (make_user(n) for n in ("ann", "bob", "cat"))
    code, (a, b, c) = table_with(app, ("Ann", ann), ("Bob", bob), ("Cat", cat))
    for seed in range(3):
        finish(code, bot_game([a, b, c], seed=seed))
    html = text(browser().get("/leaderboard"))
    tabs = re.findall(r'class="button small" href="/leaderboard\?by=(\w+)"', html)
    assert tabs[0] == "rating" and "wins" in tabs
    assert 'aria-current="page">Rating' in html
    rows = re.findall(r'<a href="/u/(\w+)">\w+</a></td><td class="num">(\d+)', html)
    expected = sorted(
        ((u.username, rating.current([u.id])[u.id].shown) for u in (ann, bob, cat)),
        key=lambda x: -x[1],
    )
    assert [(n, int(v)) for n, v in rows] == expected
    assert "provisional" in html and "starts at 1000" in html


# ----- schema --------------------------------------------------------------------------
def test_a_stored_database_gets_the_new_columns_and_keeps_its_rows(tmp_path):
    if os.environ.get("SKYMO_TEST_DATABASE") == "postgres":
        pytest.skip("SQLite's own upgrade path")
    url = f"sqlite:///{tmp_path / 'old.db'}"
    config = {"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": url, "INLINE_BOTS": 1}
    app = create_app(config)
    ann, bob = make_user("ann"), make_user("bob")
    code, (a, b) = table_with(app, ("Ann", ann), ("Bob", bob))
    finish(code, game_clean_win(a, b))
    db.execute_sql('ALTER TABLE "result" DROP COLUMN "rated"')
    db.execute_sql('ALTER TABLE "table" DROP COLUMN "min_finished"')
    db.close_all()
    create_app(config)
    with db.connection_context():
        assert "rated" in {c.name for c in db.get_columns("result")}
        assert "min_finished" in {c.name for c in db.get_columns("table")}
        assert Result.select().count() == 2 and Table.select().count() == 1
        assert {r.rated for r in Result.select()} == {None}
        assert rating.recompute() == 1  # results from before ratings are rated by it
    db.close_all()


def test_two_games_ending_together_rate_one_after_the_other(app):
    """Ann plays at two tables whose games end at the same moment: each game reads the
    rating the other wrote (on PostgreSQL her row is locked first), none is lost."""
    import threading

    ann, bob, cat = make_user("ann"), make_user("bob"), make_user("cat")
    games = []
    for other, name in ((bob, "Bob"), (cat, "Cat")):
        code, (a, b) = table_with(app, ("Ann", ann), (name, other))
        games.append((code, game_clean_win(a, b)))
    start = threading.Barrier(2, timeout=20)
    failed = []

    def end(code, game):
        try:
            with app.app_context():
                start.wait()
                finish(code, game)
        except Exception as exc:  # reported below: a thread's failure is not the test's
            failed.append(exc)
        finally:
            db.close()

    threads = [threading.Thread(target=end, args=g) for g in games]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not failed and not any(t.is_alive() for t in threads)
    assert sorted(r.games for r in Rating.select().where(Rating.user == ann)) == [1, 2]
    live = {(r.user_id, r.table_id): (r.mu, r.sigma, r.games) for r in Rating.select()}
    rating.recompute()
    assert {(r.user_id, r.table_id): (r.mu, r.sigma, r.games) for r in Rating.select()} == live


def test_a_score_sheet_game_never_counts(app):
    from app.features import scoresheet

    ann = make_user("ann")
    with app.test_request_context():
        sheet = scoresheet.create_sheet(
            {"player-1": "ann", "player-2": "Bob", "end_score": "10", "penalty_mode": "none"},
            "device-1",
            ann.id,
        )
        scoresheet.add_round(
            sheet, {"round_id": "round-0001", "score-1": "2", "score-2": "30", "ender": "1"}
        )
        assert scoresheet.sheet_tally(scoresheet.get_sheet(sheet.code)).over
    assert Rating.select().count() == 0 and Result.select().count() == 0
    assert rating.current([ann.id]) == {}

"""Helpers for the account, stats and leaderboard tests: accounts through the pages, and
finished games with known results recorded through the service's own save path."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest
from argon2 import PasswordHasher

from app import tables
from app.bots.registry import choose
from app.engine import (
    DECK,
    ROUND_OVER,
    DiscardDrawn,
    Draw,
    Game,
    KeepDrawn,
    Player,
    Reveal,
    RuleSet,
    view,
)
from app.features import accounts
from app.storage.models import Seat, Table, User

PASSWORD = "correct horse"


@pytest.fixture(autouse=True)
def cheap_hashing(monkeypatch):
    """argon2 with its smallest cost: the tests check the flows, not the hash's cost
    (test_accounts checks that production hashes are argon2 with the default cost)."""
    monkeypatch.setattr(
        accounts, "hasher", PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
    )


# 2×2 grids, 3 cards turned at the start: a round is over in a handful of moves.
SMALL = RuleSet(rows=2, cols=2, initial_flips=3, end_score=10)


# ----- accounts through the pages ------------------------------------------------------
def signup(b, username, password=PASSWORD, **extra):
    response = b.post("/signup", {"username": username, "password": password, **extra})
    b.get("/")  # a new session has a new CSRF token: pick it up
    return response


def signin(b, username, password=PASSWORD, **kw):
    response = b.post("/signin", {"username": username, "password": password}, **kw)
    b.get("/")
    return response


def signout(b):
    response = b.post("/signout")
    b.get("/")
    return response


def user(username) -> User:
    return User.get(User.username_lower == username.lower())


def make_user(username, password=PASSWORD) -> User:
    return accounts.create_user(username, password)


# ----- tables and games ----------------------------------------------------------------
def table_with(app, *people) -> tuple[str, list[Seat]]:
    """A lobby of `app` with these people: (name, User or None) pairs, the first hosts."""
    (host, host_user), *others = people
    with app.app_context():
        table, seat = tables.create_table(host, user_id=host_user.id if host_user else None)
        seats = [seat]
        for name, u in others:
            seats.append(tables.join(table.code, name, u.id if u else None))
    return table.code, seats


def finish(code: str, game: Game) -> None:
    """Save a finished engine game as the table's next game, through the same path as a
    move that ends a game (app.tables.save_game: record and results, one transaction)."""
    assert game.is_over
    with tables.store.locked(code):
        table = Table.get_by_id(code)
        table.game_number += 1
        table.status = Table.PLAYING
        tables.save_game(table, game)


def deck(grids, discard, draw=()) -> list[int]:
    """A whole deck in dealing order: grids (flat, in seating order), the discard, then
    the draw pile next card first, then the rest of the deck."""
    used = [v for grid in grids for v in grid] + [discard, *draw]
    rest = Counter(DECK)
    rest.subtract(Counter(used))
    assert min(rest.values()) >= 0
    return used + sorted(rest.elements())


def dealt(a: Seat, b: Seat, grids, discard, draw) -> Game:
    game = Game([Player(a.player_id, a.name), Player(b.player_id, b.name)], SMALL, deal=False)
    game.start_next_round(seating=[a.player_id, b.player_id], deck=deck(grids, discard, draw))
    return game


def game_penalised_ender(a: Seat, b: Seat) -> Game:
    """`a` clears a column, ends the round without the lowest score and is penalised:
    a 15 -> 30 (rank 2), b 10 (rank 1). One round."""
    game = dealt(a, b, [[5, 7, 5, 8], [1, 2, 3, 4]], 0, [12, 9])
    p, q = a.player_id, b.player_id
    for cell in [(0, 0), (0, 1), (1, 1)]:
        game.apply(p, Reveal(*cell))
    for cell in [(0, 0), (0, 1), (1, 0)]:
        game.apply(q, Reveal(*cell))
    assert game.round.turn == p  # 20 face up against 6
    game.apply(p, Draw())  # 12
    game.apply(p, DiscardDrawn((1, 0)))  # turns the second 5: the column clears
    game.apply(q, Draw())  # 9
    game.apply(q, DiscardDrawn((1, 1)))  # last turn
    assert game.is_over
    assert game.rounds[0].result["scores"] == {p: 30, q: 10}
    return game


def game_clean_win(a: Seat, b: Seat) -> Game:
    """`a` ends the round with the strictly lowest score: a 1 (rank 1), b 42."""
    game = dealt(a, b, [[0, 1, 2, 3], [9, 9, 10, 11]], 4, [12, -2, 5])
    p, q = a.player_id, b.player_id
    for cell in [(0, 0), (0, 1), (1, 0)]:
        game.apply(p, Reveal(*cell))
    for cell in [(0, 0), (0, 1), (1, 0)]:
        game.apply(q, Reveal(*cell))
    assert game.round.turn == q
    game.apply(q, Draw())  # 12
    game.apply(q, KeepDrawn(0, 0))
    game.apply(p, Draw())  # -2
    game.apply(p, KeepDrawn(1, 1))  # all face up: a ends
    game.apply(q, Draw())  # 5
    game.apply(q, DiscardDrawn((1, 1)))
    assert game.is_over
    assert game.rounds[0].result["scores"] == {p: 1, q: 42}
    return game


def bot_game(seats: list[Seat], seed, rules: RuleSet | None = None) -> Game:
    """A whole game played by greedy bots in the seats' places, through the engine."""
    rules = rules or RuleSet(end_score=40)
    game = Game([Player(s.player_id, s.name) for s in seats], rules, seed=seed)
    rng = random.Random(f"{seed}:test")
    while not game.is_over:
        if game.phase == ROUND_OVER:
            game.start_next_round()
            continue
        mover = next(p for p in game.active() if game.legal_actions(p))
        game.apply(mover, choose("greedy", view(game, mover), rng))
    return game


def expected_numbers(game: Game, player_id: str) -> dict:
    """A player's numbers read straight from the engine's round results."""
    scored = [r.result for r in game.rounds if r.result]
    mine = [res["scores"][player_id] for res in scored if player_id in res["scores"]]
    ended = [res for res in scored if res["ender"] == player_id and player_id in res["scores"]]
    rank = next(r["rank"] for r in game.ranking() if r["player"] == player_id)
    return {
        "rounds": len(mine),
        "sum": sum(mine),
        "scores": mine,
        "ended": len(ended),
        "penalised": sum(1 for res in ended if res["scores"][player_id] != res["raw"][player_id]),
        "columns": sum(
            1
            for r in game.rounds
            for e in r.log
            if e["type"] == "clear" and e["player"] == player_id and e["line"] == "column"
        ),
        "total": game.totals[player_id],
        "rank": rank,
        "won": rank == 1 and player_id not in game.forfeited,
    }


def text(response) -> str:
    return response.data.decode()


def signed_in_as(b) -> str | None:
    found = re.search(r'aria-label="Your account: ([^"]+)"', text(b.get("/")))
    return found.group(1) if found else None

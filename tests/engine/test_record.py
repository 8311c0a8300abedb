"""Game records (`skymo.game/1`, docs/design.md): writing, replaying, the conformance
records of an independent implementation (malformed records: test_record_malformed.py)."""

import copy
import json
import random
from pathlib import Path

import pytest
from engine_helpers import (
    CONFORMANCE,
    DECK,
    build_deck,
    do_step,
    fixed_game,
    load_conformance,
    players,
    quick_record_game,
    quick_rules,
    random_rules,
    random_step,
    ranking_key,
)

from app.engine import (
    FORMAT,
    Forfeit,
    Game,
    Reveal,
    RuleSet,
    replay,
    to_record,
)

# Loaded at import: a missing file fails the run (it is never skipped).
RECORDS = load_conformance()

MOVE_KEYS = {
    "reveal": {"player", "type", "row", "col"},
    "take_discard": {"player", "type", "row", "col"},
    "forfeit": {"player", "type"},
    "reshuffle": {"type", "draw_pile"},
}


def test_record_of_a_known_game():
    game = quick_record_game()
    record = to_record(game)
    deck = build_deck([[[12, 0], [1, -2]], [[1, 2], [3, 4]]], 7, [9, 5], game.rules)
    assert record == {
        "format": "skymo.game/1",
        "id": "K7QX2M9A",
        "rules": {
            "rows": 2,
            "cols": 2,
            "initial_flips": 3,
            "end_score": 50,
            "clear_rows": False,
            "penalty": {"mode": "multiplier", "multiplier": 2, "flat": 10},
            "show_running_score": True,
            "reseat": "never",
        },
        "players": [
            {"id": "p1", "name": "Ann", "bot": None},
            {"id": "p2", "name": "Robot", "bot": "greedy"},
        ],
        "rounds": [
            {
                "number": 1,
                "seating": ["p1", "p2"],
                "grids": {"p1": [[12, 0], [1, -2]], "p2": [[1, 2], [3, 4]]},
                "discard": [7],
                "draw_pile": deck[9:],
                "starter": "p1",
                "moves": [
                    {"player": "p2", "type": "reveal", "row": 0, "col": 0},
                    {"player": "p2", "type": "reveal", "row": 1, "col": 0},
                    {"player": "p1", "type": "reveal", "row": 0, "col": 0},
                    {"player": "p1", "type": "reveal", "row": 0, "col": 1},
                    {"player": "p1", "type": "reveal", "row": 1, "col": 0},
                    {"player": "p2", "type": "reveal", "row": 0, "col": 1},
                    {"player": "p1", "type": "draw", "keep": False, "flip": [1, 1]},
                    {"player": "p2", "type": "draw", "keep": True, "row": 0, "col": 0},
                ],
                # Bob kept the 5 over his 1: 5 + 2 + 3 + 4 = 14 > 11: Ann not penalised
                "result": {
                    "ender": "p1",
                    "raw": {"p1": 11, "p2": 14},
                    "scores": {"p1": 11, "p2": 14},
                    "totals": {"p1": 11, "p2": 14},
                },
            }
        ],
        "final": {
            "ended": False,
            "ranking": [
                {"player": "p1", "rank": 1, "total": 11},
                {"player": "p2", "rank": 2, "total": 14},
            ],
            "forfeited": [],
        },
    }
    assert json.loads(json.dumps(record)) == record
    assert record["rounds"][0]["draw_pile"][:2] == [9, 5]


def check_structure(record: dict, game: Game) -> None:
    assert set(record) == {"format", "id", "rules", "players", "rounds", "final"}
    assert record["format"] == FORMAT == "skymo.game/1"
    assert RuleSet.from_dict(record["rules"]) == game.rules
    assert record["players"] == [{"id": p.id, "name": p.name, "bot": p.bot} for p in game.players]
    rules = game.rules
    ids = [p["id"] for p in record["players"]]
    left: set[str] = set()
    for number, rnd in enumerate(record["rounds"], 1):
        keys = {"number", "seating", "grids", "discard", "draw_pile", "starter", "moves"}
        assert set(rnd) in (keys, keys | {"result"})
        assert rnd["number"] == number
        assert sorted(rnd["seating"]) == sorted(set(ids) - left)
        assert set(rnd["grids"]) == set(rnd["seating"])
        deck = []
        for p in rnd["seating"]:
            rows = rnd["grids"][p]
            assert len(rows) == rules.rows and all(len(r) == rules.cols for r in rows)
            deck += [v for row in rows for v in row]
        assert len(rnd["discard"]) == 1
        assert sorted(deck + rnd["discard"] + rnd["draw_pile"]) == sorted(DECK)
        assert rnd["starter"] in rnd["seating"] or rnd["starter"] is None
        seen_turn = False
        for move in rnd["moves"]:
            kind = move["type"]
            if kind == "draw":
                if move["keep"]:
                    assert set(move) == {"player", "type", "keep", "row", "col"}
                else:
                    assert set(move) == {"player", "type", "keep", "flip"}
                    assert move["flip"] is None or len(move["flip"]) == 2
            else:
                assert set(move) - {"after_result"} == MOVE_KEYS[kind]
            if kind == "reveal":
                assert not seen_turn, "reveals come before the first turn"
            elif kind != "forfeit":
                seen_turn = True
            if kind == "forfeit":
                left.add(move["player"])
            if "player" in move:
                assert move["player"] in rnd["seating"]
        if "result" in rnd:
            result = rnd["result"]
            assert set(result) == {"ender", "raw", "scores", "totals"}
            assert set(result["raw"]) == set(result["scores"]) == set(result["totals"])
    final = record["final"]
    assert set(final) == {"ended", "ranking", "forfeited"}
    assert final["ended"] == game.is_over
    assert final["forfeited"] == game.forfeited
    assert sorted(e["player"] for e in final["ranking"]) == sorted(ids)
    assert all(set(e) == {"player", "rank", "total"} for e in final["ranking"])


def random_game(seed: int, forfeit_rate: float = 0.003) -> Game:
    rng = random.Random(seed)
    game = Game(players(rng.randint(2, 8)), random_rules(rng), seed=seed, game_id=f"G{seed}")
    for _ in range(20000):
        if game.is_over:
            return game
        do_step(game, random_step(game, rng, forfeit_rate))
    raise AssertionError("the game did not end")


def test_record_structure_over_random_games():
    for seed in range(100):
        game = random_game(seed, forfeit_rate=0.01)
        record = json.loads(json.dumps(to_record(game)))
        check_structure(record, game)


def test_record_of_an_unfinished_game():
    game = Game(players(3), RuleSet(), seed=4, game_id="X")
    game.apply("p1", Reveal(0, 0))
    record = to_record(game)
    check_structure(record, game)
    assert record["final"]["ended"] is False
    assert "result" not in record["rounds"][0]
    again = replay(record)
    assert again.round.moves == game.round.moves
    assert again.phase == game.phase


def test_record_round_trip_over_random_games():
    for seed in range(400):
        game = random_game(seed)
        record = json.loads(json.dumps(to_record(game)))
        replayed = replay(record)
        assert replayed.is_over == game.is_over
        assert replayed.totals == game.totals
        assert replayed.forfeited == game.forfeited
        assert ranking_key(replayed.ranking()) == ranking_key(game.ranking())
        assert [r.result for r in replayed.rounds] == [r.result for r in game.rounds]
        assert to_record(replayed) == record


def test_record_keeps_a_forfeit_after_the_scoring():
    game = Game(players(3), quick_rules(end_score=1000), seed=1)
    rng = random.Random(1)
    while game.phase != "round_over":
        do_step(game, random_step(game, rng))
    game.apply("p2", Forfeit())
    record = to_record(game)
    assert record["rounds"][0]["moves"][-1] == {
        "player": "p2",
        "type": "forfeit",
        "after_result": True,
    }
    replayed = replay(record)
    assert replayed.rounds[0].result == game.rounds[0].result
    assert replayed.forfeited == ["p2"]


@pytest.mark.parametrize("leaver", ["p1", "p2"])
def test_a_game_ended_before_the_first_turn_replays_to_the_same_state(leaver):
    """Both first flips add up alike, so lots choose who starts; a forfeit then ends the
    game before anyone plays. The record names no starter (nobody played a turn), so the
    game over is nobody's turn, stored and replayed alike."""
    grid = [[5, 5, 1, 2], [3, 4, 6, 7], [8, 9, 10, 11]]
    game = fixed_game([grid, grid], discard=0)
    for p in ("p1", "p2"):
        game.apply(p, Reveal(0, 0))
        game.apply(p, Reveal(0, 1))
    assert game.round.turn in ("p1", "p2")
    game.apply(leaver, Forfeit())
    assert game.is_over and game.round.turn is None
    record = json.loads(json.dumps(to_record(game)))
    assert record["rounds"][0]["starter"] is None
    again = replay(record)
    assert again.round.turn is None
    assert to_record(again) == record


# ----- the conformance records ------------------------------------------------------


def test_conformance_records_are_there():
    assert CONFORMANCE.is_file()
    assert CONFORMANCE.is_relative_to(Path(__file__).resolve().parents[1])  # inside tests/
    assert len(RECORDS) == 120
    assert all(r["format"] == FORMAT for r in RECORDS)


@pytest.mark.parametrize("record", RECORDS, ids=[r["id"] for r in RECORDS])
def test_conformance_record_replays(record):
    record = copy.deepcopy(record)
    game = replay(record)
    assert len(game.rounds) == len(record["rounds"])
    for mine, theirs in zip(game.rounds, record["rounds"], strict=True):
        assert mine.seating == theirs["seating"]
        assert mine.first_turn == theirs["starter"] or no_turn_named(mine, theirs)
        assert mine.result == theirs.get("result")
    final = record["final"]
    assert game.is_over == final["ended"]
    assert ranking_key(game.ranking()) == ranking_key(final["ranking"])
    assert game.forfeited == final["forfeited"]
    # writing it again gives the same deal, moves and results
    again = to_record(game)
    for rnd, mine, theirs in zip(game.rounds, again["rounds"], record["rounds"], strict=True):
        if no_turn_named(rnd, theirs):
            assert mine["starter"] is None
            mine = {**mine, "starter": theirs["starter"]}
        assert mine == theirs


def no_turn_named(rnd, theirs: dict) -> bool:
    """A round without any turn whose record names the player the rules chose to start
    (one conformance record does); Skymo writes null there (docs/design.md)."""
    named = theirs["starter"]
    return rnd.first_turn is None and named is not None and named == rnd.starter


def test_conformance_records_cover_the_rules():
    """The conformance records exercise what they claim: reshuffles, row clears, forfeits."""
    kinds = {m["type"] for r in RECORDS for rnd in r["rounds"] for m in rnd["moves"]}
    assert kinds == {"reveal", "take_discard", "draw", "reshuffle", "forfeit"}
    assert {len(r["players"]) for r in RECORDS} == set(range(2, 9))
    assert any(r["rules"]["clear_rows"] for r in RECORDS)
    assert any(not r["final"]["ended"] for r in RECORDS)

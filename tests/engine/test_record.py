"""Game records (`skymo.game/1`, docs/design.md): writing, replaying, the conformance
records of an independent implementation (malformed records: test_record_malformed.py)."""

import copy
import dataclasses
import json
import random
from pathlib import Path

import pytest

from app.engine import (
    FORMAT,
    ROUND_OVER,
    Forfeit,
    Game,
    RecordError,
    Reveal,
    RuleSet,
    replay,
    to_record,
)
from tests.engine.engine_helpers import (
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
    assert set(record) - {"after_last_round"} == {
        "format",
        "id",
        "rules",
        "players",
        "rounds",
        "final",
    }
    assert record["format"] == FORMAT == "skymo.game/1"
    assert RuleSet.from_dict(record["rules"]) == game.rules
    assert record["players"] == [{"id": p.id, "name": p.name, "bot": p.bot} for p in game.players]
    rules = game.rules
    ids = [p["id"] for p in record["players"]]
    for number, rnd in enumerate(record["rounds"], 1):
        keys = {"number", "seating", "grids", "discard", "draw_pile", "starter", "moves"}
        assert set(rnd) in (keys, keys | {"result"})
        assert rnd["number"] == number
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
                assert set(move) == MOVE_KEYS[kind]
            if kind == "reveal":
                assert not seen_turn, "reveals come before the first turn"
            elif kind != "forfeit":
                seen_turn = True
    for move in record.get("after_last_round", []):
        assert move == {"player": move["player"], "type": "forfeit"}
    left = read_naively(record)
    final = record["final"]
    assert set(final) == {"ended", "ranking", "forfeited"}
    assert final["ended"] == game.is_over
    assert final["forfeited"] == game.forfeited == left
    assert sorted(e["player"] for e in final["ranking"]) == sorted(ids)
    assert all(set(e) == {"player", "rank", "total"} for e in final["ranking"])


def read_naively(record: dict, known=("after_last_round",)) -> list[str]:
    """Read a record as an implementation that knows of the optional keys only those
    `known` (none of a move's): each round dealt to its seating, then its moves in
    order, then its result. Who left must never be
    seated, play or be scored after leaving, and everyone still in the game is seated.
    Returns who left, in order."""
    ids = [p["id"] for p in record["players"]]
    left: list[str] = []
    for rnd in record["rounds"]:
        moves = rnd["moves"]
        # A forfeit by a player the round does not seat: they left before its deal,
        # after the previous round's result; such forfeits come first.
        before = 0
        while before < len(moves) and moves[before].get("player", "") not in rnd["seating"]:
            move = moves[before]
            assert move["type"] == "forfeit" and move["player"] not in left
            left.append(move["player"])
            before += 1
        assert sorted(rnd["seating"]) == sorted(set(ids) - set(left)), "seated after leaving"
        for move in moves[before:]:
            if "player" in move:
                assert move["player"] in rnd["seating"] and move["player"] not in left
            if move["type"] == "forfeit":
                left.append(move["player"])
        if "result" in rnd:
            assert not set(rnd["result"]["raw"]) & set(left), "a result for a player who left"
    if "after_last_round" in known:
        left += [move["player"] for move in record.get("after_last_round", [])]
    return left


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


# ----- forfeits after a round was scored ----------------------------------------------


def scored_round_one(n: int) -> Game:
    """n players; round 1 played to its end and scored, the game going on."""
    game = Game(players(n), quick_rules(end_score=1000), seed=1, game_id="G1")
    rng = random.Random(1)
    while game.phase != ROUND_OVER:
        do_step(game, random_step(game, rng))
    return game


def play_round(game: Game, rng: random.Random) -> None:
    number = len(game.rounds)
    while not game.is_over and not (game.phase == ROUND_OVER and len(game.rounds) > number):
        do_step(game, random_step(game, rng))


def round_trip(game: Game) -> dict:
    """The game's record replays to the same game, which writes the very same record."""
    record = json.loads(json.dumps(to_record(game)))
    check_structure(record, game)
    again = replay(copy.deepcopy(record))
    assert [r.result for r in again.rounds] == [r.result for r in game.rounds]
    assert again.totals == game.totals and again.forfeited == game.forfeited
    assert again.phase == game.phase
    assert to_record(again) == record
    return record


def test_a_forfeit_between_rounds_comes_first_in_the_next_round():
    game = scored_round_one(3)
    game.apply("p2", Forfeit())  # after round 1 was scored: Bob has a result in it
    game.start_next_round()
    play_round(game, random.Random(2))
    record = round_trip(game)
    first, second = record["rounds"][:2]
    assert "p2" in first["result"]["raw"]
    assert {"player": "p2", "type": "forfeit"} not in first["moves"]
    assert second["moves"][0] == {"player": "p2", "type": "forfeit"}
    assert second["seating"] == ["p1", "p3"] and "p2" not in second["result"]["raw"]
    assert "after_last_round" not in record
    # A reader that knows no optional key reads who left, and when
    assert read_naively(record, known=()) == ["p2"]


@pytest.mark.parametrize("n", [2, 3])
def test_a_forfeit_after_the_last_scored_round_is_listed_after_it(n):
    """Every player but one leaves after round 1 was scored: the game ends with no
    round to list their forfeits in."""
    game = scored_round_one(n)
    leavers = ["p3", "p2"][-(n - 1) :]
    for p in leavers:
        game.apply(p, Forfeit())
    assert game.is_over and len(game.rounds) == 1
    record = round_trip(game)
    assert record["after_last_round"] == [{"player": p, "type": "forfeit"} for p in leavers]
    assert record["rounds"][0]["moves"][-1]["type"] != "forfeit"
    assert set(record["rounds"][0]["result"]["raw"]) == {f"p{i + 1}" for i in range(n)}
    assert record["final"]["forfeited"] == leavers
    assert record["final"]["ranking"][0]["player"] == "p1"
    # Without the new key a reader still reads every round right, and `final` says who
    # left: only not when.
    assert read_naively(record, known=()) == []


def test_a_record_written_between_rounds_lists_the_forfeit_after_the_last_round():
    game = scored_round_one(4)
    game.apply("p4", Forfeit())
    record = round_trip(game)
    assert record["after_last_round"] == [{"player": "p4", "type": "forfeit"}]
    assert record["final"]["ended"] is False
    again = replay(record)
    again.start_next_round()
    assert again.round.seating == ["p1", "p2", "p3"]


def older_record(record: dict) -> dict:
    """`record` as Skymo wrote it before: a forfeit after a round was scored stays in
    that round's moves, marked "after_result"."""
    old = copy.deepcopy(record)
    rounds = old["rounds"]
    for before, rnd in zip(rounds, rounds[1:], strict=False):
        while rnd["moves"] and rnd["moves"][0]["player"] not in rnd["seating"]:
            before["moves"].append({**rnd["moves"].pop(0), "after_result": True})
    for move in old.pop("after_last_round", []):
        rounds[-1]["moves"].append({**move, "after_result": True})
    return old


@pytest.mark.parametrize("where", ["between", "last"])
def test_older_records_with_after_result_still_replay(where):
    game = scored_round_one(3)
    game.apply("p2", Forfeit())
    if where == "between":
        game.start_next_round()
        play_round(game, random.Random(3))
    else:
        game.apply("p3", Forfeit())
    record = round_trip(game)
    old = older_record(record)
    assert old != record
    assert {"player": "p2", "type": "forfeit", "after_result": True} in old["rounds"][0]["moves"]
    again = replay(old)
    assert [r.result for r in again.rounds] == [r.result for r in game.rounds]
    assert again.forfeited == game.forfeited and again.phase == game.phase
    assert to_record(again) == record  # written back in today's form


def test_a_forfeit_between_rounds_listed_after_play_began_is_refused():
    game = scored_round_one(3)
    game.apply("p2", Forfeit())
    game.start_next_round()
    play_round(game, random.Random(2))
    record = json.loads(json.dumps(to_record(game)))
    moves = record["rounds"][1]["moves"]
    moves.insert(3, moves.pop(0))  # Bob's forfeit after two reveals of round 2
    with pytest.raises(RecordError, match="round 2: the seating is"):
        replay(record)


def unseat(rnd: dict, player: str) -> None:
    """Leave `player` out of the round: their dealt cards go under the draw pile."""
    rnd["seating"].remove(player)
    rnd["draw_pile"] += [v for row in rnd["grids"].pop(player) for v in row]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        # Bob left after round 1, yet is seated in round 2 (his forfeit dropped)
        (lambda r: r["rounds"][1]["moves"].pop(0), "round 2: the seating is"),
        # Cat, still in the game, left out of round 2's seating
        (lambda r: unseat(r["rounds"][1], "p3"), "round 2: the seating is"),
    ],
)
def test_a_seating_that_is_not_the_players_still_in_the_game_is_refused(change, message):
    game = scored_round_one(3)
    game.apply("p2", Forfeit())
    game.start_next_round()
    record = json.loads(json.dumps(to_record(game)))
    change(record)
    with pytest.raises(RecordError, match=message):
        replay(record)


@pytest.mark.parametrize(
    "after",
    [
        [{"player": "p1", "type": "reveal", "row": 0, "col": 0}],  # only forfeits
        [{"player": "p2", "type": "forfeit"}] * 2,  # Bob left already
        "p2",
    ],
)
def test_after_last_round_holds_only_forfeits_made_after_it(after):
    game = scored_round_one(3)
    game.apply("p2", Forfeit())
    record = json.loads(json.dumps(to_record(game)))
    record["after_last_round"] = after
    with pytest.raises(RecordError):
        replay(record)


def test_after_last_round_needs_the_last_round_scored():
    game = scored_round_one(3)
    game.start_next_round()
    record = json.loads(json.dumps(to_record(game)))
    record["after_last_round"] = [{"player": "p2", "type": "forfeit"}]
    with pytest.raises(RecordError, match="after_last_round, move 1"):
        replay(record)


def test_forfeits_between_rounds_over_random_games():
    """Players leave after rounds were scored, often: every record reads right without
    its optional keys, replays, and is written back the same."""
    between = ended_by_them = 0
    for seed in range(150):
        rng = random.Random(seed)
        rules = dataclasses.replace(random_rules(rng), end_score=100)
        game = Game(players(rng.randint(2, 6)), rules, seed=seed, game_id=f"B{seed}")
        while not game.is_over:
            if game.phase == ROUND_OVER and rng.random() < 0.5:
                game.apply(rng.choice(game.active()), Forfeit())
                between += 1
                ended_by_them += game.is_over
            else:
                do_step(game, random_step(game, rng, 0.002))
        round_trip(game)
    assert between > 40 and ended_by_them > 10  # both forms written, many times


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

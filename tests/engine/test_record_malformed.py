"""Malformed game records: each is refused with a RecordError that says what is wrong."""

import copy
import json

import pytest

from app.engine import (
    Game,
    RecordError,
    Reveal,
    RuleSet,
    TakeDiscard,
    replay,
    to_record,
)
from tests.engine.engine_helpers import (
    keep_turn,
    players,
    quick_record_game,
    quick_rules,
)

# ----- malformed records ------------------------------------------------------------


def a_record() -> dict:
    return json.loads(json.dumps(to_record(quick_record_game())))


def test_a_valid_record_replays():
    game = replay(a_record())
    assert game.totals == {"p1": 11, "p2": 14}


@pytest.mark.parametrize("fmt", ["skymo.game/2", "", None, "SKYMO.GAME/1"])
def test_wrong_format(fmt):
    record = a_record()
    record["format"] = fmt
    with pytest.raises(RecordError, match="not a skymo.game/1 record"):
        replay(record)
    record.pop("format")
    with pytest.raises(RecordError):
        replay(record)


def test_bad_header():
    record = a_record()
    record["rules"]["rows"] = 9
    with pytest.raises(RecordError, match="bad header"):
        replay(record)
    record = a_record()
    record["players"] = record["players"][:1]
    with pytest.raises(RecordError, match="bad header"):
        replay(record)
    record = a_record()
    del record["rules"]
    with pytest.raises(RecordError):
        replay(record)


def mutate(change):
    record = a_record()
    change(record)
    return record


def _set(path, value):
    def change(record):
        target = record
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


MOVES = ("rounds", 0, "moves")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        # moves the rules do not allow
        (_set((*MOVES, 1), {"player": "p2", "type": "reveal", "row": 0, "col": 0}), "move 2"),
        (_set((*MOVES, 1), {"player": "p2", "type": "reveal", "row": 2, "col": 0}), "move 2"),
        (_set((*MOVES, 6, "player"), "p2"), "move 7"),
        (_set((*MOVES, 6, "flip"), [0, 0]), "already face up"),
        (_set((*MOVES, 6, "flip"), None), "move 7"),
        (_set((*MOVES, 7, "player"), "p1"), "It is Robot's turn"),
        (_set((*MOVES, 7, "player"), "p9"), "move 8"),
        (_set((*MOVES, 7, "type"), "steal"), "unknown move type"),
        (_set((*MOVES, 7), {"player": "p2", "type": "draw"}), "move 8"),
        (_set((*MOVES, 2), {"player": "p1", "type": "take_discard", "row": 0, "col": 0}), ""),
        (lambda r: r["rounds"][0]["moves"].insert(6, {"type": "reshuffle", "draw_pile": []}), ""),
        (_set(("rounds", 0, "starter"), "p2"), "round 1"),
        # results that do not match
        (_set(("rounds", 0, "result", "scores", "p1"), 22), "result"),
        (_set(("rounds", 0, "result", "raw", "p2"), 15), "result"),
        (_set(("rounds", 0, "result", "totals", "p2"), 0), "result"),
        (_set(("rounds", 0, "result", "ender"), "p2"), "result"),
        # deals that are not the deck
        (_set(("rounds", 0, "grids", "p1", 0, 0), 13), "not the 150-card deck"),
        (_set(("rounds", 0, "grids", "p1", 0, 0), 11), "not the 150-card deck"),
        (_set(("rounds", 0, "discard"), [7, 7]), "not the 150-card deck"),
        (_set(("rounds", 0, "discard"), []), "not the 150-card deck"),
        (lambda r: r["rounds"][0]["draw_pile"].pop(), "not the 150-card deck"),
        (lambda r: r["rounds"][0]["draw_pile"].append(0), "not the 150-card deck"),
        (_set(("rounds", 0, "grids", "p1"), [[12, 0, 1, -2]]), "wrong shape"),
        (_set(("rounds", 0, "grids", "p2"), [[1, 2], [3]]), "wrong shape"),
        # values of the wrong type (once a TypeError or a KeyError, not a RecordError)
        (_set(("rounds", 0, "discard"), "x"), "discard"),
        (_set(("rounds", 0, "draw_pile"), {"a": 1}), "draw_pile"),
        (_set(("rounds", 0, "grids", "p1"), 7), "wrong shape"),
        (_set(("players", 0, "id"), "x"), "seating"),
        (_set(("players", 0, "id"), 1), "players.1.id"),
        (_set(("rounds", 0, "moves", 0), "reveal"), "move 1"),
        (_set(("rounds", 0, "moves", 6, "flip"), "1,1"), "flip"),
    ],
)
def test_malformed_records_raise_record_error(change, message):
    record = mutate(change)
    with pytest.raises(RecordError) as info:
        replay(record)
    assert message in str(info.value)


def test_a_result_that_was_not_reached():
    record = a_record()
    record["rounds"][0]["moves"].pop()  # the bot's last turn is missing
    with pytest.raises(RecordError, match="result"):
        replay(record)


def test_a_round_after_an_unfinished_round():
    record = a_record()
    second = copy.deepcopy(record["rounds"][0])
    second["number"] = 2
    record["rounds"][0]["moves"] = record["rounds"][0]["moves"][:6]
    del record["rounds"][0]["result"]
    record["rounds"].append(second)
    with pytest.raises(RecordError, match="round 2"):
        replay(record)


def test_reshuffles_must_replay_exactly():
    game = Game(players(2), RuleSet(), seed=3)
    for p in ("p1", "p2"):
        game.apply(p, Reveal(0, 0))
        game.apply(p, Reveal(0, 1))
    while not any(m["type"] == "reshuffle" for m in game.round.moves):
        keep_turn(game, game.round.turn, (0, 0))  # the draw pile runs out
    record = json.loads(json.dumps(to_record(game)))
    assert replay(record).round.draw_pile == game.round.draw_pile
    moves = record["rounds"][0]["moves"]
    index = next(i for i, m in enumerate(moves) if m["type"] == "reshuffle")
    assert moves[index + 1]["type"] == "draw"
    bad = copy.deepcopy(record)
    bad["rounds"][0]["moves"][index]["draw_pile"][0] = 99
    with pytest.raises(RecordError, match="reshuffle"):
        replay(bad)
    bad = copy.deepcopy(record)
    bad["rounds"][0]["moves"][index]["draw_pile"].pop()
    with pytest.raises(RecordError, match="reshuffle"):
        replay(bad)
    early = copy.deepcopy(record)
    move = early["rounds"][0]["moves"].pop(index)
    early["rounds"][0]["moves"].insert(index - 2, move)
    with pytest.raises(RecordError, match="still has cards"):
        replay(early)
    missing = copy.deepcopy(record)
    missing["rounds"][0]["moves"].pop(index)
    # without the recorded order the replay shuffles by its own seed: the moves that
    # follow no longer match (or the result differs), or at best the state differs
    try:
        replayed = replay(missing)
    except RecordError:
        pass
    else:
        assert replayed.round.draw_pile != game.round.draw_pile


def test_the_starter_by_lot_is_taken_from_the_record():
    rules = RuleSet(initial_flips=0)
    game = Game(players(4), rules, seed=11)
    record = to_record(game)
    for p in ("p1", "p2", "p3", "p4"):
        record["rounds"][0]["starter"] = p
        assert replay(record).round.turn == p
    record["rounds"][0]["starter"] = "p7"
    with pytest.raises(RecordError):
        replay(record)


def test_take_discard_move_is_checked_against_the_grid():
    game = Game(players(2), quick_rules(), seed=2)
    for p in ("p1", "p2"):
        for cell in [(0, 0), (0, 1), (1, 0)]:
            game.apply(p, Reveal(*cell))
    game.apply(game.round.turn, TakeDiscard(1, 1))
    record = to_record(game)
    record["rounds"][0]["moves"][-1]["row"] = 5
    with pytest.raises(RecordError, match="There is no card at that position"):
        replay(record)


@pytest.mark.parametrize(
    "change",
    [
        _set(("rounds", 0, "grids", "p1", 1, 0), True),  # in place of a 1: equal to it
        _set(("rounds", 0, "grids", "p1", 1, 0), 1.0),
        _set((*MOVES, 1, "row"), True),  # row 1, written as true
        _set((*MOVES, 7, "keep"), 1),
        _set(("players", 1, "name"), {"first": "Robot"}),
        _set(("players", 1, "name"), ""),
        _set(("players", 1, "bot"), ["greedy"]),
        _set(("rounds", 0, "number"), True),
    ],
)
def test_values_of_the_wrong_type_are_refused_even_when_equal(change):
    """JSON's true is 1 to Python, a float may equal a card: a record must say what it
    means, as the format writes it."""
    with pytest.raises(RecordError):
        replay(mutate(change))


def test_the_error_says_what_is_wrong_as_data():
    """A page phrases it in its reader's words from these, never from the message."""
    record = mutate(_set((*MOVES, 7, "player"), "p1"))
    with pytest.raises(RecordError) as info:
        replay(record)
    err = info.value
    assert (err.problem, err.round_number, err.move_number) == ("illegal", 1, 8)
    assert err.reason == "It is Robot's turn" and err.move == record["rounds"][0]["moves"][7]
    record = a_record()
    record["rules"] = "rows=2"
    with pytest.raises(RecordError) as info:
        replay(record)
    assert (info.value.problem, info.value.field, info.value.round_number) == (
        "wrong",
        "rules",
        None,
    )
    record = mutate(_set(("rules", "cols"), 9))
    with pytest.raises(RecordError) as info:
        replay(record)
    assert (info.value.problem, info.value.field) == ("rules", "rules.cols")
    assert info.value.__cause__.field == "cols"
    record = mutate(_set(("rounds", 0, "result", "scores", "p1"), 22))
    with pytest.raises(RecordError) as info:
        replay(record)
    assert info.value.problem == "result" and info.value.found["scores"]["p1"] == 22
    assert info.value.expected["scores"]["p1"] == 11

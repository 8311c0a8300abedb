"""A round's recorded `starter` (docs/design.md, "Game records"): the first player who
takes, draws, keeps or discards in the round (its first `take_discard` or `draw` move);
reveals and forfeits are not turns. When the player the rules named to start forfeits
before playing, the turn passes on and whoever plays it is the starter; a round in which
nobody played a turn has none (null). Written that way, and replayed that way."""

import copy
import json

import pytest

from app.engine import (
    GAME_OVER,
    PLAY,
    ROUND_OVER,
    Draw,
    Forfeit,
    Game,
    RecordError,
    Reveal,
    replay,
)
from app.engine import to_record as write
from tests.engine.engine_helpers import (
    build_deck,
    flip_turn,
    flip_until_round_end,
    keep_turn,
    players,
    quick_game,
    quick_rules,
)

# 2×2 grids, (1, 1) face down: face-up sums Ann 6, Bob 33, Cat 18, Dan 9, Eve 8. Bob
# starts.
ANN, BOB, CAT, DAN = [[1, 2], [3, 4]], [[12, 11], [10, 0]], [[5, 6], [7, 8]], [[2, 3], [4, 5]]
EVE = [[1, 3], [4, 9]]


def round_trip(game) -> dict:
    """The game's record replays, and the replay writes the very same record."""
    record = json.loads(json.dumps(write(game)))
    again = replay(copy.deepcopy(record))
    assert write(again) == record
    return record


def starters(record: dict) -> list[str | None]:
    return [rnd["starter"] for rnd in record["rounds"]]


def with_starter(record: dict, number: int, starter) -> dict:
    record = copy.deepcopy(record)
    record["rounds"][number - 1]["starter"] = starter
    return record


# ----- round 1 ------------------------------------------------------------------------


def test_round_one_starter_forfeits_before_playing():
    game = quick_game([ANN, BOB, CAT])
    assert game.round.turn == "p2"  # the rules name Bob
    game.apply("p2", Forfeit())
    assert game.round.turn == "p3"
    keep_turn(game, "p3", (0, 0))
    record = round_trip(game)
    assert starters(record) == ["p3"]
    # Bob never played: a record naming him does not replay
    with pytest.raises(RecordError, match="round 1"):
        replay(with_starter(record, 1, "p2"))


def test_round_one_starter_forfeits_holding_a_drawn_card():
    """Drawing is not a turn played: the card goes back and Cat plays the first turn."""
    game = quick_game([ANN, BOB, CAT])
    game.apply("p2", Draw())
    game.apply("p2", Forfeit())
    flip_turn(game, "p3", (1, 1))
    assert starters(round_trip(game)) == ["p3"]


def test_round_one_starter_and_the_next_forfeit_before_playing():
    game = quick_game([ANN, BOB, CAT, DAN])
    game.apply("p3", Forfeit())  # out of turn: Bob still starts
    assert game.round.turn == "p2"
    game.apply("p2", Forfeit())
    assert game.round.turn == "p4"
    keep_turn(game, "p4", (0, 0))
    assert starters(round_trip(game)) == ["p4"]


@pytest.mark.parametrize("seed", range(8))
def test_round_one_lot_winner_forfeits_before_playing(seed):
    """Ann and Cat tie (13, highest card 12): lots. The winner leaves before playing,
    the next seat plays first; the replay finds a lot winner that gives the same."""
    ann, cat = [[12, 0], [1, 4]], [[0, 12], [1, 5]]
    game = quick_game([ann, ANN, cat, DAN], seed=seed)
    winner = game.round.turn
    assert winner in ("p1", "p3")
    game.apply(winner, Forfeit())
    nxt = {"p1": "p2", "p3": "p4"}[winner]
    assert game.round.turn == nxt
    keep_turn(game, nxt, (0, 0))
    record = round_trip(game)
    assert starters(record) == [nxt]


def test_no_turn_played_in_round_one():
    """Two players; the one named to start leaves: the game ends before any turn."""
    game = quick_game([ANN, BOB])
    game.apply("p2", Forfeit())
    assert game.phase == GAME_OVER
    record = round_trip(game)
    assert starters(record) == [None]
    # Another implementation may name the player the rules chose: that replays too,
    # and is written back as null.
    again = replay(with_starter(record, 1, "p2"))
    assert starters(write(again)) == [None]
    with pytest.raises(RecordError, match="round 1"):
        replay(with_starter(record, 1, "p1"))


def test_a_starter_who_is_not_seated_is_refused():
    game = quick_game([ANN, BOB, CAT])
    keep_turn(game, "p2", (0, 0))
    record = round_trip(game)
    for wrong in ("p9", "p1", "p3"):
        with pytest.raises(RecordError, match="round 1"):
            replay(with_starter(record, 1, wrong))


# ----- later rounds -------------------------------------------------------------------


def round_two(players_grids, forfeit_during_setup=False):
    """Round 1: Bob starts and ends at once (he turns his last card); round 2 is dealt
    from a fixed deck and set up, Bob forfeiting before or during that setup."""
    game = quick_game(players_grids)
    flip_turn(game, "p2", (1, 1))
    assert game.round.ender == "p2"
    flip_until_round_end(game)
    assert game.phase == ROUND_OVER
    seating = [f"p{i + 1}" for i in range(len(players_grids))]
    deck = build_deck([ANN, [[1, 1], [2, 2]], CAT, DAN][: len(seating)], 7, rules=game.rules)
    game.start_next_round(seating=seating, deck=deck)
    if forfeit_during_setup:
        game.apply("p2", Forfeit())
    for p in seating:
        if p != "p2" or not forfeit_during_setup:
            for cell in [(0, 0), (0, 1), (1, 0)]:
                game.apply(p, Reveal(*cell))
    return game


def test_later_round_ender_forfeits_before_playing():
    game = round_two([ANN, BOB, CAT])
    assert game.phase == PLAY and game.round.turn == "p2"  # Bob ended round 1
    game.apply("p2", Forfeit())
    assert game.round.turn == "p3"
    keep_turn(game, "p3", (0, 0))
    record = round_trip(game)
    assert starters(record) == ["p2", "p3"]
    with pytest.raises(RecordError, match="round 2"):
        replay(with_starter(record, 2, "p2"))


def test_an_independent_record_of_a_later_round_replays():
    """Written by hand as another implementation would: Bob ended round 1, left before
    playing in round 2, and Cat, next in seat order, played its first turn."""
    game = round_two([ANN, BOB, CAT])
    game.apply("p2", Forfeit())
    keep_turn(game, "p3", (0, 0))
    flip_until_round_end(game)
    record = json.loads(json.dumps(write(game)))
    record["rounds"][1]["starter"] = "p3"
    again = replay(record)
    assert [r.result for r in again.rounds] == [r.result for r in game.rounds]
    assert again.forfeited == ["p2"] and again.totals == game.totals


def test_later_round_ender_forfeits_during_setup():
    """Bob left before play began: the first-round rule names someone else, who plays."""
    game = round_two([ANN, BOB, CAT, DAN], forfeit_during_setup=True)
    starter = game.round.turn
    assert starter == "p3"  # Cat shows 18, Ann 6, Dan 9
    keep_turn(game, starter, (0, 0))
    assert starters(round_trip(game)) == ["p2", "p3"]


def test_no_turn_played_in_a_later_round():
    game = round_two([ANN, BOB])
    game.apply("p2", Forfeit())
    assert game.phase == GAME_OVER
    record = round_trip(game)
    assert starters(record) == ["p2", None]
    assert record["rounds"][1]["moves"][-1] == {"player": "p2", "type": "forfeit"}


# ----- records written while a round is being played ----------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_a_record_written_before_the_first_turn_names_whose_turn_it_is(seed):
    """Lots chose the starter (no cards turned at setup) and nobody has played yet:
    the record names the player whose turn it is, so the lots replay the same."""
    game = Game(players(4), quick_rules(initial_flips=0), seed=seed)
    named = game.round.turn
    record = json.loads(json.dumps(write(game)))
    assert starters(record) == [named]
    assert replay(record).round.turn == named
    game.apply(named, Draw())  # a drawn card is not a turn played yet
    assert starters(write(game)) == [named]
    game.apply(named, Forfeit())  # the turn passes on
    record = json.loads(json.dumps(write(game)))
    assert starters(record) == [game.round.turn] != [named]
    assert replay(record).round.turn == game.round.turn


# ----- the starter forfeits when their first turn comes, with 2 and with 5 players ------


def first_turn_players(record: dict, number: int) -> list[str]:
    """Who took, drew, kept or discarded in round `number`, in order (the record read as
    another implementation reads it: reveals and forfeits are not turns)."""
    moves = record["rounds"][number - 1]["moves"]
    return [m["player"] for m in moves if m["type"] in ("take_discard", "draw")]


def independent_replay(record: dict) -> dict:
    """Replay a record and write it again: the starters a replay finds must be the ones
    the record names, and the record written back must be the very same."""
    again = write(replay(copy.deepcopy(record)))
    assert again == record
    return again


@pytest.mark.parametrize("n", [2, 5])
def test_the_starter_forfeits_at_their_first_turn_in_round_one(n):
    game = quick_game([ANN, BOB, CAT, DAN, EVE][:n])
    assert game.round.turn == "p2"  # the rules name Bob: his first turn has come
    game.apply("p2", Forfeit())
    if n == 2:
        # Ann alone is left: the game ends before anyone took, drew, kept or discarded
        assert game.phase == GAME_OVER
        record = round_trip(game)
        assert starters(record) == [None]
        assert first_turn_players(record, 1) == []
    else:
        assert game.round.turn == "p3"
        keep_turn(game, "p3", (0, 0))
        flip_turn(game, "p4", (1, 1))
        record = round_trip(game)
        assert starters(record) == ["p3"] == first_turn_players(record, 1)[:1]
        # Bob, who forfeited, is not the starter: a record naming him does not replay
        with pytest.raises(RecordError, match="round 1: the starter is p2, but p3 played"):
            replay(with_starter(record, 1, "p2"))
    independent_replay(record)


def later_round(n: int) -> Game:
    """Round 1: Bob starts and ends at once (he turns his last card), everyone plays
    their last turn; round 2 is dealt from a fixed deck and set up. Bob, the ender of
    round 1, starts round 2."""
    grids = [ANN, BOB, CAT, DAN, EVE][:n]
    game = quick_game(grids, rules=quick_rules(end_score=1000))
    flip_turn(game, "p2", (1, 1))
    assert game.round.ender == "p2"
    flip_until_round_end(game)
    assert game.phase == ROUND_OVER
    seating = [f"p{i + 1}" for i in range(n)]
    deck = build_deck([ANN, [[1, 1], [2, 2]], CAT, DAN, EVE][:n], 7, rules=game.rules)
    game.start_next_round(seating=seating, deck=deck)
    for p in seating:
        for cell in [(0, 0), (0, 1), (1, 0)]:
            game.apply(p, Reveal(*cell))
    assert game.phase == PLAY and game.round.turn == "p2"
    return game


@pytest.mark.parametrize("n", [2, 5])
def test_the_starter_forfeits_at_their_first_turn_in_a_later_round(n):
    game = later_round(n)
    game.apply("p2", Forfeit())
    if n == 2:
        assert game.phase == GAME_OVER
        record = round_trip(game)
        assert starters(record) == ["p2", None]
        assert first_turn_players(record, 2) == []
    else:
        assert game.round.turn == "p3"
        keep_turn(game, "p3", (0, 0))
        flip_until_round_end(game)
        record = round_trip(game)
        assert starters(record) == ["p2", "p3"]
        assert first_turn_players(record, 2)[0] == "p3"
        with pytest.raises(RecordError, match="round 2: the starter is p2, but p3 played"):
            replay(with_starter(record, 2, "p2"))
    independent_replay(record)


@pytest.mark.parametrize("seed", range(6))
def test_five_players_the_lot_winner_forfeits_at_their_first_turn(seed):
    """No card turned at setup: lots name the starter. They forfeit when their first
    turn comes and the next seat plays it: that player is the starter, and the replay
    of the record (whose lots come from another seed) plays the same game."""
    game = Game(players(5), quick_rules(initial_flips=0, end_score=1000), seed=seed)
    named = game.round.turn
    game.apply(named, Forfeit())
    nxt = game.round.turn
    assert nxt != named
    keep_turn(game, nxt, (0, 0))
    record = round_trip(game)
    assert starters(record) == [nxt]
    independent_replay(record)
    with pytest.raises(RecordError, match="round 1"):
        replay(with_starter(record, 1, named))

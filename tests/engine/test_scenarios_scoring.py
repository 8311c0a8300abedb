"""Fixed-deck scenarios: the end of a round, scoring and the end of the game.

Decks are listed in dealing order (each seat's grid row-major, the discard card, then
the draw pile next card first); `build_deck` fills the rest with the unused cards."""

import pytest

from app.engine import (
    GAME_OVER,
    PLAY,
    ROUND_OVER,
    Draw,
    Forfeit,
    IllegalMove,
    Penalty,
    RuleSet,
)
from tests.engine.engine_helpers import (
    DOWN,
    assert_illegal,
    build_deck,
    check_invariants,
    first_down,
    fixed_game,
    flip_turn,
    flip_until_round_end,
    grid_values,
    keep_turn,
    quick_game,
    quick_rules,
    ranking_key,
    reveal,
)

# ----- end of a round ---------------------------------------------------------------


def test_round_end_gives_each_other_player_one_last_turn_in_order():
    grids = [[[12, 0], [1, -2]], [[1, 2], [3, 4]], [[3, 1], [2, 5]]]
    game = quick_game(grids)
    assert game.round.turn == "p1"
    keep_turn(game, "p1", (0, 0))
    flip_turn(game, "p2", (1, 1))
    rnd = game.round
    assert rnd.ender == "p2" and rnd.last_turns == ["p3", "p1"]
    assert {"type": "ended", "player": "p2"} in rnd.log
    assert rnd.turn == "p3"
    assert_illegal(game, "p1", Draw(), "It is Cat's turn")
    assert_illegal(game, "p2", Draw(), "It is Cat's turn")
    keep_turn(game, "p3", (0, 0))  # Cat keeps her face-down card hidden
    assert game.phase == PLAY and rnd.turn == "p1" and rnd.last_turns == ["p1"]
    flip_turn(game, "p1", (1, 1))  # Ann turns her last card: she does not "end" again
    assert rnd.ender == "p2"
    assert game.phase == ROUND_OVER
    # final reveal: every card is face up
    assert all(s != DOWN for g in rnd.grids.values() for s in g.state)
    assert rnd.result["ender"] == "p2"
    assert_illegal(game, "p2", Draw(), "The round is over")
    check_invariants(game)


def test_final_reveal_clears_and_cleared_cards_score_nothing():
    grids = [[[12, 0], [1, -2]], [[1, 4], [3, 4]]]  # Bob's hidden 4 completes column 1
    game = quick_game(grids, draw=(10, 6))
    flip_turn(game, "p1", (1, 1))  # Ann ends
    card = keep_turn(game, "p2", (0, 0))  # Bob keeps a 6 over his 1, (1, 1) stays down
    assert card == 6
    assert game.phase == ROUND_OVER
    assert grid_values(game, "p2") == [[6, None], [3, None]]
    assert game.round.discard[-3:] == [1, 4, 4]
    assert game.round.result["raw"] == {"p1": 11, "p2": 9}


def test_final_reveal_clears_several_columns_left_to_right():
    rules = RuleSet(cols=3, initial_flips=4)
    ann = [[1, 2, 3], [4, 5, 6], [8, 9, 10]]
    bob = [[7, 1, 3], [7, 2, 3], [7, 4, 3]]
    draw = [11, 12] * 5
    game = fixed_game([ann, bob], 0, draw, rules=rules)
    reveal(game, "p1", (0, 0), (0, 1), (0, 2), (1, 0))
    reveal(game, "p2", (0, 0), (1, 0), (0, 2), (1, 2))
    while game.phase == PLAY:
        p = game.round.turn
        if p == "p1":
            flip_turn(game, p, first_down(game, p))
        else:
            kept = keep_turn(game, p, (0, 1))
    assert game.round.ender == "p1"
    assert grid_values(game, "p2") == [[None, kept, None], [None, 2, None], [None, 4, None]]
    assert game.round.discard[-6:] == [7, 7, 7, 3, 3, 3]
    clears = [(e["line"], e["index"]) for e in game.round.log if e["type"] == "clear"]
    assert clears == [("column", 0), ("column", 2)]
    assert game.round.result["raw"]["p2"] == kept + 2 + 4
    check_invariants(game)


def test_final_reveal_clears_several_rows_top_to_bottom():
    rules = RuleSet(cols=3, initial_flips=4, clear_rows=True)
    ann = [[1, 2, 3], [4, 5, 6], [8, 9, 10]]
    bob = [[6, 6, 6], [1, 3, 4], [2, 2, 2]]
    draw = [11, 12] * 5
    game = fixed_game([ann, bob], 0, draw, rules=rules)
    reveal(game, "p1", (0, 0), (0, 1), (0, 2), (1, 0))
    reveal(game, "p2", (0, 0), (0, 1), (2, 0), (2, 1))
    while game.phase == PLAY:
        p = game.round.turn
        if p == "p1":
            flip_turn(game, p, first_down(game, p))
        else:
            kept = keep_turn(game, p, (1, 0))
    rows = grid_values(game, "p2")
    assert rows[0] == [None] * 3 and rows[2] == [None] * 3
    assert rows[1] == [kept, 3, 4]
    assert game.round.discard[-6:] == [6, 6, 6, 2, 2, 2]
    # one card left in each column: no column clears
    assert game.round.result["raw"]["p2"] == sum(rows[1])


# ----- scoring ----------------------------------------------------------------------

# The ender (Ann) shows the highest cards at setup, starts and turns her last card at
# once; everyone else turns theirs in their last turn. Raw scores are the grid sums.
EX_10_24_10 = [[[12, 0], [0, -2]], [[1, 2], [9, 12]], [[3, 4], [1, 2]]]
EX_8_11_8 = [[[10, 0], [0, -2]], [[2, 3], [4, 2]], [[1, 2], [2, 3]]]
EX_12_8_12 = [[[12, 1], [1, -2]], [[1, 2], [2, 3]], [[3, 4], [4, 1]]]
EX_M3 = [[[0, -1], [-2, 0]], [[-2, -1], [-1, -2]], [[-2, -1], [-1, 12]]]


def play_quick_round(grids, rules=None):
    game = quick_game(grids, rules=rules)
    assert game.round.starter == "p1"
    flip_until_round_end(game)
    assert game.round.ender == "p1"
    return game


@pytest.mark.parametrize(
    ("grids", "raw", "scores"),
    [
        (EX_10_24_10, [10, 24, 10], [20, 24, 10]),
        (EX_8_11_8, [8, 11, 8], [16, 11, 8]),
        (EX_12_8_12, [12, 8, 12], [24, 8, 12]),
        (EX_M3, [-3, -6, 8], [-3, -6, 8]),
    ],
)
def test_worked_scoring_examples(grids, raw, scores):
    game = play_quick_round(grids)
    result = game.round.result
    ids = ["p1", "p2", "p3"]
    assert result["ender"] == "p1"
    assert result["raw"] == dict(zip(ids, raw, strict=True))
    assert result["scores"] == dict(zip(ids, scores, strict=True))
    assert result["totals"] == dict(zip(ids, scores, strict=True))
    assert game.totals == dict(zip(ids, scores, strict=True))
    assert game.penalised() == (raw != scores)
    assert game.round.log[-1] == {
        "type": "round_end",
        "ender": "p1",
        "penalised": raw != scores,
    }


@pytest.mark.parametrize(
    ("grids", "ender_raw", "ender_score"),
    [
        ([[[12, 0], [0, -2]], [[1, 2], [9, 12]]], 10, 10),  # strictly lowest
        ([[[12, 0], [0, -2]], [[1, 2], [3, 4]]], 10, 20),  # tie: penalised
        ([[[2, 0], [0, -2]], [[1, -1], [0, 0]]], 0, 0),  # tie at 0: never penalised
        ([[[3, 0], [1, -2]], [[-2, -1], [-1, -2]]], 2, 4),  # above a negative score
        ([[[0, -1], [-2, 0]], [[-2, -1], [-1, -2]]], -3, -3),  # negative: never penalised
    ],
)
def test_ender_penalty_cases(grids, ender_raw, ender_score):
    game = play_quick_round(grids)
    assert game.round.result["raw"]["p1"] == ender_raw
    assert game.round.result["scores"]["p1"] == ender_score
    assert game.round.result["scores"]["p2"] == game.round.result["raw"]["p2"]


@pytest.mark.parametrize(
    "penalty",
    [Penalty("flat", flat=7), Penalty("both", 2, 5), Penalty("multiplier", 3)],
    ids=["points added", "both", "multiplied"],
)
@pytest.mark.parametrize(
    ("grids", "other"),
    [
        ([[[2, 0], [0, -2]], [[1, -1], [0, 0]]], 0),  # a tie at 0
        ([[[2, 0], [0, -2]], [[1, -1], [0, -2]]], -2),  # Bob lower, below 0
    ],
    ids=["tie", "lower"],
)
def test_an_ender_on_exactly_zero_is_never_penalised(penalty, grids, other):
    """Not strictly lowest, but on 0: not penalised in any mode. (Multiplied, 0 stays 0
    either way: only points added show a wrongly applied penalty in the score; the
    penalised flag shows it in every mode.)"""
    game = play_quick_round(grids, quick_rules(penalty=penalty))
    result = game.round.result
    assert result["ender"] == "p1"
    assert result["raw"] == {"p1": 0, "p2": other}
    assert result["scores"] == result["raw"]
    assert not game.penalised()
    assert game.round.log[-1] == {"type": "round_end", "ender": "p1", "penalised": False}


@pytest.mark.parametrize(
    ("penalty", "expected"),
    [
        (Penalty("multiplier", 3), 30),
        (Penalty("multiplier", 5), 50),
        (Penalty("flat", flat=7), 17),
        (Penalty("flat", flat=50), 60),
        (Penalty("both", 4, 5), 45),
        (Penalty("both", 2, 1), 21),
    ],
)
def test_penalty_modes(penalty, expected):
    game = play_quick_round(EX_10_24_10, quick_rules(penalty=penalty))
    assert game.round.result["scores"] == {"p1": expected, "p2": 24, "p3": 10}
    # no penalty below zero, whatever the mode
    game = play_quick_round(EX_M3, quick_rules(penalty=penalty))
    assert game.round.result["scores"]["p1"] == -3


def test_running_totals_and_game_end():
    grids = [[[12, 0], [1, -2]], [[1, 2], [3, 4]]]  # Ann 11 (penalised: 22), Bob 10
    rules = quick_rules(end_score=40)
    game = quick_game(grids, rules=rules)
    flip_until_round_end(game)
    assert game.phase == ROUND_OVER and not game.is_over
    assert game.totals == {"p1": 22, "p2": 10}
    deck = build_deck(grids, 7, rules=rules)
    game.start_next_round(seating=["p1", "p2"], deck=deck)
    for p in ("p1", "p2"):
        reveal(game, p, (0, 0), (0, 1), (1, 0))
    flip_until_round_end(game)
    assert game.round.result["totals"] == {"p1": 44, "p2": 20}
    assert game.phase == GAME_OVER and game.is_over
    assert [r.result["scores"] for r in game.rounds] == [{"p1": 22, "p2": 10}] * 2
    assert game.ranking() == [
        {"player": "p2", "rank": 1, "total": 20},
        {"player": "p1", "rank": 2, "total": 44},
    ]
    with pytest.raises(IllegalMove):
        game.start_next_round()
    assert_illegal(game, "p1", Draw(), "The game is over")
    assert_illegal(game, "p1", Forfeit(), "The game is over")


@pytest.mark.parametrize(("end_score", "over"), [(21, True), (22, True), (23, False)])
def test_game_ends_at_or_above_end_score(end_score, over):
    grids = [[[12, 0], [1, -2]], [[1, 2], [3, 4]]]
    game = quick_game(grids, rules=quick_rules(end_score=end_score))
    keep_turn(game, "p1", (0, 0))  # Ann keeps the 1 over her 12: raw 0
    assert game.phase == PLAY and not game.is_over
    game = quick_game(grids, rules=quick_rules(end_score=end_score))
    flip_until_round_end(game)
    assert game.totals["p1"] == 22
    assert game.is_over == over
    assert game.phase == (GAME_OVER if over else ROUND_OVER)


def test_game_never_ends_mid_round():
    # Bob's face-up cards add up to 24 > 10 during the last turns: only the scored
    # round's totals count.
    game = quick_game(EX_10_24_10, rules=quick_rules(end_score=10))
    flip_turn(game, "p1", (1, 1))
    flip_turn(game, "p2", (1, 1))
    assert game.round.grids["p2"].score() == 24
    assert game.phase == PLAY and not game.is_over and game.round.turn == "p3"
    flip_turn(game, "p3", (1, 1))
    assert game.phase == GAME_OVER


def test_ranking_shares_ranks():
    grids = [[[10, 0], [0, -2]], [[2, 3], [1, 2]], [[1, 2], [2, 3]]]  # 8, 8, 8
    game = play_quick_round(grids)
    assert game.round.result["scores"] == {"p1": 16, "p2": 8, "p3": 8}
    ranking = game.ranking()
    assert ranking_key(ranking) == [(1, "p2", 8), (1, "p3", 8), (3, "p1", 16)]
    assert [e["rank"] for e in ranking] == [1, 1, 3]

"""The score sheet's tally (app.features.scoresheet): fixed cases, and random whole games played
by the engine whose rounds, typed into a sheet, must give the engine's own scores,
totals, ranking and end."""

from __future__ import annotations

import random

import pytest

from app.engine import GAME_OVER, Game, Penalty, Player, RuleSet
from app.features.scoresheet import (
    ROUND_MAX,
    ROUND_MIN,
    SheetError,
    parse_round,
    parse_settings,
    tally,
)

NAMES = ["Emma", "Nico", "Pat"]


def test_the_worked_example_doubles_emma():
    t = tally(NAMES, [{"raw": [12, 8, 12], "ender": 0}], 100, Penalty())
    assert t.rounds[0]["scores"] == [24, 8, 12]
    assert t.rounds[0]["penalised"]
    assert t.totals == [24, 8, 12]
    assert [(r["player"], r["rank"]) for r in t.ranking] == [(1, 1), (2, 2), (0, 3)]
    assert not t.over and t.winners == []


def test_no_penalty_variant_and_nobody_ended():
    t = tally(NAMES, [{"raw": [12, 8, 12], "ender": 0}], 100, None)
    assert t.rounds[0]["scores"] == [12, 8, 12] and not t.rounds[0]["penalised"]
    t = tally(NAMES, [{"raw": [12, 8, 12], "ender": None}], 100, Penalty())
    assert t.rounds[0]["scores"] == [12, 8, 12]


@pytest.mark.parametrize("penalty", [Penalty("flat", 2, 10), Penalty("both", 3, 5)])
def test_an_ender_on_exactly_zero_is_not_penalised(penalty):
    """Emma ends on 0, Nico also on 0 (or lower): no penalty, however it is added."""
    for raw in ([0, 0, 9], [0, -3, 9]):
        t = tally(NAMES, [{"raw": raw, "ender": 0}], 100, penalty)
        assert t.rounds[0]["scores"] == raw
        assert not t.rounds[0]["penalised"]


def test_the_game_ends_at_the_end_score_and_ties_share_the_win():
    rounds = [{"raw": [40, 40, 60], "ender": None}, {"raw": [10, 10, 40], "ender": None}]
    t = tally(NAMES, rounds, 100, Penalty())
    assert t.over and t.ended_at == 2
    assert t.winners == [0, 1]
    assert [r["rank"] for r in t.ranking] == [1, 1, 3]


def test_reaching_exactly_the_end_score_ends_the_game():
    t = tally(NAMES[:2], [{"raw": [50, 3], "ender": None}], 50, Penalty())
    assert t.over and t.winners == [1]


def test_grid_totals_have_a_sane_range():
    assert (ROUND_MIN, ROUND_MAX) == (-17, 142)  # five -2 and seven -1; ten 12s and two 11s
    form = {"score-1": "145", "score-2": "x", "score-3": "\u22123", "ender": "4"}
    with pytest.raises(SheetError) as err:
        parse_round(form, NAMES)
    assert set(err.value.errors) == {"score-1", "score-2", "ender"}
    raw, ender = parse_round(
        {"score-1": "-17", "score-2": "142", "score-3": "0", "ender": "none"}, NAMES
    )
    assert raw == [-17, 142, 0] and ender is None


def test_settings_reuse_the_table_penalty_options():
    assert parse_settings({"end_score": "100", "penalty_mode": "none"}) == (100, None)
    end, penalty = parse_settings(
        {"end_score": "50", "penalty_mode": "both", "penalty_multiplier": "3", "penalty_flat": "5"}
    )
    assert end == 50 and Penalty(**penalty) == Penalty("both", 3, 5)
    with pytest.raises(SheetError) as err:
        parse_settings({"end_score": "5", "penalty_mode": "triple"})
    assert set(err.value.errors) == {"end_score", "penalty_mode"}


def play_out(rules: RuleSet, n: int, seed: int) -> Game:
    """A whole game of random legal moves (no forfeits)."""
    rng = random.Random(seed)
    game = Game([Player(f"p{i}", f"P{i}") for i in range(n)], rules, seed=seed)
    for _step in range(20_000):
        if game.phase == GAME_OVER:
            return game
        if game.phase == "round_over":
            game.start_next_round()
            continue
        movers = game.round.seating if game.phase == "setup" else [game.round.turn]
        p = next(p for p in movers if game.legal_actions(p))
        game.apply(p, rng.choice(game.legal_actions(p)))
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("seed", range(40))
def test_a_sheet_of_an_engine_game_gives_the_engine_results(seed):
    rng = random.Random(seed)
    mode = rng.choice(["multiplier", "flat", "both"])
    rules = RuleSet(
        end_score=rng.choice([10, 30, 60, 100]),
        penalty=Penalty(mode, rng.randint(2, 5), rng.randint(1, 50)),
    )
    n = rng.randint(2, 8)
    game = play_out(rules, n, seed)
    ids = [p.id for p in game.players]
    rounds = [
        {
            "raw": [r.result["raw"][p] for p in ids],
            "ender": ids.index(r.result["ender"]) if r.result["ender"] else None,
        }
        for r in game.rounds
    ]
    t = tally([p.name for p in game.players], rounds, rules.end_score, rules.penalty)
    for mine, rnd in zip(t.rounds, game.rounds, strict=True):
        assert mine["scores"] == [rnd.result["scores"][p] for p in ids]
        assert mine["totals"] == [rnd.result["totals"][p] for p in ids]
        assert mine["penalised"] == game.penalised(rnd)
    assert t.over and t.ended_at == len(game.rounds)
    assert [(ids[r["player"]], r["rank"], r["total"]) for r in t.ranking] == [
        (r["player"], r["rank"], r["total"]) for r in game.ranking()
    ]

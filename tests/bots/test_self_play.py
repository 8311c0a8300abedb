"""Fitting the column values by self-play (benchmarks/self_play.py)."""

from __future__ import annotations

import random

import pytest

from app.bots import columns, expert
from app.bots.registry import BOTS
from app.engine.rounds import Rounds
from benchmarks import self_play

H = columns.HIDDEN


def test_card_worths_recover_an_additive_truth():
    rng = random.Random(5)
    truth = [rng.uniform(-2, 12) for _ in columns.SYMBOLS]
    states = columns.column_states()
    samples = []
    for c in rng.sample(states, 200):
        mean = sum(truth[columns.SYMBOLS.index(v)] for v in c)
        samples.append((c, rng.randint(1, 50), mean))
    worths = self_play._card_worths(samples)
    assert worths == pytest.approx(truth, abs=1e-6)


def test_a_cell_seen_often_is_its_mean_and_one_never_seen_its_columns_stage_mean():
    sums = {
        f"-100,-100,12|3|{x}": [n, n * score]
        for x, n, score in ((0, 10_000, 9.0), (1, 10_000, 11.0))
    }
    table = self_play.fit([sums])
    assert table[((H, H, 12), 3, 0)] == pytest.approx(9.0, abs=0.05)
    assert table[((H, H, 12), 3, 1)] == pytest.approx(11.0, abs=0.05)
    # Never seen in context 2: the column's mean at its stage, whatever the context.
    assert table[((H, H, 12), 3, 2)] == pytest.approx(10.0, abs=0.05)


def test_collected_games_pair_each_column_with_its_final_score():
    scoring, mind, look = Rounds.score_round, dict(expert.EXPERT), dict(expert.LOOK)
    sums = self_play.collect("t", 2, "greedy", None)
    samples = sum(n for n, _ in sums.values())
    assert samples > 100
    for key, (n, total) in sums.items():
        cells, stage, context = key.split("|")
        state = tuple(sorted(int(v) for v in cells.split(",")))
        assert state in columns.column_states()
        assert int(stage) in columns.STAGES and int(context) in columns.CONTEXTS
        assert -6 * n <= total <= 36 * n
    # Every setting put back.
    assert "recorded" not in BOTS
    assert Rounds.score_round is scoring
    assert mind == expert.EXPERT and look == expert.LOOK


def test_the_next_iteration_plays_by_the_fitted_table():
    first = self_play.collect("t", 2, "greedy", None)
    table = self_play.fit([first])
    again = self_play.collect("t", 2, "greedy", table)
    assert again != first  # the same games, other moves


def test_a_refit_moves_the_cells_seen_often_and_keeps_the_others():
    prior = {key: 5.0 for key in columns.shipped()}
    sums = {"-100,-100,12|3|0": [10_000, 10_000 * 9.0], "-100,-100,12|3|1": [20, 20 * 15.0]}
    table = self_play.fit([sums], prior=prior)
    assert set(table) == set(prior)
    assert table[((H, H, 12), 3, 0)] == pytest.approx(9.0, abs=0.05)
    # 20 samples against the prior's weight of 20: halfway.
    assert table[((H, H, 12), 3, 1)] == pytest.approx(10.0)
    assert table[((H, H, 12), 3, 2)] == 5.0  # never seen: the prior's value


def test_as_shipped_the_expert_keeps_its_look_ahead_and_weight(monkeypatch):
    mind, look = dict(expert.EXPERT), dict(expert.LOOK)
    seen, tables = [], []
    original, play = BOTS["expert"], self_play.play_game

    def watched(view, rng):
        seen.append((expert.LOOK["on"], expert.EXPERT["fitted"]))
        tables.append(columns.table())
        return original(view, rng)

    def played(rules, bots, seed):
        tables.append(bots)
        return play(rules, bots, seed)

    monkeypatch.setitem(BOTS, "expert", watched)
    monkeypatch.setattr(self_play, "play_game", played)
    sums = self_play.collect("t", 2, "greedy,strong", None, as_shipped=True)
    assert sums and set(seen) == {(look["on"], mind["fitted"])}
    assert all(t is columns.shipped() for t in tables if isinstance(t, dict))
    # The opponents' levels taken in turn, game by game.
    assert [t for t in tables if isinstance(t, list)] == [
        ["recorded", "greedy", "greedy", "greedy"],
        ["recorded", "strong", "strong", "strong"],
    ]
    assert mind == expert.EXPERT and look == expert.LOOK

"""The scoring of a round and shared ranks (app.engine.scoring): fixed cases from the
rules, and properties over random rounds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.engine import Penalty
from app.engine.scoring import ender_penalised, round_scores, shared_ranks

DOUBLE = Penalty()


def test_the_worked_example_of_the_rules():
    # Emma ends with 12, Nico 8, Pat 12: Emma is not strictly lowest and scores 24.
    raw = {"emma": 12, "nico": 8, "pat": 12}
    assert round_scores(raw, "emma", DOUBLE) == {"emma": 24, "nico": 8, "pat": 12}
    # Had Emma finished on -3 she keeps -3, even without being lowest.
    raw = {"emma": -3, "nico": -5, "pat": 12}
    assert round_scores(raw, "emma", DOUBLE) == raw


def test_a_tie_with_the_ender_is_penalised_and_strictly_lowest_is_not():
    assert ender_penalised({"a": 5, "b": 5}, "a")
    assert not ender_penalised({"a": 4, "b": 5}, "a")
    assert not ender_penalised({"a": 0, "b": 5}, "a")  # zero is never penalised
    assert not ender_penalised({"a": 9, "b": 5}, None)  # nobody ended


def test_an_ender_on_exactly_zero_keeps_zero_in_every_mode():
    """On 0 and not strictly lowest (a tie at 0, or someone lower): never penalised.
    Under a multiplier 0 stays 0 anyway; points added would show it."""
    for raw in ({"a": 0, "b": 0}, {"a": 0, "b": -2, "c": 5}):
        assert not ender_penalised(raw, "a")
        for penalty in (Penalty("flat", 2, 7), Penalty("both", 2, 5), DOUBLE):
            assert round_scores(raw, "a", penalty) == raw


def test_each_penalty_mode():
    raw = {"a": 10, "b": 3}
    assert round_scores(raw, "a", Penalty("multiplier", 3, 10))["a"] == 30
    assert round_scores(raw, "a", Penalty("flat", 2, 7))["a"] == 17
    assert round_scores(raw, "a", Penalty("both", 2, 5))["a"] == 25
    assert round_scores(raw, "a", None) == raw  # the "no penalty" variant


def test_shared_ranks():
    ranks = shared_ranks({"a": 30, "b": 10, "c": 10, "d": 40}, ["a", "b", "c", "d"])
    assert [(r["player"], r["rank"]) for r in ranks] == [("b", 1), ("c", 1), ("a", 3), ("d", 4)]


penalties = st.one_of(
    st.none(),
    st.builds(
        Penalty,
        st.sampled_from(["multiplier", "flat", "both"]),
        st.integers(2, 5),
        st.integers(1, 50),
    ),
)


@given(
    st.lists(st.integers(-17, 144), min_size=2, max_size=8),
    st.data(),
    penalties,
)
def test_only_the_ender_ever_changes_and_only_upwards(values, data, penalty):
    raw = {f"p{i}": v for i, v in enumerate(values)}
    ender = data.draw(st.sampled_from([None, *raw]))
    scores = round_scores(raw, ender, penalty)
    for p in raw:
        if p != ender:
            assert scores[p] == raw[p]
    if ender is not None:
        lowest_alone = all(raw[ender] < v for p, v in raw.items() if p != ender)
        if raw[ender] <= 0 or lowest_alone or penalty is None:
            assert scores[ender] == raw[ender]
        else:
            assert scores[ender] > raw[ender]


@given(st.lists(st.integers(-50, 500), min_size=1, max_size=8))
def test_ranks_are_shared_and_count_the_players_ahead(totals):
    order = [f"p{i}" for i in range(len(totals))]
    by = dict(zip(order, totals, strict=True))
    ranking = shared_ranks(by, order)
    assert [r["total"] for r in ranking] == sorted(totals)
    for r in ranking:
        assert r["rank"] == 1 + sum(1 for t in totals if t < r["total"])

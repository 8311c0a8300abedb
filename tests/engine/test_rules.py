"""Rule options (docs/rules.md, "Options the host can set"): defaults, ranges, (de)serialisation."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine import Game, Penalty, Player, RuleError, RuleSet
from tests.engine.engine_helpers import players


def test_defaults_match_rules_md():
    rules = RuleSet()
    assert (rules.rows, rules.cols) == (3, 4)
    assert rules.cells == 12
    assert rules.initial_flips == 2
    assert rules.end_score == 100
    assert rules.clear_rows is False
    assert rules.penalty == Penalty("multiplier", 2, 10)
    assert rules.show_running_score is True
    assert rules.reseat == "never"


def test_default_dict_is_the_record_header():
    assert RuleSet().to_dict() == {
        "rows": 3,
        "cols": 4,
        "initial_flips": 2,
        "end_score": 100,
        "clear_rows": False,
        "penalty": {"mode": "multiplier", "multiplier": 2, "flat": 10},
        "show_running_score": True,
        "reseat": "never",
    }


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"rows": 1}, "rows"),
        ({"rows": 4}, "rows"),
        ({"rows": 0}, "rows"),
        ({"rows": "3"}, "rows"),
        ({"rows": 2.0}, "rows"),
        ({"rows": True}, "rows"),
        ({"cols": 1}, "cols"),
        ({"cols": 5}, "cols"),
        ({"cols": None}, "cols"),
        ({"initial_flips": -1}, "initial_flips"),
        ({"initial_flips": 5}, "initial_flips"),
        ({"initial_flips": 1.5}, "initial_flips"),
        # fewer than rows × cols: a 2×2 grid allows at most 3
        ({"rows": 2, "cols": 2, "initial_flips": 4}, "initial_flips"),
        ({"rows": 2, "cols": 2, "initial_flips": 5}, "initial_flips"),
        ({"end_score": 9}, "end_score"),
        ({"end_score": 1001}, "end_score"),
        ({"end_score": -100}, "end_score"),
        ({"end_score": False}, "end_score"),
        ({"clear_rows": 1}, "clear_rows"),
        ({"clear_rows": "off"}, "clear_rows"),
        ({"clear_rows": None}, "clear_rows"),
        ({"show_running_score": 0}, "show_running_score"),
        ({"show_running_score": "yes"}, "show_running_score"),
        ({"reseat": "always"}, "reseat"),
        ({"reseat": ""}, "reseat"),
        ({"reseat": None}, "reseat"),
        ({"penalty": "multiplier"}, "penalty"),
        ({"penalty": {"mode": "multiplier"}}, "penalty"),
    ],
)
def test_out_of_range_values_name_their_field(kwargs, field):
    with pytest.raises(RuleError) as info:
        RuleSet(**kwargs)
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: ")
    assert info.value.message


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"mode": "times"}, "penalty.mode"),
        ({"mode": ""}, "penalty.mode"),
        ({"mode": None}, "penalty.mode"),
        ({"multiplier": 1}, "penalty.multiplier"),
        ({"multiplier": 6}, "penalty.multiplier"),
        ({"multiplier": 0}, "penalty.multiplier"),
        ({"multiplier": 2.5}, "penalty.multiplier"),
        ({"multiplier": True}, "penalty.multiplier"),
        ({"flat": 0}, "penalty.flat"),
        ({"flat": 51}, "penalty.flat"),
        ({"flat": -10}, "penalty.flat"),
        ({"flat": "10"}, "penalty.flat"),
    ],
)
def test_penalty_out_of_range(kwargs, field):
    with pytest.raises(RuleError) as info:
        Penalty(**kwargs)
    assert info.value.field == field
    # the same through a whole rule set from a dict
    with pytest.raises(RuleError) as info:
        RuleSet.from_dict({"penalty": {"mode": "multiplier", **kwargs}})
    assert info.value.field == field


def test_rule_error_is_a_value_error():
    with pytest.raises(ValueError):
        RuleSet(rows=7)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"rows": 2},
        {"rows": 3},
        {"cols": 2},
        {"cols": 3},
        {"cols": 4},
        {"initial_flips": 0},
        {"initial_flips": 4},
        {"rows": 2, "cols": 2, "initial_flips": 3},
        {"rows": 2, "cols": 2, "initial_flips": 0},
        {"end_score": 10},
        {"end_score": 50},
        {"end_score": 1000},
        {"clear_rows": True},
        {"show_running_score": False},
        {"reseat": "round"},
        {"reseat": "game"},
        {"penalty": Penalty("multiplier", 5, 10)},
        {"penalty": Penalty("flat", 2, 1)},
        {"penalty": Penalty("flat", 2, 50)},
        {"penalty": Penalty("both", 3, 7)},
    ],
)
def test_boundary_values_are_accepted(kwargs):
    rules = RuleSet(**kwargs)
    for key, value in kwargs.items():
        assert getattr(rules, key) == value


def test_penalty_apply():
    assert Penalty().apply(10) == 20
    assert Penalty("multiplier", 5).apply(7) == 35
    assert Penalty("flat", flat=25).apply(7) == 32
    assert Penalty("both", 3, 4).apply(7) == 25  # multiply, then add


@pytest.mark.parametrize(
    "rules",
    [
        RuleSet(),
        RuleSet(
            rows=2,
            cols=3,
            initial_flips=0,
            end_score=50,
            clear_rows=True,
            penalty=Penalty("both", 4, 33),
            show_running_score=False,
            reseat="game",
        ),
        RuleSet(rows=2, cols=2, initial_flips=3, penalty=Penalty("flat", 2, 1), reseat="round"),
    ],
)
def test_dict_round_trip(rules):
    data = rules.to_dict()
    assert json.loads(json.dumps(data)) == data
    again = RuleSet.from_dict(json.loads(json.dumps(data)))
    assert again == rules
    assert again.to_dict() == data


def test_from_dict_fills_defaults():
    assert RuleSet.from_dict({}) == RuleSet()
    assert RuleSet.from_dict({"cols": 3}) == RuleSet(cols=3)
    assert RuleSet.from_dict({"penalty": {"mode": "flat"}}).penalty == Penalty("flat", 2, 10)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"colour": "red"}, "colour"),
        ({"rows": 3, "decks": 2}, "decks"),
        ({"penalty": {"mode": "flat", "bonus": 3}}, "penalty.bonus"),
        ({"penalty": 3}, "penalty"),
        ({"rows": 9}, "rows"),
        ({"reseat": "sometimes"}, "reseat"),
    ],
)
def test_from_dict_rejects_unknown_or_bad(data, field):
    with pytest.raises(RuleError) as info:
        RuleSet.from_dict(data)
    assert info.value.field == field


def test_rule_set_is_frozen():
    rules = RuleSet()
    with pytest.raises(AttributeError):
        rules.rows = 2  # type: ignore[misc]


@pytest.mark.parametrize("n", [0, 1, 9, 12])
def test_player_count_enforced(n):
    with pytest.raises(RuleError) as info:
        Game([Player(f"x{i}", f"X{i}") for i in range(n)], RuleSet())
    assert info.value.field == "players"


@pytest.mark.parametrize("n", range(2, 9))
def test_two_to_eight_players(n):
    game = Game(players(n), RuleSet(), seed=1)
    assert len(game.round.seating) == n
    assert game.round.number == 1


def test_player_ids_must_be_unique():
    with pytest.raises(ValueError):
        Game([{"id": "a", "name": "A"}, {"id": "a", "name": "B"}])


def test_summary_mentions_options():
    assert RuleSet().summary() == "3×4, to 100, ender ×2"
    text = RuleSet(
        rows=2, clear_rows=True, initial_flips=3, penalty=Penalty("both", 3, 5)
    ).summary()
    assert "2×4" in text and "×3 then +5" in text and "rows clear" in text and "3 flips" in text


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    rows=st.integers(0, 5),
    cols=st.integers(0, 6),
    flips=st.integers(-1, 13),
    end=st.integers(0, 1100),
    multiplier=st.integers(0, 7),
    flat=st.integers(-1, 60),
)
def test_rule_ranges_exactly(rows, cols, flips, end, multiplier, flat):
    valid = (
        2 <= rows <= 3
        and 2 <= cols <= 4
        and 0 <= flips <= 4
        and flips < rows * cols
        and 10 <= end <= 1000
        and 2 <= multiplier <= 5
        and 1 <= flat <= 50
    )
    try:
        rules = RuleSet.from_dict(
            {
                "rows": rows,
                "cols": cols,
                "initial_flips": flips,
                "end_score": end,
                "penalty": {"mode": "both", "multiplier": multiplier, "flat": flat},
            }
        )
    except RuleError as exc:
        assert not valid
        assert exc.field in (
            "rows",
            "cols",
            "initial_flips",
            "end_score",
            "penalty.multiplier",
            "penalty.flat",
        )
    else:
        assert valid
        assert rules.cells == rows * cols


def test_rules_as_a_dict_are_dataclasses_asdict_field_for_field():
    """to_dict is written out by hand (it is on every move's save): the same keys, order
    and values as dataclasses.asdict, for every rule and penalty field."""
    from dataclasses import asdict

    for rules in (
        RuleSet(),
        RuleSet(rows=2, cols=3, initial_flips=1, end_score=50, clear_rows=True),
        RuleSet(penalty=Penalty("both", 3, 7), show_running_score=False),
    ):
        mine, theirs = rules.to_dict(), asdict(rules)
        assert mine == theirs
        assert list(mine) == list(theirs) and list(mine["penalty"]) == list(theirs["penalty"])
        assert RuleSet.from_dict(mine) == rules

"""The fitted worth of a column (app/engine/columns.py) and how the expert weighs it."""

from __future__ import annotations

import random

import pytest

from app.bots import columns
from app.bots.expert import EXPERT, Expert
from app.bots.reading import CLEARED, HIDDEN
from app.engine import RuleSet, view
from tests.bots.test_expert import early_turn_with_drawn

H = HIDDEN


def test_the_shipped_table_covers_every_column_stage_and_context():
    table = columns.shipped()
    states = columns.column_states()
    # 16 symbols, 3 cells in any order, less the 15 columns of three equal cards.
    assert len(states) == 816 - 15
    assert len(table) == len(states) * len(columns.STAGES) * len(columns.CONTEXTS)
    # A column scores between three -2s and three 12s; the table stays inside.
    assert all(-6 <= v <= 36 for v in table.values())
    assert columns.from_json(columns.to_json(table)) == table


def test_the_table_knows_a_high_card_is_likely_replaced_early_but_not_late():
    table = columns.shipped()
    early, late = table[((H, H, 12), 6, 0)], table[((H, H, 12), -1, 0)]
    assert early < late
    # On a last turn the column is scored as it stands: the 12 and two cards unseen.
    assert late == pytest.approx(12 + 2 * 5.07, abs=2.5)


def test_a_grid_is_worth_its_live_columns_and_a_cleared_column_nothing():
    # Each column worth 1 plus the high cards (6 or more) elsewhere in the grid.
    table = {(c, 3, x): 1.0 + x for c in columns.column_states() for x in columns.CONTEXTS}
    worth = columns.GridWorth(table, stage=3, cols=4)
    # Columns (H, H, H), (7, 7, 9), (5, 1, 0) and one cleared before.
    grid = (H, 7, 5, CLEARED, H, 7, 1, CLEARED, H, 9, 0, CLEARED)
    assert worth(grid) == (1 + 3) + (1 + 0) + (1 + 3)
    # One high card: the other two live columns see it.
    one = (H, 7, 5, CLEARED, H, 2, 1, CLEARED, H, 3, 0, CLEARED)
    assert worth(one) == 2 + 1 + 2
    # Three equal face-up cards clear: that column counts nothing.
    cleared = (H, 5, 5, CLEARED, H, 5, 1, CLEARED, H, 5, 0, CLEARED)
    assert worth(cleared) == 1 + 1


@pytest.mark.parametrize(
    ("changes", "fits"),
    [({}, True), ({"clear_rows": True}, False), ({"rows": 2}, False), ({"cols": 3}, True)],
)
def test_the_table_is_used_only_for_grids_it_was_made_for(changes, fits):
    rules = RuleSet(**changes).to_dict()
    assert columns.fits(rules) is fits


def test_the_expert_weighs_the_fitted_worth_against_the_hand_made_one(monkeypatch):
    game = early_turn_with_drawn(4)
    seen = view(game, "p1")
    mind = Expert(seen, random.Random(0))
    monkeypatch.setitem(EXPERT, "fitted", 0.0)
    hand = Expert(seen, random.Random(0))
    assert hand.worth is None and mind.worth is not None
    cells = mind.cells
    w = EXPERT["fitted"] = 0.3
    for i in mind.live:
        fitted = mind.worth((*cells[:i], 4, *cells[i + 1 :])) - mind.worth(cells)
        assert mind.place(i, 4) == pytest.approx(w * fitted + (1 - w) * hand.place(i, 4))


def test_a_last_turn_is_valued_by_the_cards_alone():
    game = early_turn_with_drawn(4)
    game.round.ender = "p2"
    game.round.last_turns = ["p1"]
    assert Expert(view(game, "p1"), random.Random(0)).worth is None

"""Rows and columns clearing at the same moment (docs/rules.md, "Clearing lines"), in
every grid shape the options allow: in play, where one placed card completes its row
and its column, and at the final reveal, where many lines complete at once.

Ann (p1) always starts: she turns a 12 at setup, Bob (p2) turns a smaller card. Bob
"parks" his turns: he draws and keeps every card on the one face-up cell he has, so
the rest of his grid stays face down until the final reveal."""

import pytest

from app.engine import PLAY, Reveal, RuleSet, replay, to_record
from tests.engine.engine_helpers import (
    check_invariants,
    fixed_game,
    flip_turn,
    grid_values,
    keep_turn,
)

SHAPES = [(rows, cols) for rows in (2, 3) for cols in (2, 3, 4)]


def shape_id(shape) -> str:
    return f"{shape[0]}x{shape[1]}"


def rules_for(rows: int, cols: int, clear_rows: bool = True) -> RuleSet:
    return RuleSet(rows=rows, cols=cols, initial_flips=1, end_score=1000, clear_rows=clear_rows)


def clears(game, player: str) -> list[tuple[str, int]]:
    return [
        (e["line"], e["index"])
        for e in game.round.log
        if e["type"] == "clear" and e["player"] == player
    ]


def cells_of(rows: int, cols: int) -> list[tuple[int, int]]:
    return [(r, c) for r in range(rows) for c in range(cols)]


# ----- in play: one card completes its row and its column -------------------------------

X = 12  # the card of the completed lines; Ann turns one at setup, so she starts
CROSSING = -1  # the face-down card the last X replaces


def crossing_game(rows: int, cols: int, r0: int, c0: int, clear_rows: bool):
    """Ann's row r0 and column c0 hold Xs except at their crossing; the other cells are
    distinct. Ann turns the Xs one per turn (discarding what she draws) while Bob
    parks, then draws the last X. Returns the game before that last turn."""
    line = [(r, c) for r, c in cells_of(rows, cols) if (r == r0) != (c == c0)]
    others = iter(range(1, 11))
    ann = [
        X if (r, c) in line else CROSSING if (r, c) == (r0, c0) else next(others)
        for r, c in cells_of(rows, cols)
    ]
    bob = [0] * (rows * cols)
    turns = len(line) - 1
    draw = [v for t in range(turns) for v in (5, 6)] + [X]
    game = fixed_game([ann, bob], 3, draw, rules=rules_for(rows, cols, clear_rows))
    game.apply("p1", Reveal(*line[0]))
    game.apply("p2", Reveal(0, 0))
    assert game.phase == PLAY and game.round.turn == "p1"
    for cell in line[1:]:
        flip_turn(game, "p1", cell)
        keep_turn(game, "p2", (0, 0))
    assert clears(game, "p1") == []
    return game


@pytest.mark.parametrize("clear_rows", [True, False], ids=["rows", "columns_only"])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_one_card_completes_a_row_and_a_column_in_play(shape, clear_rows):
    rows, cols = shape
    for r0, c0 in cells_of(rows, cols):
        game = crossing_game(rows, cols, r0, c0, clear_rows)
        before = grid_values(game, "p1")
        assert keep_turn(game, "p1", (r0, c0)) == X
        after = grid_values(game, "p1")
        gone = {(r, c) for r, c in cells_of(rows, cols) if c == c0 or (clear_rows and r == r0)}
        assert {(r, c) for r, c in cells_of(rows, cols) if after[r][c] is None} == gone
        for r, c in set(cells_of(rows, cols)) - gone:
            assert after[r][c] == before[r][c]
        # the replaced card, then the column top to bottom, then what is left of the row
        tail = [CROSSING] + [X] * rows + ([X] * (cols - 1) if clear_rows else [])
        assert game.round.discard[-len(tail) :] == tail
        expected = [("column", c0), ("row", r0)] if clear_rows else [("column", c0)]
        assert clears(game, "p1") == expected
        assert game.phase == PLAY and game.round.turn == "p2"
        check_invariants(game)


# ----- at the final reveal: many lines at once ------------------------------------------


def final_reveal(final_bob: list[list[int]], clear_rows: bool = True):
    """Bob's grid is `final_bob` at the final reveal: everything of it stays face down
    but his bottom-right cell, where he parks, keeping its final value last. Ann
    (distinct cards, no line ever) turns a card per turn and ends the round."""
    rows, cols = len(final_bob), len(final_bob[0])
    n = rows * cols
    ann = list(range(12, 12 - n, -1))  # 12 first: Ann starts
    bob = [v for row in final_bob for v in row]
    bob[-1] = 1  # dealt there and turned at setup; replaced on every one of his turns
    draw = []
    for t in range(n - 1):
        draw += [5 + t % 6, 2 + t % 3]
    draw[-1] = final_bob[-1][-1]
    game = fixed_game([ann, bob], 3, draw, rules=rules_for(rows, cols, clear_rows))
    game.apply("p1", Reveal(0, 0))
    game.apply("p2", Reveal(rows - 1, cols - 1))
    assert game.round.turn == "p1"
    for r, c in cells_of(rows, cols)[1:]:
        flip_turn(game, "p1", (r, c))
        keep_turn(game, "p2", (rows - 1, cols - 1))
    assert game.round.ender == "p1" and game.round.result is not None
    check_invariants(game)
    # the record replays to the same result
    again = replay(to_record(game))
    assert again.rounds[-1].result == game.round.result
    assert grid_values(again, "p2", again.rounds[-1]) == grid_values(game, "p2")
    return game


@pytest.mark.parametrize("clear_rows", [True, False], ids=["rows", "columns_only"])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_final_reveal_completes_every_row_and_every_column(shape, clear_rows):
    """The whole grid is one value: every column and every row completes at once. The
    columns take every card; the rows have none left and clear nothing more."""
    rows, cols = shape
    game = final_reveal([[0] * cols for _ in range(rows)], clear_rows)
    assert grid_values(game, "p2") == [[None] * cols for _ in range(rows)]
    assert clears(game, "p2") == [("column", c) for c in range(cols)]
    assert game.round.discard[-rows * cols :] == [0] * (rows * cols)
    assert game.round.result["raw"]["p2"] == 0


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_final_reveal_completes_a_row_and_a_column(shape):
    """Row 0 and column 0 are 0s; the other cards differ. Their shared card leaves with
    the column, the rest of the row after it."""
    rows, cols = shape
    others = iter([-2, 3, 6, 9, 11, 7])
    bob = [[0 if r == 0 or c == 0 else next(others) for c in range(cols)] for r in range(rows)]
    game = final_reveal(bob)
    assert grid_values(game, "p2") == [
        [None if r == 0 or c == 0 else bob[r][c] for c in range(cols)] for r in range(rows)
    ]
    assert clears(game, "p2") == [("column", 0), ("row", 0)]
    assert game.round.discard[-(rows + cols - 1) :] == [0] * (rows + cols - 1)
    assert game.round.result["raw"]["p2"] == sum(v for row in bob[1:] for v in row[1:])


@pytest.mark.parametrize("shape", [(3, 3), (3, 4)], ids=shape_id)
def test_final_reveal_completes_two_rows_and_two_columns(shape):
    """Rows 0 and 1 and columns 0 and 1 at once (on two-row grids, or two columns,
    that is the whole grid: see above)."""
    rows, cols = shape
    bob = [[0] * cols, [0] * cols, [0, 0, 9, 11][:cols]]
    game = final_reveal(bob)
    assert grid_values(game, "p2") == [[None] * cols, [None] * cols, [None, None, *bob[2][2:]]]
    assert clears(game, "p2") == [("column", 0), ("column", 1), ("row", 0), ("row", 1)]
    cleared = 2 * rows + 2 * (cols - 2)
    assert game.round.discard[-cleared:] == [0] * cleared
    assert game.round.result["raw"]["p2"] == sum(bob[2][2:])

"""What a column of my grid is worth: the score it is expected to have at the round's end.

A table fitted on the expert's own games (self-play: benchmarks/self_play.py plays the
games, fits the table, plays again with it, and so on), by the column's three cards
(face up or down, in any order), the round's stage (the fewest face-down cards of my
opponents, or the round ended) and how many high cards the rest of my grid holds (they
compete for the turns that would improve this column). A face-up 9 is worth less than
9 early in a round (it is likely to be replaced), a pair worth less than its two cards
(a third one may clear it): the plain sum of the cards knows neither.

The expert weighs the fitted change of its grid's worth against its hand-made one
(expert.py); the table holds for grids of three rows whose columns alone clear.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from functools import cache
from itertools import combinations_with_replacement
from pathlib import Path

from app.bots.reading import HIDDEN, flat_cells, opponents_of

PATH = Path(__file__).with_name("column_values.json")
SYMBOLS = (HIDDEN, *range(-2, 13))  # a cell: face down, or a face-up card
STAGES = (-1, 1, 2, 3, 4, 5, 6)  # the round ended (-1), else my opponents' fewest face-down cards
CONTEXTS = (0, 1, 2, 3)  # high cards elsewhere in my grid (3: three or more)
HIGH = 6  # a face-up card this high or higher is a high card
ROWS = 3


def column_states() -> list[tuple[int, int, int]]:
    """Every column a grid can hold, its cells sorted: the table's order."""
    return [
        c
        for c in combinations_with_replacement(SYMBOLS, ROWS)
        if not (c[0] == c[1] == c[2] and c[0] > HIDDEN)  # three equal cards clear
    ]


def to_json(values: dict[tuple, float]) -> str:
    """A table (column, stage, context) -> worth, as stored: one list per stage and context."""
    states = column_states()
    rows = {
        f"{stage}|{context}": [round(values[(c, stage, context)], 3) for c in states]
        for stage in STAGES
        for context in CONTEXTS
    }
    return json.dumps({"high": HIGH, "values": rows}, separators=(",", ":"))


def from_json(text: str) -> dict[tuple, float]:
    data = json.loads(text)
    states = column_states()
    table = {}
    for key, row in data["values"].items():
        stage, context = map(int, key.split("|"))
        for c, value in zip(states, row, strict=True):
            table[(c, stage, context)] = value
    return table


@cache
def shipped() -> dict[tuple, float]:
    return from_json(PATH.read_text())


_IN_USE: list[dict[tuple, float]] = []  # a table being fitted (self-play), else the shipped one


def table() -> dict[tuple, float]:
    return _IN_USE[-1] if _IN_USE else shipped()


@contextmanager
def using(values: dict[tuple, float]):
    """Decide with `values` instead of the shipped table (benchmarks/self_play.py)."""
    _IN_USE.append(values)
    try:
        yield
    finally:
        _IN_USE.pop()


def fits(rules: dict) -> bool:
    """Is the table made for these rules' grids (three rows, columns alone clear)?"""
    return rules["rows"] == ROWS and not rules["clear_rows"]


def stage(grids: dict, opponents: list[str], ended: bool) -> int:
    if ended:
        return -1
    return min(STAGES[-1], min(grids[p].count(HIDDEN) for p in opponents))


def context(cells, column: int, cols: int) -> int:
    """High cards outside `column` (three or more count as three)."""
    high = sum(1 for j, v in enumerate(cells) if j % cols != column and v >= HIGH)
    return min(CONTEXTS[-1], high)


class GridWorth:
    """One decision's worth of my grid as it could be after a move (cached by grid)."""

    def __init__(self, table: dict[tuple, float], stage: int, cols: int):
        self.table = table
        self.stage = stage
        self.cols = cols
        self.found: dict[tuple, float] = {}

    def __call__(self, cells: tuple) -> float:
        found = self.found.get(cells)
        if found is None:
            found = self.found[cells] = self.worth(cells)
        return found

    def worth(self, cells: tuple) -> float:
        cols = self.cols
        live = []
        for c in range(cols):
            column = (cells[c], cells[c + cols], cells[c + 2 * cols])
            if column[0] < HIDDEN:  # cleared before
                continue
            if column[0] == column[1] == column[2] and column[0] > HIDDEN:
                continue  # cleared by this move
            live.append((tuple(sorted(column)), sum(1 for v in column if v >= HIGH)))
        high = sum(h for _, h in live)
        table, stage = self.table, self.stage
        top = CONTEXTS[-1]
        return sum(table[(c, stage, min(top, high - h))] for c, h in live)


def worth_for(view: dict, weight: float) -> GridWorth | None:
    """The worth of the viewer's grid for this decision; None on a last turn (the grid
    is then scored as it is), when the weight is 0 or when the table does not fit the
    rules."""
    rules, rnd = view["rules"], view["round"]
    if weight <= 0 or not fits(rules) or rnd["ender"] is not None:
        return None
    opponents = opponents_of(view)
    if not opponents:
        return None
    grids = {p: flat_cells(rnd["grids"][p]) for p in opponents}
    return GridWorth(table(), stage(grids, opponents, False), rules["cols"])

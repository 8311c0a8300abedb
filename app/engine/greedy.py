"""The greedy bot: the best single move for its own grid, valuing an unknown card at
the deck's mean; avoids ending a round it would likely be penalised for."""

from __future__ import annotations

import random

from .actions import Action
from .reading import (
    CLEARED,
    HIDDEN,
    MEAN_CARD,
    _action,
    _clear_bonus,
    _estimate,
    _reveal_spread,
)
from .sight import ViewSight

GREEDY_TAKE = 5.0  # take the discard when it gains at least this much
GREEDY_KEEP = 2.0  # keep a drawn card when it gains at least this much


def _best_place(cells, targets, x: int, lines, mean: float) -> tuple[int, float]:
    """Which of the `targets` (cells a face-up `x` may replace) gains most for this
    grid: (index, points gained); the first such cell on a tie."""
    if x not in cells:  # no clear possible (it needs another card of the same value)
        if not targets:
            return -1, -1e9
        worth, i = _most_worth(cells, targets, mean)
        return i, worth[i] - x
    # Only a cell on a line with another x can clear something: elsewhere the cell
    # worth most wins, and only the cells near an x are worth valuing one by one.
    near = set()
    for j, v in enumerate(cells):
        if v == x:
            for line in lines[j]:
                near.update(line)
    worth, best_i = _most_worth(cells, targets, mean)
    if best_i not in near:
        best_gain = worth[best_i] - x
        for i in sorted(near):
            if i in targets:
                gain = worth[i] - x + _clear_bonus(cells, i, x, lines[i])
                if gain > best_gain or (
                    gain == best_gain and targets.index(i) < targets.index(best_i)
                ):
                    best_i, best_gain = i, gain
        return best_i, best_gain
    best_i, best_gain = -1, -1e9
    for i in targets:
        v = cells[i]
        gain = (mean if v == HIDDEN else v) - x
        if i in near:
            gain += _clear_bonus(cells, i, x, lines[i])
        if gain > best_gain:
            best_i, best_gain = i, gain
    return best_i, best_gain


def _worth(cells, mean: float) -> tuple[float, ...]:
    """What each cell of a grid is worth now: its card, or `mean` if face down. Read
    once per grid for the greedy bot's constant mean."""
    if mean != MEAN_CARD:
        return tuple(mean if v == HIDDEN else v for v in cells)
    found = _WORTH.get(id(cells))
    if found is not None and found[0] is cells:
        return found[1]
    if len(_WORTH) > 256:
        _WORTH.clear()
    worth = tuple(map(_HIDDEN_WORTH.get, cells, cells))  # a face-down card: the mean
    _WORTH[id(cells)] = (cells, worth)
    return worth


_WORTH: dict[int, tuple] = {}


def _most_worth(cells, targets, mean: float) -> tuple[tuple[float, ...], int]:
    """The grid's worth and the first of `targets` worth most: the same for any card
    that clears nothing, so a turn's take and keep share it (one cache entry a grid)."""
    if mean != MEAN_CARD:
        worth = _worth(cells, mean)
        return worth, _first_most(worth, targets)
    found = _MOST.get(id(cells))
    if found is not None and found[0] is cells:
        if found[2] is targets or found[2] == targets:
            return found[1], found[3]
        worth = found[1]
    else:
        if len(_MOST) > 256:
            _MOST.clear()
        worth = tuple(map(_HIDDEN_WORTH.get, cells, cells))  # a face-down card: the mean
    best = _first_most(worth, targets)
    _MOST[id(cells)] = (cells, worth, targets, best)
    return worth, best


def _first_most(worth, targets: list[int]) -> int:
    """The first of `targets` (cell indexes in grid order) worth most."""
    if len(targets) == len(worth):  # every cell, in order: found in C
        return worth.index(max(worth))
    return max(targets, key=worth.__getitem__)


_MOST: dict[int, tuple] = {}
_HIDDEN_WORTH = {HIDDEN: MEAN_CARD}


def greedy_bot(view: dict, rng: random.Random) -> Action:
    return greedy_play(ViewSight(view), rng)


def greedy_play(sight, rng: random.Random) -> Action:
    """The greedy move of `sight`'s player: `sight` is a Sight (read in place from the
    game) or a ViewSight (read from a view); both show only what that player may see."""
    kind = sight.stage()
    if kind is None:
        raise ValueError("the viewer has no move to make")
    cols = sight.rules.cols
    mine = sight.grid(sight.me)
    cells = mine.cells
    if kind == "setup":
        return _reveal_spread(cells, mine.down, cols, rng)
    lines = sight.lines
    if kind == "take":
        top = sight.discard_top()
        i, gain = _best_place(cells, mine.kept, top, lines, MEAN_CARD)
        if gain >= GREEDY_TAKE and not (
            cells[i] == HIDDEN
            and cells.count(HIDDEN) == 1
            and _greedy_fears_end(sight, cells, i, top)
        ):
            return _action("take_discard", i, cols)
        return _action("draw", None, cols)
    drawn = sight.drawn()
    i, gain = _best_place(cells, mine.kept, drawn, lines, MEAN_CARD)
    flips = mine.down
    if flips[0] is None:  # nothing left to turn over
        return _action("keep_drawn", i, cols) if gain > 0 else _action("discard_drawn", None, cols)
    keep = gain >= GREEDY_KEEP
    if len(flips) == 1 and (cells[i] == HIDDEN or not keep):
        # This move would turn my last card and end the round: only if it likely pays.
        ending_score = drawn if keep else MEAN_CARD
        if _greedy_fears_end(sight, cells, flips[0], ending_score):
            j, up_gain = _best_up_place(cells, drawn, lines)
            if j >= 0 and up_gain >= -3:
                return _action("keep_drawn", j, cols)
    if keep:
        return _action("keep_drawn", i, cols)
    return _action("discard_drawn", rng.choice(flips), cols)


def _best_up_place(cells: list[int], x: int, lines) -> tuple[int, float]:
    best_i, best_gain = -1, -1e9
    for i, v in enumerate(cells):
        if v in (HIDDEN, CLEARED):
            continue
        gain = v - x + _clear_bonus(cells, i, x, lines[i])
        if gain > best_gain:
            best_i, best_gain = i, gain
    return best_i, best_gain


def _greedy_fears_end(sight, cells: list[int], last: int, value: float) -> bool:
    """Would ending now (my last hidden card at `last` becoming `value`) likely be
    penalised? Opponents are valued at their face-up cards plus the mean per hidden one."""
    if sight.ender() is not None:
        return False
    if sight.stalling():
        return False
    mine = _estimate(cells, MEAN_CARD) - MEAN_CARD + value
    if mine <= 0:
        return False
    best_other = min(_estimate(sight.cells(p), MEAN_CARD) for p in sight.opponents())
    return mine >= best_other

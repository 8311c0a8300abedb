"""The greedy bot: the best single move for its own grid, valuing an unknown card at
the deck's mean; avoids ending a round it would likely be penalised for."""

from __future__ import annotations

import random
from itertools import compress, filterfalse
from operator import itemgetter

from app.bots.reading import (
    CLEARED,
    HIDDEN,
    MEAN_CARD,
    clear_bonus,
    estimate,
    pick,
    reveal_spread,
)
from app.bots.sight import ViewSight
from app.engine.actions import Action

GREEDY_TAKE = 5.0  # take the discard when it gains at least this much
GREEDY_KEEP = 2.0  # keep a drawn card when it gains at least this much


def best_place(cells, targets, x: int, lines, mean: float) -> tuple[int, float]:
    """Which of the `targets` (cells a face-up `x` may replace, in grid order) gains
    most for this grid: (index, points gained); the first such cell on a tie."""
    if x not in cells:  # no clear possible (it needs another card of the same value)
        if not targets:
            return -1, -1e9
        i, worth = _most_worth(cells, targets, mean)
        return i, worth - x
    # A card x clears a line only where it completes one: the one cell of a line
    # holding x that is neither x nor cleared (found per line in C). Only those cells
    # gain more (or, for x < 0, less) than what their card is worth.
    best_i, best_worth = _most_worth(cells, targets, mean)
    bonus = _bonuses(cells, x, lines)
    if not bonus:
        return best_i, best_worth - x
    best_gain = best_worth - x
    if bonus.get(best_i, 0) < 0:  # its clear costs: the best other cell may do better
        others = list(filterfalse(bonus.__contains__, targets))
        best_i, best_gain = -1, -1e9  # (unless every target clears something)
        if others:
            best_i, best_worth = _most_worth(cells, others, mean)
            best_gain = best_worth - x
    for i in sorted(bonus, key=targets.index) if len(bonus) > 1 else bonus:
        v = cells[i]
        gain = (mean if v == HIDDEN else v) - x + bonus[i]
        if gain > best_gain or (gain == best_gain and targets.index(i) < targets.index(best_i)):
            best_i, best_gain = i, gain
    return best_i, best_gain


def _bonuses(cells, x: int, lines) -> dict[int, int]:
    """The cells where a face-up `x` would clear lines, and the points those clears
    remove (as clear_bonus: a card on two clearing lines counts once)."""
    found: dict[int, int] = {}
    for get, line in _getters(lines):
        got = get(cells)
        xs = got.count(x)
        if not xs:
            continue
        rest = len(got) - xs - got.count(CLEARED)
        # (No comprehension here, nor in other functions a bot calls each move: one
        # that reads a local makes a cell object for it on every call.)
        if rest == 1:  # x on the one other card completes the line
            removed = (xs + 1) * x
            for i, v in zip(line, got, strict=True):
                if v != x and v != CLEARED:
                    hits = (i,)
                    break
        elif rest == 0 and xs > 1:  # x on an x: the others are x (no grid in play)
            removed = xs * x
            hits = compress(line, map(x.__eq__, got))
        else:
            continue
        for i in hits:
            found[i] = found[i] + removed - x if i in found else removed
    return found


def _getters(lines) -> list[tuple[itemgetter, tuple[int, ...]]]:
    """Each line of a grid shape once, with a getter of its cells' codes. `lines` is
    one of _lines' per-cell tables (kept for good: read by identity)."""
    found = _GETTERS.get(id(lines))
    if found is None or found[0] is not lines:
        distinct = dict.fromkeys(line for per_cell in lines for line in per_cell)
        found = _GETTERS[id(lines)] = (lines, [(itemgetter(*ln), ln) for ln in distinct])
    return found[1]


_GETTERS: dict[int, tuple] = {}


def _most_worth(cells, targets: list[int], mean: float) -> tuple[int, float]:
    """The first of `targets` worth most (a face-down card is worth `mean`) and its
    worth: the same for any card that clears nothing. `cells`: a tuple (read-only)."""
    if len(targets) == len(cells):  # every cell, in order: found in C, no worth read
        global _LAST_MOST
        if _LAST_MOST[0] is cells and _LAST_MOST[1] == mean:
            return _LAST_MOST[2]  # the same grid again (once the card is drawn)
        top = max(cells)  # the highest face-up card (the markers are lower than any)
        # (The mean first: a face-up card above it, the usual case, spares a search.)
        if mean >= top and HIDDEN in cells:
            hidden = cells.index(HIDDEN)
            if mean > top:
                found = hidden, mean
            else:
                first = min(hidden, cells.index(top))
                found = first, cells[first] if first != hidden else mean
        else:
            found = cells.index(top), top
        _LAST_MOST = cells, mean, found  # (kept alive here: its id stays its own)
        return found
    worth = _worth(cells, mean)
    best = max(targets, key=worth.__getitem__)
    return best, worth[best]


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


# The last grid whose every cell was a target, by identity, its mean and its answer:
# a bot asks it before drawing and again once the card is drawn.
_LAST_MOST: tuple = ((), 0.0, (-1, 0.0))
_WORTH: dict[int, tuple] = {}
_HIDDEN_WORTH = {HIDDEN: MEAN_CARD}


def greedy_bot(view: dict, rng: random.Random) -> Action:
    return greedy_play(ViewSight(view), rng)


def greedy_play(sight, rng: random.Random) -> Action:
    """The greedy move of `sight`'s player: `sight` is a Sight (read in place from the
    game) or a ViewSight (read from a view); both show only what that player may see."""
    kind, mine, card = sight.turn()
    if kind == "take":  # the usual cases first: a bot answers some 400 times a game
        cells = mine.cells
        kept = mine.kept
        if card in cells or not kept:  # (else no clear: best_place's first case)
            i, gain = best_place(cells, kept, card, sight.lines, MEAN_CARD)
        else:
            i, gain = _most_worth(cells, kept, MEAN_CARD)
            gain -= card
        if gain >= GREEDY_TAKE and not (
            cells[i] == HIDDEN
            and cells.count(HIDDEN) == 1
            and _greedy_fears_end(sight, cells, i, card)
        ):
            return sight.choices.take[i]
        return sight.choices.draw
    if kind == "drawn":
        return _drawn_play(sight, mine, card, rng)
    if kind == "setup":
        return reveal_spread(mine.cells, mine.down, sight.rules.cols, rng)
    raise ValueError("the viewer has no move to make")


def _drawn_play(sight, mine, drawn: int, rng: random.Random) -> Action:
    """Keep the `drawn` card where it gains most, or discard it and turn a card."""
    cells = mine.cells
    lines = sight.lines
    kept = mine.kept
    if drawn in cells or not kept:  # (as in greedy_play)
        i, gain = best_place(cells, kept, drawn, lines, MEAN_CARD)
    else:
        i, gain = _most_worth(cells, kept, MEAN_CARD)
        gain -= drawn
    choices = sight.choices
    flips = mine.down
    if flips[0] is None:  # nothing left to turn over
        return choices.keep[i] if gain > 0 else choices.discard_nothing
    keep = gain >= GREEDY_KEEP
    if len(flips) == 1 and (cells[i] == HIDDEN or not keep):
        # This move would turn my last card and end the round: only if it likely pays.
        ending_score = drawn if keep else MEAN_CARD
        if _greedy_fears_end(sight, cells, flips[0], ending_score):
            j, up_gain = _best_up_place(cells, drawn, lines)
            if j >= 0 and up_gain >= -3:
                return choices.keep[j]
    if keep:
        return choices.keep[i]
    return choices.flip[pick(rng, flips)]


def _best_up_place(cells: list[int], x: int, lines) -> tuple[int, float]:
    best_i, best_gain = -1, -1e9
    for i, v in enumerate(cells):
        if v in (HIDDEN, CLEARED):
            continue
        gain = v - x + clear_bonus(cells, i, x, lines[i])
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
    mine = estimate(cells, MEAN_CARD) - MEAN_CARD + value
    if mine <= 0:
        return False
    for p in sight.opponents():
        if mine < estimate(sight.cells(p), MEAN_CARD):
            continue
        return True  # as mine >= the least of them
    return False

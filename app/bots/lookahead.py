"""The expert's look-ahead: play the rest of a round many times over, from what one
player sees, with every player playing as the greedy bot does.

A `Deal` is one guess at the cards nobody sees: the unseen cards (the deck less every
face-up card, the discard pile and my drawn card) dealt at random to the face-down cells
of every grid and to the draw pile. A round is then played on plain lists, by the
rules (docs/rules.md: column clears, row clears when on, the ender's penalty in every
variant, the draw pile rebuilt from the discard pile), far faster than the engine.
"""

from __future__ import annotations

import random

from app.bots.greedy import GREEDY_KEEP, GREEDY_TAKE
from app.bots.reading import CLEARED, DECK_COUNTS, HIDDEN, MEAN_CARD, penalise

DOWN, UP, GONE = 0, 1, 2
MAX_TURNS = 120  # a played-out round is cut here (bots end a round in a few dozen)


def line_table(rows: int, cols: int, clear_rows: bool) -> tuple[tuple[int, ...], ...]:
    lines = [tuple(r * cols + c for r in range(rows)) for c in range(cols)]
    if clear_rows:
        lines += [tuple(r * cols + c for c in range(cols)) for r in range(rows)]
    return tuple(lines)


class Table:
    """What stays fixed while a round is played out: the rules and the seating."""

    def __init__(self, rules: dict, seating: list[str], me: str):
        self.rules = rules
        self.lines = line_table(rules["rows"], rules["cols"], rules["clear_rows"])
        self.by_cell = [
            [ln for ln in self.lines if i in ln] for i in range(rules["rows"] * rules["cols"])
        ]
        self.seating = seating
        self.me = seating.index(me)


def unseen_cards(grids: dict[str, tuple[int, ...]], pile, drawn) -> list[int] | None:
    """The cards nobody has seen, as a list (None if what is seen cannot be a deck)."""
    counts = dict(DECK_COUNTS)
    for cells in grids.values():
        for v in cells:
            if v > HIDDEN:
                counts[v] -= 1
    for v in pile:
        counts[v] -= 1
    if drawn is not None:
        counts[drawn] -= 1
    if any(c < 0 for c in counts.values()):
        return None
    return [v for v, c in counts.items() for _ in range(c)]


class Deal:
    """One round in play: every grid's values and states, the piles, whose turn."""

    __slots__ = ("vals", "st", "draw", "discard", "ender", "last", "rng")

    def copy(self, rng: random.Random) -> Deal:
        d = Deal.__new__(Deal)
        d.vals = [v[:] for v in self.vals]
        d.st = [s[:] for s in self.st]
        d.draw = self.draw[:]
        d.discard = self.discard[:]
        d.ender = self.ender
        d.last = self.last[:]
        d.rng = rng
        return d


def deal(
    table: Table,
    grids: list[tuple[int, ...]],
    unseen: list[int],
    draw_count: int,
    pile,
    ender: int | None,
    last: list[int],
    rng: random.Random,
) -> Deal:
    """A guess at the hidden cards: `unseen` shuffled onto face-down cells and the pile."""
    cards = unseen[:]
    rng.shuffle(cards)
    d = Deal.__new__(Deal)
    d.vals, d.st = [], []
    k = 0
    for cells in grids:
        vals, st = [], []
        for v in cells:
            if v == HIDDEN:
                vals.append(cards[k])
                st.append(DOWN)
                k += 1
            elif v == CLEARED:
                vals.append(0)
                st.append(GONE)
            else:
                vals.append(v)
                st.append(UP)
        d.vals.append(vals)
        d.st.append(st)
    d.draw = cards[k : k + draw_count]
    d.discard = list(pile)
    d.ender = ender
    d.last = list(last)
    d.rng = rng
    return d


# ----- the rules on plain lists ----------------------------------------------------
def clear(table: Table, d: Deal, p: int) -> None:
    """Remove every line of equal face-up cards (at least 2), until none is left."""
    vals, st = d.vals[p], d.st[p]
    again = True
    while again:
        again = False
        gone = []
        for line in table.lines:
            x = None
            n = 0
            for j in line:
                s = st[j]
                if s == GONE:
                    continue
                if s == DOWN or (x is not None and vals[j] != x):
                    n = 0
                    break
                x = vals[j]
                n += 1
            if n >= 2:
                gone.append(line)
        for line in gone:
            for j in line:
                if st[j] == UP:
                    st[j] = GONE
                    d.discard.append(vals[j])
            again = table.rules["clear_rows"]


def place(table: Table, d: Deal, p: int, i: int, x: int) -> None:
    d.discard.append(d.vals[p][i])
    d.vals[p][i] = x
    d.st[p][i] = UP
    clear(table, d, p)


def turn_up(table: Table, d: Deal, p: int, i: int) -> None:
    d.st[p][i] = UP
    clear(table, d, p)


def draw(d: Deal) -> int:
    if not d.draw:
        top = d.discard.pop()
        d.draw = d.discard
        d.rng.shuffle(d.draw)
        d.discard = [top]
    return d.draw.pop()


def end_turn(table: Table, d: Deal, p: int) -> int | None:
    """Whose turn is next after `p` (None: the round is over)."""
    n = len(d.vals)
    if d.ender is None:
        if DOWN not in d.st[p]:
            d.ender = p
            d.last = [(p + k) % n for k in range(1, n)]
        else:
            return (p + 1) % n
    elif d.last and d.last[0] == p:
        d.last.pop(0)
    return d.last[0] if d.last else None


def scores(table: Table, d: Deal) -> list[float]:
    """The round's scores after the final reveal and its clears."""
    raw = []
    for p in range(len(d.vals)):
        st = d.st[p]
        if DOWN in st:
            for i, s in enumerate(st):
                if s == DOWN:
                    st[i] = UP
            clear(table, d, p)
        raw.append(sum(v for v, s in zip(d.vals[p], st, strict=True) if s == UP))
    e = d.ender
    if e is not None and raw[e] > 0 and any(raw[q] <= raw[e] for q in range(len(raw)) if q != e):
        raw[e] = penalise(table.rules, raw[e])
    return raw


# ----- every player as the greedy bot ------------------------------------------------
def _gain(table: Table, vals, st, i: int, x: int) -> float:
    v = MEAN_CARD if st[i] == DOWN else vals[i]
    gain = v - x
    shared = False
    for line in table.by_cell[i]:
        n = 0
        for j in line:
            if j == i:
                n += 1
                continue
            s = st[j]
            if s == GONE:
                continue
            if s == DOWN or vals[j] != x:
                n = 0
                break
            n += 1
        if n >= 2:
            gain += n * x - (x if shared else 0)
            shared = True
    return gain


def _best(table: Table, vals, st, x: int, up_only: bool = False) -> tuple[int, float]:
    """The cell where `x` gains most for this grid (the first on a tie), and the gain."""
    best_i, best = -1, -1e9
    match = False
    for i, s in enumerate(st):
        if s == UP:
            v = vals[i]
            if v == x:
                match = True
                break
            g = v - x
        elif s == DOWN and not up_only:
            g = MEAN_CARD - x
        else:
            continue
        if g > best:
            best_i, best = i, g
    if not match:  # no clear possible: the gain is what the cell is worth, less x
        return best_i, best
    best_i, best = -1, -1e9
    for i, s in enumerate(st):
        if s == GONE or (up_only and s == DOWN):
            continue
        g = _gain(table, vals, st, i, x)
        if g > best:
            best_i, best = i, g
    return best_i, best


def _estimate(vals, st) -> float:
    return sum(MEAN_CARD if s == DOWN else v for v, s in zip(vals, st, strict=True) if s != GONE)


def _fears_end(d: Deal, p: int, value: float) -> bool:
    if d.ender is not None:
        return False
    mine = _estimate(d.vals[p], d.st[p]) - MEAN_CARD + value
    if mine <= 0:
        return False
    return mine >= min(_estimate(d.vals[q], d.st[q]) for q in range(len(d.vals)) if q != p)


def greedy_turn(table: Table, d: Deal, p: int) -> None:
    vals, st = d.vals[p], d.st[p]
    hidden = st.count(DOWN)
    top = d.discard[-1]
    i, gain = _best(table, vals, st, top)
    if gain >= GREEDY_TAKE and not (st[i] == DOWN and hidden == 1 and _fears_end(d, p, top)):
        d.discard.pop()
        place(table, d, p, i, top)
        return
    x = draw(d)
    i, gain = _best(table, vals, st, x)
    if hidden == 0:
        if gain > 0:
            place(table, d, p, i, x)
        else:
            d.discard.append(x)
        return
    keep = gain >= GREEDY_KEEP
    ending = hidden == 1 and (st[i] == DOWN or not keep)
    if ending and _fears_end(d, p, x if keep else MEAN_CARD):
        j, up_gain = _best(table, vals, st, x, up_only=True)
        if j >= 0 and up_gain >= -3:
            place(table, d, p, j, x)
            return
    if keep:
        place(table, d, p, i, x)
        return
    d.discard.append(x)
    downs = [j for j, s in enumerate(st) if s == DOWN]
    turn_up(table, d, p, downs[d.rng.randrange(len(downs))])


def play_out(table: Table, d: Deal, nxt: int | None, turns: int = MAX_TURNS) -> list[float]:
    """Play the round from `nxt`'s turn to its end, or for `turns` turns; the round's
    scores (a round cut short is scored as if every card were turned now)."""
    for _ in range(turns):
        if nxt is None:
            break
        greedy_turn(table, d, nxt)
        nxt = end_turn(table, d, nxt)
    return scores(table, d)

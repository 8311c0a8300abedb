"""What every bot reads from its view: its grid as flat values, its legal actions, the
lines that clear, who plays next. A view's parts are shared until they change, so each
is read once and cached by identity (see view.py)."""

from __future__ import annotations

import random
from collections.abc import Callable
from itertools import chain, compress

from app.engine.actions import Action, DiscardDrawn, Draw, KeepDrawn, Reveal, TakeDiscard
from app.engine.frozen import Frozen
from app.engine.state import DECK

# A cell of a parsed grid: its value when face up, else one of these markers (values
# lie in -2..12, so the markers can never be mistaken for a card).
HIDDEN = -100
CLEARED = -101

CARD_VALUES = tuple(range(-2, 13))
DECK_COUNTS = {v: DECK.count(v) for v in CARD_VALUES}
MEAN_CARD = sum(DECK) / len(DECK)  # about 5.07: what an unknown card is worth

Bot = Callable[[dict, random.Random], Action]


# ----- reading a view ----------------------------------------------------------------
def flat_cells(grid_rows) -> tuple[int, ...]:
    """A view's grid as a flat tuple: the value of each face-up card, else a marker.
    A view's grids are shared until they change, so each is read once (the cache holds
    the grid itself, so its id cannot be reused while cached)."""
    found = _FLAT.get(id(grid_rows))
    if found is not None and found[0] is grid_rows:
        return found[1]
    if len(_FLAT) > 256:
        _FLAT.clear()
    try:
        # A view's cells are shared objects too (one per card and state): read by id.
        flat = tuple(map(_CODES.__getitem__, map(id, chain.from_iterable(grid_rows))))
    except KeyError:
        flat = tuple(map(_learn, chain.from_iterable(grid_rows)))
    _FLAT[id(grid_rows)] = (grid_rows, flat)
    return flat


def _learn(cell) -> int:
    """A cell's flat value, remembered by its id when the cell is read-only (the cell
    is kept, so its id stays its own). A view's cells are a few dozen shared objects."""
    code = cell["value"] if cell["state"] == "up" else _MARKERS[cell["state"]]
    if type(cell) is not Frozen:  # e.g. a view decoded from JSON: read every time
        return code
    if len(_KEPT) > 4096:
        _KEPT.clear()
        _CODES.clear()
    _KEPT.append(cell)
    _CODES[id(cell)] = code
    return code


_FLAT: dict[int, tuple] = {}
_CODES: dict[int, int] = {}
_KEPT: list = []
_MARKERS = {"down": HIDDEN, "gone": CLEARED}


class Moves:
    """The viewer's legal actions (the view's `legal`, stated by the engine) read once:
    the stage of the turn, and for each kind of action the cells it may target (flat
    indexes; None for discarding with nothing left to turn)."""

    __slots__ = ("stage", "targets", "actions")

    def __init__(self, legal, cols: int):
        self.targets: dict[str, list[int | None]] = {}
        self.actions: list[Action] = []
        for entry in legal:
            kind, i, action = _read_action(entry, cols)
            self.targets.setdefault(kind, []).append(i)
            self.actions.append(action)
        self.stage = _STAGES[legal[0]["type"]] if legal else None

    def of(self, kind: str) -> list[int | None]:
        return self.targets.get(kind, [])


def _read_action(entry, cols: int) -> tuple[str, int | None, Action]:
    """(kind, flat index or None, Action) of one legal action. The view's action dicts
    are shared, so each is read once (the cache holds it: its id stays its own)."""
    found = _ENTRIES.get(id(entry))
    if found is not None and found[0] is entry and found[1] == cols:
        return found[2]
    kind = entry["type"]
    if kind == "discard_drawn":
        flip = entry["flip"]
        i = None if flip is None else flip[0] * cols + flip[1]
    else:
        i = entry["row"] * cols + entry["col"] if "row" in entry else None
    read = (kind, i, make_action(kind, i, cols))
    if len(_ENTRIES) > 20_000:
        _ENTRIES.clear()
    _ENTRIES[id(entry)] = (entry, cols, read)
    return read


_ENTRIES: dict[int, tuple] = {}

_STAGES = {
    "reveal": "setup",
    "draw": "take",
    "take_discard": "take",
    "keep_drawn": "drawn",
    "discard_drawn": "drawn",
}


def moves(view: dict) -> Moves:
    """The viewer's legal actions, read. A view's `legal` is shared by every view with
    the same grid and stage, so it is read once (the cache holds the list itself, so
    its id cannot be reused while cached)."""
    legal = view["legal"]
    found = _READ.get(id(legal))
    if found is not None and found[0] is legal:
        return found[1]
    if len(_READ) > 8192:  # a game meets a few dozen new ones; most recur across games
        _READ.clear()
    read = Moves(legal, view["rules"]["cols"])
    _READ[id(legal)] = (legal, read)
    return read


_READ: dict[int, tuple[object, Moves]] = {}


def has_move(view: dict) -> bool:
    """Whether the viewer has a move to make now."""
    return bool(view["legal"])


def make_action(kind: str, i: int | None, cols: int) -> Action:
    """The action of `kind` at flat index `i` (actions are immutable: made once)."""
    key = (kind, i, cols)
    found = _ACTIONS.get(key)
    if found is None:
        if kind == "draw":
            found = Draw()
        elif kind == "discard_drawn":
            found = DiscardDrawn(None if i is None else (i // cols, i % cols))
        else:
            found = _KINDS[kind](i // cols, i % cols)
        _ACTIONS[key] = found
    return found


_KINDS = {"reveal": Reveal, "take_discard": TakeDiscard, "keep_drawn": KeepDrawn}
_ACTIONS: dict[tuple, Action] = {}


class Choices:
    """Every action a bot may choose on one grid shape, by kind and flat index: the
    very objects `make_action` gives, looked up without building a key per move."""

    __slots__ = ("reveal", "take", "keep", "flip", "draw", "discard_nothing")

    def __init__(self, rows: int, cols: int):
        cells = range(rows * cols)
        self.reveal = tuple(make_action("reveal", i, cols) for i in cells)
        self.take = tuple(make_action("take_discard", i, cols) for i in cells)
        self.keep = tuple(make_action("keep_drawn", i, cols) for i in cells)
        self.flip = tuple(make_action("discard_drawn", i, cols) for i in cells)
        self.draw = make_action("draw", None, cols)
        self.discard_nothing = make_action("discard_drawn", None, cols)


def choices(rows: int, cols: int) -> Choices:
    found = _CHOICES.get((rows, cols))
    if found is None:
        found = _CHOICES[(rows, cols)] = Choices(rows, cols)
    return found


_CHOICES: dict[tuple[int, int], Choices] = {}


def grid_lines(rows: int, cols: int, clear_rows: bool) -> list[list[tuple[int, ...]]]:
    """For each cell, the lines (tuples of cell indexes) that can clear through it."""
    key = (rows, cols, clear_rows)
    cached = _LINES.get(key)
    if cached is None:
        cached = []
        for i in range(rows * cols):
            r, c = divmod(i, cols)
            lines = [tuple(k * cols + c for k in range(rows))]
            if clear_rows:
                lines.append(tuple(r * cols + k for k in range(cols)))
            cached.append(lines)
        _LINES[key] = cached
    return cached


_LINES: dict[tuple[int, int, bool], list[list[tuple[int, ...]]]] = {}


def clear_bonus(cells: list[int], i: int, x: int, lines: list[tuple[int, ...]]) -> int:
    """Points removed by clears if a face-up `x` lands at `i` (one pass, no chains)."""
    removed = 0
    shared = False
    for line in lines:
        n = 0
        for j in line:
            if j == i:
                n += 1
                continue
            v = cells[j]
            if v == CLEARED:
                continue
            if v != x:
                n = 0
                break
            n += 1
        if n >= 2:
            removed += n * x - (x if shared else 0)
            shared = True
    return removed


def next_player(view: dict) -> str | None:
    """Who moves after the viewer this round (None if nobody does)."""
    rnd = view["round"]
    me = view["me"]
    if rnd["ender"] is not None:
        left = rnd["last_turns"]
        if me in left:
            k = left.index(me)
            return left[k + 1] if k + 1 < len(left) else None
        return left[0] if left else None
    gone = {p["id"] for p in view["players"] if p["forfeited"]}
    seating = rnd["seating"]
    start = seating.index(me)
    for step in range(1, len(seating)):
        candidate = seating[(start + step) % len(seating)]
        if candidate not in gone:
            return candidate
    return None


def opponents_of(view: dict) -> list[str]:
    me = view["me"]
    gone = {p["id"] for p in view["players"] if p["forfeited"]}
    return [p for p in view["round"]["seating"] if p != me and p not in gone]


def penalise(rules: dict, score: float) -> float:
    penalty = rules["penalty"]
    mode = penalty["mode"]
    if mode == "multiplier":
        return score * penalty["multiplier"]
    if mode == "flat":
        return score + penalty["flat"]
    return score * penalty["multiplier"] + penalty["flat"]


def spread_reveal(view: dict, rng: random.Random) -> Action:
    """Setup: a face-down card, in a column with no face-up card if there is one."""
    cols = view["rules"]["cols"]
    cells = flat_cells(view["round"]["grids"][view["me"]])
    return reveal_spread(cells, moves(view).of("reveal"), cols, rng)


def reveal_spread(cells, hidden: list[int], cols: int, rng: random.Random) -> Action:
    """Of the `hidden` cells, one in a column with no face-up card if there is one."""
    # The face-up cards (the markers are lower than any card), picked in C: at setup,
    # none or a few.
    used = {i % cols for i in compress(range(len(cells)), map(HIDDEN.__lt__, cells))}
    fresh = [i for i in hidden if i % cols not in used] if used else hidden
    return make_action("reveal", pick(rng, fresh or hidden), cols)


def pick(rng: random.Random, cards: list):
    """rng.choice(cards) (cards not empty): the same draws, one call instead of two
    (random.Random.choice draws getrandbits(k), k the bit length of the count, until
    below the count). tests/engine/test_greedy.py compares them."""
    n = len(cards)
    k = n.bit_length()
    r = rng.getrandbits(k)
    while r >= n:
        r = rng.getrandbits(k)
    return cards[r]


def is_stalling(rnd: dict) -> bool:
    """A round gone on far longer than usual: bots then hurry to end it, so that no
    table of bots that all avoid ending can play on for ever."""
    return len(rnd["log"]) > STALL_EVENTS * len(rnd["seating"])


STALL_EVENTS = 60  # public events per player (a turn makes 1 or 2; rounds average ~20)


def estimate(cells: list[int], mean: float) -> float:
    total = 0.0
    for v in cells:
        if v == HIDDEN:
            total += mean
        elif v != CLEARED:
            total += v
    return total

"""The game's state: phases, cards, grids and rounds (docs/rules.md). Plain data with
the few rules that read one grid (clearing lines); `Game` (game.py) moves it on."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import compress

from app.engine.rules import RuleSet

# Cell states of a grid position. A position keeps its place for the whole round.
DOWN, UP, GONE = 0, 1, 2

# 150 cards: five −2, ten −1, fifteen 0, ten each of 1..12.
DECK: tuple[int, ...] = tuple(
    [-2] * 5 + [-1] * 10 + [0] * 15 + [v for v in range(1, 13) for _ in range(10)]
)

# Phases of a game.
SETUP = "setup"  # players choose their initial flips
PLAY = "play"  # turns, including the last turns after someone ended the round
SCORING = "scoring"  # every turn played, not yet scored (only with Game.hold_scoring)
ROUND_OVER = "round_over"  # scored; waiting for start_next_round()
GAME_OVER = "game_over"


def shuffle_once(rng, cards: list) -> None:
    """`rng.shuffle(cards)` for an rng made for this one shuffle (a deal's, a
    reshuffle's): the very same order (every seeded game depends on it), from random
    words drawn in one call instead of one Python call per card (a deal shuffles 150),
    so `rng` is left further on than `rng.shuffle` leaves it.

    As random.shuffle (CPython 3.11) draws below i + 1 with getrandbits(k), k the bit
    length of i + 1, until below: each draw is the top k bits of the next 32-bit word,
    and getrandbits(32 * n) lays n words out least significant first. Up to 256 cards
    k is at most 8: a draw is read from the word's top byte through a table per bound
    (the draw, or None when not below it: drawn again). tests/engine/test_scenarios_setup.py
    compares the orders."""
    size = len(cards)
    if size > 256:  # (no deck is this large) draws of more than 8 bits
        rng.shuffle(cards)
        return
    steps = _STEPS.get(size)
    if steps is None:
        steps = _STEPS[size] = tuple((i, _picks(i + 1)) for i in range(size - 1, 0, -1))
    if not steps:
        return
    # Every draw below i + 1 succeeds at least half the time: a deal uses some 220
    # words (standard deviation 11); more are drawn when needed.
    count = size + size // 2 + 32
    tops = _tops(rng, count)
    dealt = cards[:]
    while True:
        words = iter(tops)
        i = 0
        try:
            for (i, picks), top in zip(steps, words, strict=False):
                j = picks[top]
                while j is None:
                    j = picks[next(words)]
                cards[i], cards[j] = cards[j], cards[i]
            if i == 1:  # the last step made (else the words ran out first)
                return
        except StopIteration:  # the words ran out in a step
            pass
        cards[:] = dealt  # more words needed than drawn (rare): draw on, redo
        tops += _tops(rng, count)


def _tops(rng, count: int) -> list[int]:
    """The top byte of each of the next `count` 32-bit words of `rng`, in the order it
    makes them."""
    return list(rng.getrandbits(32 * count).to_bytes(4 * count, "little")[3::4])


def _picks(below: int) -> tuple[int | None, ...]:
    """For a draw below `below` (2 to 256), by a word's top byte: the draw (the byte's
    top k bits, k the bit length of `below`), or None if it is not below."""
    found = _PICKS.get(below)
    if found is None:
        shift = 8 - below.bit_length()
        draws = [b >> shift for b in range(256)]
        found = _PICKS[below] = tuple(j if j < below else None for j in draws)
    return found


_PICKS: dict[int, tuple[int | None, ...]] = {}
_STEPS: dict[int, tuple[tuple[int, tuple[int | None, ...]], ...]] = {}


class IllegalMove(Exception):
    """A move the rules do not allow; `reason` is written for the player."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class Player:
    id: str
    name: str
    bot: str | None = None

    def to_dict(self) -> dict:
        return {"id": self.id, "name": self.name, "bot": self.bot}


class Grid:
    """One player's cards: flat lists indexed row * cols + col."""

    __slots__ = ("rows", "cols", "values", "state")

    def __init__(self, rows: int, cols: int, values: list[int], state: list[int] | None = None):
        self.rows = rows
        self.cols = cols
        self.values = values
        self.state = state if state is not None else [DOWN] * (rows * cols)

    def index(self, row: int, col: int) -> int:
        if not (0 <= row < self.rows and 0 <= col < self.cols):
            raise IllegalMove("There is no card at that position")
        return row * self.cols + col

    def face_down_count(self) -> int:
        return self.state.count(DOWN)

    def score(self) -> int:
        return sum(v for v, s in zip(self.values, self.state, strict=True) if s != GONE)

    def face_up_values(self) -> list[int]:
        return [v for v, s in zip(self.values, self.state, strict=True) if s == UP]

    def clear_lines(self, clear_rows: bool) -> list[tuple[str, int, list[int]]]:
        """Remove every complete line, repeating until none qualifies.

        Returns the cleared lines as (kind, index, values in grid order), columns left to
        right then rows top to bottom within each pass: the order they go onto the
        discard pile."""
        cleared = []
        rows, cols, values, state = self.rows, self.cols, self.values, self.state
        size = rows * cols
        while True:
            lines = []
            # A line with a face-down card never clears (checked in C first: this runs
            # after every move, when most lines still have one).
            for c in range(cols):
                if DOWN in state[c:size:cols]:
                    continue
                cells = clearing_cells(range(c, size, cols), values, state)
                if cells is not None:
                    lines.append(("column", c, cells))
            if clear_rows:
                for r in range(rows):
                    if DOWN in state[r * cols : r * cols + cols]:
                        continue
                    cells = clearing_cells(range(r * cols, r * cols + cols), values, state)
                    if cells is not None:
                        lines.append(("row", r, cells))
            if not lines:
                return cleared
            for kind, number, cells in lines:
                # A card shared by a row and a column that clear together leaves once,
                # with the column; a row whose every card went with columns adds nothing.
                cells = [i for i in cells if state[i] != GONE]
                if not cells:
                    continue
                for i in cells:
                    state[i] = GONE
                cleared.append((kind, number, [values[i] for i in cells]))

    def clear_column(self, col: int) -> list[tuple[str, int, list[int]]]:
        """`clear_lines(False)` when only column `col` may be complete (its card is the
        one changed since the last clear): the same answer, looking at one column."""
        values, state = self.values, self.state
        cells = clearing_cells(range(col, len(state), self.cols), values, state)
        if cells is None:
            return []
        for i in cells:
            state[i] = GONE
        return [("column", col, list(map(values.__getitem__, cells)))]

    def to_dict(self) -> dict:
        return {"values": self.values, "state": self.state}

    @classmethod
    def from_dict(cls, rows: int, cols: int, data: dict) -> Grid:
        return cls(rows, cols, list(data["values"]), list(data["state"]))


def clearing_cells(line: range, values: list[int], state: list[int]) -> list[int] | None:
    """The remaining cells of a line if it clears: at least 2, all face up, all equal.
    Runs after every move, so a line still whole is read in C (lines have 2 cells or
    more); one partly cleared is read cell by cell, up to a face-down or different card."""
    states = state[line.start : line.stop : line.step]
    if DOWN in states:
        return None
    if GONE not in states:
        cards = values[line.start : line.stop : line.step]
        return list(line) if cards.count(cards[0]) == len(cards) else None
    first = None
    n = 0
    for i in line:
        s = state[i]
        if s == GONE:
            continue
        if s != UP:
            return None
        if n == 0:
            first = values[i]
        elif values[i] != first:
            return None
        n += 1
    if n < 2:
        return None
    # Picked in C: a comprehension reading `state` would make a cell on every call.
    return list(compress(line, map(GONE.__ne__, states)))


class Round:
    """One deal: grids, piles, whose turn, and the moves made so far."""

    def __init__(self, number: int, seating: list[str]):
        self.number = number
        self.seating = seating
        self.grids: dict[str, Grid] = {}
        self.draw_pile: list[int] = []  # top of the pile is the END of the list
        self.discard: list[int] = []  # bottom first; top is the end
        self.dealt: dict = {}  # the deal as the record shows it
        self.setup_left: dict[str, int] = {}
        self.starter: str | None = None
        self.turn: str | None = None
        self.drawn: int | None = None
        self.ender: str | None = None
        self.last_turns: list[str] = []  # who still plays a last turn, in order
        self.reshuffles = 0
        self.moves: list[dict] = []  # record moves (skymo.game/1)
        self.log: list[dict] = []  # public events, for the table's move log
        self.result: dict | None = None
        self.recorded_starter: str | None = None  # replays: who played the first turn

    @property
    def first_turn(self) -> str | None:
        """The first player who took, drew, kept or discarded in the round (a record's
        `starter`: reveals and forfeits are not turns), None until someone did. Not
        always `starter`, whom the rules named: they may leave before playing."""
        for move in self.moves:
            if move["type"] in ("take_discard", "draw"):
                return move["player"]
        return None

    def to_dict(self) -> dict:
        return {
            "number": self.number,
            "seating": self.seating,
            "grids": {p: g.to_dict() for p, g in self.grids.items()},
            "draw_pile": self.draw_pile,
            "discard": self.discard,
            "dealt": self.dealt,
            "setup_left": self.setup_left,
            "starter": self.starter,
            "turn": self.turn,
            "drawn": self.drawn,
            "ender": self.ender,
            "last_turns": self.last_turns,
            "reshuffles": self.reshuffles,
            "moves": self.moves,
            "log": self.log,
            "result": self.result,
            "recorded_starter": self.recorded_starter,
        }

    @classmethod
    def from_dict(cls, rules: RuleSet, data: dict) -> Round:
        rnd = cls(data["number"], list(data["seating"]))
        rnd.grids = {p: Grid.from_dict(rules.rows, rules.cols, g) for p, g in data["grids"].items()}
        rnd.draw_pile = list(data["draw_pile"])
        rnd.discard = list(data["discard"])
        rnd.dealt = data["dealt"]
        rnd.setup_left = dict(data["setup_left"])
        rnd.starter = data["starter"]
        rnd.turn = data["turn"]
        rnd.drawn = data["drawn"]
        rnd.ender = data["ender"]
        rnd.last_turns = list(data["last_turns"])
        rnd.reshuffles = data["reshuffles"]
        rnd.moves = list(data["moves"])
        rnd.log = list(data["log"])
        rnd.result = data["result"]
        rnd.recorded_starter = data.get("recorded_starter")
        return rnd

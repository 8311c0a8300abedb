"""What one player may see, read in place from the game: the bots' fast way in.

A view (view.py) is a fresh, JSON-able copy of everything a player may know, built
after every change. A bot game changes the table about 400 times, and most of a view
goes unread: a `Sight` answers only the questions a bot asks, straight from the game,
and hands out nothing a view would not show (no face-down value, no draw pile, no
other player's drawn card). Bots that read a Sight (SIGHTED in bots.py) also read a
view through `ViewSight`, which answers the same questions from a view.

A grid is read as flat codes (reading.py): a face-up card's value, else HIDDEN or
CLEARED. Each grid is read again only when it changed, so its codes and move targets
keep their identity between turns (the bots cache by identity)."""

from __future__ import annotations

from itertools import compress
from operator import itemgetter, not_

from app.bots.reading import (
    CLEARED,
    HIDDEN,
    STALL_EVENTS,
    choices,
    flat_cells,
    grid_lines,
    moves,
    opponents_of,
)
from app.engine.state import DOWN, GONE, PLAY

_NOTHING_TO_TURN: list[int | None] = [None]
_MARKERS = [HIDDEN, CLEARED]  # a grid's values + these: what its codes are picked from


class _Read:
    """One grid as read: copies of its values and states (to notice a change), its
    codes, and the cells moves may target: `down` (to turn over; [None] when there is
    none left) and `kept` (to place a card on: every cell not cleared). `_codes` picks
    the codes out of the values and _MARKERS."""

    __slots__ = ("values", "state", "cells", "down", "kept", "_codes")


def _read(values: list[int], state: list[int], same: _Read | None = None) -> _Read:
    """A grid read now; `same`: its last read if its states did not change (a card was
    replaced face up). (Filled in here: a class without __init__ is made in C, some
    200 times a game.)"""
    found = _Read()
    found.values = values[:]
    if same is not None:
        found.state, found.down, found.kept = same.state, same.down, same.kept
        found._codes = codes = same._codes
    else:
        found.state = state[:]
        key = tuple(state)
        targets = _TARGETS.get(key)
        if targets is None:
            if len(_TARGETS) > 16384:  # a few thousand seen in 200 games
                _TARGETS.clear()
            targets = _TARGETS[key] = _targets(state)
        found.down, found.kept, codes = targets
        found._codes = codes
    # Each face-up card's value, else HIDDEN or CLEARED: never a face-down card's value.
    found.cells = codes(values + _MARKERS)
    return found


def _targets(state: list[int]) -> tuple[list, list, itemgetter]:
    """The face-down cells (or [None]), the cells not cleared, and the getter of the
    codes of a grid in these states (from its values + _MARKERS), found in C but for a
    loop over the face-down and cleared cells."""
    n = len(state)
    cells = range(n)
    down = list(compress(cells, map(not_, state)))
    picks = list(cells)  # where each code is picked: its value, or a marker after them
    for i in down:
        picks[i] = n  # HIDDEN
    kept = _EVERY_CELL[n]  # nothing cleared yet: the one shared list of every cell
    if GONE in state:
        kept = list(compress(cells, map(GONE.__ne__, state)))
        for i in compress(cells, map(GONE.__eq__, state)):
            picks[i] = n + 1  # CLEARED
    return down or _NOTHING_TO_TURN, kept, itemgetter(*picks)


# A grid's states -> (face-down cells or [None], cells not cleared, codes' getter):
# shared lists, as the legal actions' targets (Moves.of) give them for turning a card
# and placing one.
_TARGETS: dict[tuple, tuple[list, list, itemgetter]] = {}
_EVERY_CELL = {n: list(range(n)) for n in range(1, 17)}
assert DOWN == 0  # not_(state) picks the face-down cells


class Sight:
    """Player `me`'s public information in `game`, read when asked (never copied)."""

    __slots__ = ("_game", "me", "rules", "lines", "choices", "_grids")

    def __init__(self, game, me: str):
        self._game = game
        self.me = me
        self.rules = game.rules  # frozen, public, the same all game
        self.lines = grid_lines(self.rules.rows, self.rules.cols, self.rules.clear_rows)
        # The actions to answer with, by kind and cell (reading.Choices).
        self.choices = choices(self.rules.rows, self.rules.cols)
        self._grids: dict[str, _Read] = {}

    def stage(self) -> str | None:
        """My stage now (setup, take, drawn or None: no move), as Game.stage says it
        (in play read here: a bot asks before each of its moves)."""
        game = self._game
        if game.phase == PLAY:
            rnd = game.rounds[-1]
            if rnd.turn != self.me or self.me in game.forfeited:
                return None
            return "take" if rnd.drawn is None else "drawn"
        return game.stage(self.me)

    def turn(self) -> tuple[str | None, _Read | None, int | None]:
        """(my stage, my grid read, the card I would place): the one question a bot
        asks before each of its moves. The card is the discard's top when I take, my
        drawn card once drawn, else None; no stage, no grid read."""
        game = self._game
        me = self.me
        if game.phase != PLAY:
            stage = game.stage(me)
            return stage, self.grid(me) if stage is not None else None, None
        rnd = game.rounds[-1]
        if rnd.turn != me or me in game.forfeited:
            return None, None, None
        # My grid read, as grid(me) reads it (here: one call fewer on every move).
        grid = rnd.grids[me]
        grids = self._grids
        mine = grids.get(me)
        if mine is None or mine.state != grid.state:
            mine = grids[me] = _read(grid.values, grid.state)
        elif mine.values != grid.values:
            mine = grids[me] = _read(grid.values, grid.state, mine)
        drawn = rnd.drawn
        if drawn is not None:
            return "drawn", mine, drawn
        discard = rnd.discard
        return "take", mine, discard[-1] if discard else None

    def grid(self, player: str) -> _Read:
        """`player`'s grid read: `cells` (flat codes: face-up values, else HIDDEN or
        CLEARED), `down` (face-down cells), `kept` (cells not cleared)."""
        grid = self._game.rounds[-1].grids[player]
        found = self._grids.get(player)
        if found is None or found.state != grid.state:
            found = self._grids[player] = _read(grid.values, grid.state)
        elif found.values != grid.values:
            found = self._grids[player] = _read(grid.values, grid.state, found)
        return found

    def cells(self, player: str) -> tuple[int, ...]:
        return self.grid(player).cells

    def discard_top(self) -> int | None:
        discard = self._game.rounds[-1].discard
        return discard[-1] if discard else None

    def drawn(self) -> int | None:
        """The card I drew, if I hold one (nobody else's)."""
        rnd = self._game.rounds[-1]
        return rnd.drawn if rnd.turn == self.me else None

    def ender(self) -> str | None:
        return self._game.rounds[-1].ender

    def stalling(self) -> bool:
        """As reading.is_stalling: the round has gone on far longer than usual."""
        rnd = self._game.rounds[-1]
        return len(rnd.log) > STALL_EVENTS * len(rnd.seating)

    def opponents(self) -> list[str]:
        """The others still playing this round, in seating order."""
        gone = self._game.forfeited
        me = self.me
        return [p for p in self._game.rounds[-1].seating if p != me and p not in gone]


class ViewSight:
    """The same questions answered from a view (view.py) or its JSON copy."""

    __slots__ = ("view", "me", "rules", "lines", "choices", "_moves")

    def __init__(self, view: dict):
        self.view = view
        self.me = view["me"]
        self.rules = _RulesOfView(view["rules"])
        self.lines = grid_lines(self.rules.rows, self.rules.cols, self.rules.clear_rows)
        self.choices = choices(self.rules.rows, self.rules.cols)
        self._moves = moves(view)

    def stage(self) -> str | None:
        return self._moves.stage

    def turn(self) -> tuple[str | None, _ViewRead | None, int | None]:
        stage = self._moves.stage
        if stage is None:
            return None, None, None
        card = self.drawn() if stage == "drawn" else self.discard_top() if stage == "take" else None
        return stage, self.grid(self.me), card

    def grid(self, player: str) -> _ViewRead:
        """The viewer's own grid as Sight.grid reads it (targets from the view's legal
        actions, so only while the viewer has a move)."""
        assert player == self.me
        return _ViewRead(self.cells(player), self._moves)

    def cells(self, player: str) -> tuple[int, ...]:
        return flat_cells(self.view["round"]["grids"][player])

    def discard_top(self) -> int | None:
        return self.view["round"]["discard_top"]

    def drawn(self) -> int | None:
        return self.view["round"]["drawn"]

    def ender(self) -> str | None:
        return self.view["round"]["ender"]

    def stalling(self) -> bool:
        rnd = self.view["round"]
        return len(rnd["log"]) > STALL_EVENTS * len(rnd["seating"])

    def opponents(self) -> list[str]:
        return opponents_of(self.view)


class _ViewRead:
    __slots__ = ("cells", "down", "kept")

    def __init__(self, cells: tuple[int, ...], legal):
        self.cells = cells
        stage = legal.stage
        self.down = legal.of("reveal" if stage == "setup" else "discard_drawn")
        self.kept = legal.of("take_discard" if stage == "take" else "keep_drawn")


class _RulesOfView:
    """A view's rules dict read as a RuleSet's grid fields."""

    __slots__ = ("rows", "cols", "clear_rows")

    def __init__(self, rules: dict):
        self.rows, self.cols, self.clear_rows = rules["rows"], rules["cols"], rules["clear_rows"]

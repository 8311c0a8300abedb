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

from operator import getitem

from .reading import CLEARED, HIDDEN, STALL_EVENTS, _flat, _opponents, moves
from .state import DOWN, GONE, UP

# A cell's code by its state and card: the value only when face up.
_CODE = ({}, {}, {})
for _v in range(-2, 13):
    _CODE[DOWN][_v] = HIDDEN
    _CODE[UP][_v] = _v
    _CODE[GONE][_v] = CLEARED
assert (DOWN, UP, GONE) == (0, 1, 2)


class _Read:
    """One grid as read: copies of its values and states (to notice a change), its
    codes, and the cells each kind of move may target."""

    __slots__ = ("values", "state", "cells", "down", "kept")

    def __init__(self, values: list[int], state: list[int]):
        self.values = values[:]
        self.state = state[:]
        try:
            self.cells = tuple(map(getitem, map(_CODE.__getitem__, state), values))
        except KeyError:  # a card outside the deck's values (a test's grid)
            self.cells = tuple(
                v if s == UP else HIDDEN if s == DOWN else CLEARED
                for v, s in zip(values, state, strict=True)
            )
        self.down = [i for i, s in enumerate(state) if s == DOWN]
        self.kept = [i for i, s in enumerate(state) if s != GONE]


class Sight:
    """Player `me`'s public information in `game`, read when asked (never copied)."""

    __slots__ = ("_game", "me", "_grids")

    def __init__(self, game, me: str):
        self._game = game
        self.me = me
        self._grids: dict[str, _Read] = {}

    @property
    def rules(self):
        """The game's rules (a frozen RuleSet: public)."""
        return self._game.rules

    def stage(self) -> str | None:
        """My stage now: setup, take, drawn or None (no move), as Game.stage."""
        return self._game.stage(self.me)

    def _read(self, player: str) -> _Read:
        grid = self._game.rounds[-1].grids[player]
        found = self._grids.get(player)
        if found is None or found.state != grid.state or found.values != grid.values:
            found = self._grids[player] = _Read(grid.values, grid.state)
        return found

    def cells(self, player: str) -> tuple[int, ...]:
        """`player`'s grid as flat codes: face-up values, else HIDDEN or CLEARED."""
        return self._read(player).cells

    def targets(self, kind: str) -> list[int | None]:
        """The cells (flat indexes) my move of `kind` may target now, as Moves.of."""
        read = self._read(self.me)
        if kind == "take_discard" or kind == "keep_drawn":
            return read.kept
        if kind == "discard_drawn":
            return read.down or _NOTHING_TO_TURN
        return read.down  # reveal

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
        """As reading._stalling: the round has gone on far longer than usual."""
        rnd = self._game.rounds[-1]
        return len(rnd.log) > STALL_EVENTS * len(rnd.seating)

    def opponents(self) -> list[str]:
        """The others still playing this round, in seating order."""
        gone = self._game.forfeited
        me = self.me
        return [p for p in self._game.rounds[-1].seating if p != me and p not in gone]


_NOTHING_TO_TURN: list[int | None] = [None]


class ViewSight:
    """The same questions answered from a view (view.py) or its JSON copy."""

    __slots__ = ("view", "me", "_moves")

    def __init__(self, view: dict):
        self.view = view
        self.me = view["me"]
        self._moves = moves(view)

    @property
    def rules(self):
        return _RulesOfView(self.view["rules"])

    def stage(self) -> str | None:
        return self._moves.stage

    def cells(self, player: str) -> tuple[int, ...]:
        return _flat(self.view["round"]["grids"][player])

    def targets(self, kind: str) -> list[int | None]:
        return self._moves.of(kind)

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
        return _opponents(self.view)


class _RulesOfView:
    """A view's rules dict read as a RuleSet's grid fields."""

    __slots__ = ("rows", "cols", "clear_rows")

    def __init__(self, rules: dict):
        self.rows, self.cols, self.clear_rows = rules["rows"], rules["cols"], rules["clear_rows"]

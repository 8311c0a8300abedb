"""Moves: what a player may do now, the checks, and what each move changes. A part of
`Game` (game.py), kept apart for length."""

from __future__ import annotations

from itertools import filterfalse

from app.engine.actions import Action, DiscardDrawn, Draw, Forfeit, KeepDrawn, Reveal, TakeDiscard
from app.engine.events import DRAW_EVENTS, draw_event, flip_event
from app.engine.frozen import Frozen
from app.engine.state import (
    DOWN,
    GAME_OVER,
    GONE,
    PLAY,
    ROUND_OVER,
    SETUP,
    UP,
    Grid,
    IllegalMove,
    shuffle_once,
)


class Turns:
    """Moves (mixed into `Game`)."""

    def stage(self, player_id: str) -> str | None:
        """Where `player_id` is in a move now: "setup" (first flips left), "take" (their
        turn, nothing drawn), "drawn" (their turn, a card drawn), or None (no move)."""
        phase = self.phase
        if phase == PLAY:  # asked before every move: the usual case first
            rnd = self.rounds[-1]
            # Whose turn it is: a seated player (so dealt a grid), never one who left.
            if rnd.turn != player_id or player_id in self.forfeited:
                return None
            return "take" if rnd.drawn is None else "drawn"
        if phase != SETUP or player_id in self.forfeited or not self.rounds:
            return None
        rnd = self.rounds[-1]
        if player_id not in rnd.grids:
            return None
        return "setup" if rnd.setup_left.get(player_id, 0) > 0 else None

    def legal_actions(self, player_id: str) -> list[Action]:
        """Every move `player_id` may make now (Forfeit excepted: always allowed)."""
        stage = self.stage(player_id)
        if stage is None:
            return []
        grid = self.round.grids[player_id]
        state = grid.state
        reveal, take, keep, flip = _cell_actions(grid.rows, grid.cols)
        if stage == "setup":
            return [reveal[i] for i, s in enumerate(state) if s == DOWN]
        if stage == "take":
            return [_DRAW] + [take[i] for i, s in enumerate(state) if s != GONE]
        keeps = [keep[i] for i, s in enumerate(state) if s != GONE]
        flips = [flip[i] for i, s in enumerate(state) if s == DOWN]
        return keeps + (flips or [_DISCARD_NOTHING])

    def _check(self, player_id: str, action: Action) -> None:
        """Every validation happens here, before anything changes. (It runs before
        every move: a turn in play, the usual case, is checked here, the others apart.)"""
        if self.phase != PLAY:
            return self._check_outside_play(player_id, action)
        rnd = self.rounds[-1]
        if rnd.turn != player_id or player_id in self.forfeited:
            return self._check_off_turn(player_id, action)
        # The player whose turn it is: seated, so playing in this game.
        kind = type(action)
        if kind is Draw:
            if rnd.drawn is not None:
                raise IllegalMove("You have drawn a card: keep it or discard it")
            return
        if kind is KeepDrawn:
            if rnd.drawn is None:
                raise IllegalMove("Draw a card first")
            row, col = action.row, action.col
        elif kind is TakeDiscard:
            if rnd.drawn is not None:
                raise IllegalMove("You have drawn a card: keep it or discard it")
            row, col = action.row, action.col
        elif kind is DiscardDrawn:
            if rnd.drawn is None:
                raise IllegalMove("Draw a card first")
            if action.flip is None:
                if DOWN in rnd.grids[player_id].state:
                    raise IllegalMove("Choose a face-down card to turn over")
                return
            row, col = action.flip
        elif kind is Forfeit:
            return
        elif kind is Reveal:
            raise IllegalMove("Play has started: draw a card or take the discard")
        else:
            raise IllegalMove("Draw a card first" if rnd.drawn is None else "Unknown move")
        # A card to place, or one to turn over: a cell of the grid, not cleared.
        grid = rnd.grids[player_id]
        if not (0 <= row < grid.rows and 0 <= col < grid.cols):
            raise IllegalMove("There is no card at that position")
        state = grid.state[row * grid.cols + col]
        if state == GONE:
            raise IllegalMove("That card was cleared from the grid")
        if state == UP and kind is DiscardDrawn:
            raise IllegalMove("That card is already face up")

    def _check_playing(self, player_id: str) -> None:
        if player_id not in self.totals:
            raise IllegalMove("You are not playing in this game")
        if player_id in self.forfeited:
            raise IllegalMove("You have left this game")

    def _check_off_turn(self, player_id: str, action: Action) -> None:
        """_check in play for anyone but the player whose turn it is."""
        self._check_playing(player_id)
        kind = type(action)
        if kind is Forfeit:
            return
        if kind is Reveal:
            raise IllegalMove("Play has started: draw a card or take the discard")
        raise IllegalMove(f"It is {self.name(self.rounds[-1].turn)}'s turn")

    def _check_outside_play(self, player_id: str, action: Action) -> None:
        """_check at setup, between rounds and once the game is over."""
        phase = self.phase
        if phase == GAME_OVER:
            raise IllegalMove("The game is over")
        self._check_playing(player_id)
        kind = type(action)
        if kind is Forfeit:
            return
        if phase != SETUP:
            raise IllegalMove("The round is over; the next one has not started yet")
        rnd = self.rounds[-1]
        if kind is not Reveal:
            raise IllegalMove("Turn your first cards face up before play starts")
        if rnd.setup_left[player_id] <= 0:
            raise IllegalMove("You have already turned your first cards; wait for the others")
        self._check_face_down(rnd.grids[player_id], action.row, action.col)

    @staticmethod
    def _check_face_down(grid: Grid, row: int, col: int) -> None:
        state = grid.state[grid.index(row, col)]
        if state == UP:
            raise IllegalMove("That card is already face up")
        if state == GONE:
            raise IllegalMove("That card was cleared from the grid")

    # The moves' effects. _check has validated the move, so a cell's place is read
    # without checking it again.
    def apply_reveal(self, player_id: str, action: Reveal) -> None:
        rnd = self.rounds[-1]
        grid = rnd.grids[player_id]
        row, col = action.row, action.col
        i = row * grid.cols + col
        grid.state[i] = UP
        rnd.setup_left[player_id] -= 1
        rnd.moves.append({"player": player_id, "type": "reveal", "row": row, "col": col})
        rnd.log.append(
            Frozen(type="reveal", player=player_id, row=row, col=col, value=grid.values[i])
        )
        if _may_clear(grid.state, grid.cols, i, self.rules.clear_rows):
            self._clear(player_id, i)
        self._maybe_finish_setup()

    def apply_take_discard(self, player_id: str, action: TakeDiscard) -> None:
        rnd = self.rounds[-1]
        card = rnd.discard.pop()
        self._replace(rnd, rnd.grids[player_id], player_id, action.row, action.col, card)

    def _replace(self, rnd, grid: Grid, player_id: str, row: int, col: int, card: int, kind=""):
        """The turns that put a card into the grid (of round `rnd`, the one in play),
        at a checked cell: the replaced card goes face up on the discard pile, lines
        clear, the turn ends. `kind`: "keep_drawn" for a drawn card, else the discard's."""
        cols = grid.cols
        i = row * cols + col
        values = grid.values
        old = values[i]
        values[i] = card
        state = grid.state
        state[i] = UP
        rnd.discard.append(old)
        if kind:
            rnd.moves.append(
                {"player": player_id, "type": "draw", "keep": True, "row": row, "col": col}
            )
        else:
            kind = "take_discard"
            rnd.moves.append({"player": player_id, "type": kind, "row": row, "col": col})
        rnd.log.append(
            Frozen(type=kind, player=player_id, row=row, col=col, value=card, replaced=old)
        )
        # _may_clear and _end_turn's usual case, written out: this runs on most turns.
        if DOWN not in state[col::cols] or (
            self.rules.clear_rows and DOWN not in state[i - col : i - col + cols]
        ):
            self._clear(player_id, i)
        if rnd.ender is None and DOWN in state and not self.forfeited:
            seating = rnd.seating
            rnd.turn = seating[(seating.index(player_id) + 1) % len(seating)]
        else:
            self._end_turn(rnd, state, player_id)

    def apply_draw(self, player_id: str, action: Draw) -> None:
        self._draw_card(self.rounds[-1], player_id)

    def _draw_card(self, rnd, player_id: str) -> None:
        if not rnd.draw_pile:
            self.reshuffle()
        rnd.drawn = rnd.draw_pile.pop()
        rnd.log.append(DRAW_EVENTS.get(player_id) or draw_event(player_id))

    def reshuffle(self, order: list[int] | None = None) -> None:
        """The discard pile except its top card becomes the draw pile.

        `order` (next card first) replays a recorded reshuffle; otherwise it is seeded."""
        rnd = self.rounds[-1]
        top = rnd.discard[-1]
        cards = rnd.discard[:-1]
        if order is None:
            order = list(cards)
            shuffle_once(self._rng(rnd.number, "reshuffle", rnd.reshuffles), order)
        elif sorted(order) != sorted(cards):
            raise IllegalMove("A reshuffle must use exactly the discard pile under its top card")
        rnd.reshuffles += 1
        rnd.discard = [top]
        rnd.draw_pile = list(reversed(order))
        rnd.moves.append({"type": "reshuffle", "draw_pile": list(order)})
        rnd.log.append(Frozen(type="reshuffle", count=len(order)))

    def apply_keep_drawn(self, player_id: str, action: KeepDrawn) -> None:
        rnd = self.rounds[-1]
        card, rnd.drawn = rnd.drawn, None
        grid = rnd.grids[player_id]
        self._replace(rnd, grid, player_id, action.row, action.col, card, "keep_drawn")

    def apply_discard_drawn(self, player_id: str, action: DiscardDrawn) -> None:
        rnd = self.rounds[-1]
        self._discard(rnd, rnd.grids[player_id], player_id, action.flip)

    def _discard(self, rnd, grid: Grid, player_id: str, at: tuple[int, int] | None) -> None:
        """The drawn card goes on the discard pile, the checked card `at` face up."""
        card, rnd.drawn = rnd.drawn, None
        rnd.discard.append(card)
        state = grid.state
        if at is None:
            rnd.moves.append({"player": player_id, "type": "draw", "keep": False, "flip": None})
            rnd.log.append(Frozen(type="discard_drawn", player=player_id, value=card, flip=None))
            self._clear(player_id)
        else:
            row, col = at
            cols = grid.cols
            i = row * cols + col
            state[i] = UP
            flip = flip_event(row, col, grid.values[i])
            rnd.moves.append(
                {"player": player_id, "type": "draw", "keep": False, "flip": [row, col]}
            )
            rnd.log.append(Frozen(type="discard_drawn", player=player_id, value=card, flip=flip))
            # _may_clear and _end_turn's usual case, written out (as in _replace).
            if DOWN not in state[col::cols] or (
                self.rules.clear_rows and DOWN not in state[i - col : i - col + cols]
            ):
                self._clear(player_id, i)
            if rnd.ender is None and DOWN in state and not self.forfeited:
                seating = rnd.seating
                rnd.turn = seating[(seating.index(player_id) + 1) % len(seating)]
                return
        self._end_turn(rnd, state, player_id)

    def apply_forfeit(self, player_id: str, action: Forfeit) -> None:
        rnd = self.rounds[-1]
        self.forfeited.append(player_id)
        move = {"player": player_id, "type": "forfeit"}
        if self.phase == ROUND_OVER:
            # Made after the round was scored: a record lists it first in the next
            # round's moves, or after the last round (record.py writes it there).
            move["after_result"] = True
        rnd.moves.append(move)
        rnd.log.append(Frozen({"type": "forfeit", "player": player_id}))
        if len(self.active()) < 2:
            # Too few left: the game ends at once and the round in play is not scored.
            if self.phase != ROUND_OVER and rnd.drawn is not None:
                # The drawn card goes back on top of the draw pile: all 150 cards stay
                # accounted for in the final state.
                rnd.draw_pile.append(rnd.drawn)
                rnd.drawn = None
            # Nobody's turn once the game is over, as after a scored last round. (Lots
            # may have chosen the starter: a record that names no turn cannot say whom.)
            rnd.turn = None
            self.phase = GAME_OVER
            return
        if self.phase == SETUP:
            self._maybe_finish_setup()
        elif self.phase == PLAY and rnd.turn is not None:
            was_turn = rnd.turn == player_id
            if was_turn and rnd.drawn is not None:
                # Nobody else saw the drawn card: it goes back on top of the draw pile.
                rnd.draw_pile.append(rnd.drawn)
                rnd.drawn = None
            if rnd.ender is not None:
                if player_id in rnd.last_turns:
                    rnd.last_turns.remove(player_id)
                if not rnd.last_turns:
                    self._end_round()
                elif was_turn:
                    rnd.turn = rnd.last_turns[0]
            elif was_turn:
                rnd.turn = self._next_after(player_id)

    # ----- helpers for moves ---------------------------------------------------------
    def _clear(self, player_id: str, at: int | None = None) -> None:
        """Clear the player's complete lines. `at`: the one cell changed since the last
        clear (clears run after every change), so without row clears only its column
        may be complete (a column's clear completes no other column)."""
        rnd = self.rounds[-1]
        grid = rnd.grids[player_id]
        clear_rows = self.rules.clear_rows
        if at is None or clear_rows:
            cleared = grid.clear_lines(clear_rows)
        else:
            cleared = grid.clear_column(at % grid.cols)
        for kind, number, values in cleared:
            rnd.discard.extend(values)
            rnd.log.append(
                Frozen(type="clear", player=player_id, line=kind, index=number, value=values[0])
            )

    def _next_after(self, player_id: str) -> str:
        seating = self.rounds[-1].seating
        start = seating.index(player_id)
        forfeited = self.forfeited
        for candidate in seating[start + 1 :]:
            if candidate not in forfeited:
                return candidate
        for candidate in seating[: start + 1]:
            if candidate not in forfeited:
                return candidate
        raise AssertionError("no active player left")

    def _end_turn(self, rnd, state: list[int], player_id: str) -> None:
        """The turn of `player_id` (their grid's `state` as it is now) ends in `rnd`."""
        if rnd.ender is None:
            if DOWN in state:
                seating = rnd.seating
                if self.forfeited:
                    rnd.turn = self._next_after(player_id)
                else:  # everyone still plays: the next seat
                    rnd.turn = seating[(seating.index(player_id) + 1) % len(seating)]
                return
            rnd.ender = player_id
            rnd.log.append(Frozen(type="ended", player=player_id))
            seating = rnd.seating
            start = seating.index(player_id)
            order = seating[start + 1 :] + seating[:start]
            rnd.last_turns = list(filterfalse(self.forfeited.__contains__, order))
        else:
            rnd.last_turns.remove(player_id)
        if not rnd.last_turns:
            self._end_round()
        else:
            rnd.turn = rnd.last_turns[0]


def _may_clear(state: list[int], cols: int, at: int, clear_rows: bool) -> bool:
    """Whether a line through `at`, the one cell changed since the last clear, may now
    be complete (clears run after every change, so no other line can be): not while
    each such line still holds a face-down card, which is what mostly happens."""
    col = at % cols
    if DOWN not in state[col::cols]:
        return True
    return clear_rows and DOWN not in state[at - col : at - col + cols]


# Moves are immutable: each one a player can make on a grid shape is made once.
_DRAW = Draw()
_DISCARD_NOTHING = DiscardDrawn(None)
_CELL_ACTIONS: dict[tuple[int, int], tuple[tuple[Action, ...], ...]] = {}


def _cell_actions(rows: int, cols: int) -> tuple[tuple[Action, ...], ...]:
    """For a grid shape: the Reveal, TakeDiscard, KeepDrawn and DiscardDrawn of each cell."""
    found = _CELL_ACTIONS.get((rows, cols))
    if found is None:
        cells = [divmod(i, cols) for i in range(rows * cols)]
        found = _CELL_ACTIONS[(rows, cols)] = (
            tuple(Reveal(r, c) for r, c in cells),
            tuple(TakeDiscard(r, c) for r, c in cells),
            tuple(KeepDrawn(r, c) for r, c in cells),
            tuple(DiscardDrawn((r, c)) for r, c in cells),
        )
    return found

"""`Game.play`: a move checked and made in one step, for bot games. A part of `Game`
(game.py), kept apart for length.

Nearly every move of a bot game (some 400 a game) is made in play by the player whose
turn it is, or is a first card turned at setup. Such a move, when it is allowed, is
made here at once: the round, the grid and the cell are read once, for the check and
for the change. Anything else (a move another player makes, one outside its phase,
one these checks do not accept) goes the way `apply` goes: `Turns._check` (the
same refusals, in the same order, with the same messages), then the move's handler."""

from __future__ import annotations

from collections.abc import Callable

from app.engine.actions import Action, DiscardDrawn, Draw, Forfeit, KeepDrawn, Reveal, TakeDiscard
from app.engine.events import DRAW_EVENTS, draw_event
from app.engine.state import DOWN, GONE, PLAY, SETUP
from app.engine.turns import Turns


class Plays:
    """`play` and its moves in turn (mixed into `Game`)."""

    def play(self, player_id: str, action: Action) -> None:
        """`apply` for callers that do not read the events (bot games): the same checks
        and changes, without copying the events out."""
        _PLAYS.get(type(action), Plays._checked)(self, player_id, action)

    def _checked(self, player_id: str, action: Action) -> None:
        self._check(player_id, action)
        HANDLERS[type(action)](self, player_id, action)

    # Each move in turn, made once these checks (what _check accepts) pass.
    def _play_draw(self, player_id: str, action: Draw) -> None:
        if self.phase == PLAY:
            rnd = self.rounds[-1]
            if rnd.turn == player_id and rnd.drawn is None and player_id not in self.forfeited:
                # _draw_card, written out (half the moves are draws).
                if not rnd.draw_pile:
                    self.reshuffle()
                rnd.drawn = rnd.draw_pile.pop()
                rnd.log.append(DRAW_EVENTS.get(player_id) or draw_event(player_id))
                return
        self._checked(player_id, action)

    def _play_take(self, player_id: str, action: TakeDiscard) -> None:
        if self.phase == PLAY:
            rnd = self.rounds[-1]
            if rnd.turn == player_id and rnd.drawn is None and player_id not in self.forfeited:
                grid = rnd.grids[player_id]
                row, col, cols = action.row, action.col, grid.cols
                on_grid = 0 <= row < grid.rows and 0 <= col < cols
                if on_grid and grid.state[row * cols + col] != GONE:
                    card = rnd.discard.pop()
                    return self._replace(rnd, grid, player_id, row, col, card)
        self._checked(player_id, action)

    def _play_keep(self, player_id: str, action: KeepDrawn) -> None:
        if self.phase == PLAY:
            rnd = self.rounds[-1]
            card = rnd.drawn
            if rnd.turn == player_id and card is not None and player_id not in self.forfeited:
                grid = rnd.grids[player_id]
                row, col, cols = action.row, action.col, grid.cols
                on_grid = 0 <= row < grid.rows and 0 <= col < cols
                if on_grid and grid.state[row * cols + col] != GONE:
                    rnd.drawn = None
                    return self._replace(rnd, grid, player_id, row, col, card, "keep_drawn")
        self._checked(player_id, action)

    def _play_reveal(self, player_id: str, action: Reveal) -> None:
        if self.phase == SETUP:
            rnd = self.rounds[-1]
            if rnd.setup_left.get(player_id, 0) > 0 and player_id not in self.forfeited:
                grid = rnd.grids[player_id]
                row, col, cols = action.row, action.col, grid.cols
                on_grid = 0 <= row < grid.rows and 0 <= col < cols
                if on_grid and grid.state[row * cols + col] == DOWN:
                    return self.apply_reveal(player_id, action)
        self._checked(player_id, action)

    def _play_discard(self, player_id: str, action: DiscardDrawn) -> None:
        if self.phase == PLAY:
            rnd = self.rounds[-1]
            if rnd.turn == player_id and rnd.drawn is not None and player_id not in self.forfeited:
                grid = rnd.grids[player_id]
                at = action.flip
                if at is None:
                    if DOWN not in grid.state:
                        return self._discard(rnd, grid, player_id, None)
                else:
                    row, col = at
                    cols = grid.cols
                    on_grid = 0 <= row < grid.rows and 0 <= col < cols
                    if on_grid and grid.state[row * cols + col] == DOWN:
                        return self._discard(rnd, grid, player_id, at)
        self._checked(player_id, action)


_PLAYS = {
    Reveal: Plays._play_reveal,
    Draw: Plays._play_draw,
    TakeDiscard: Plays._play_take,
    KeepDrawn: Plays._play_keep,
    DiscardDrawn: Plays._play_discard,
}


def move_maker(kind: type) -> Callable[[Plays, str, Action], None]:
    """What `Game.play` makes a move of type `kind` with, called as (game, player id,
    action): a caller making many moves (a bot game) looks it up once per type and
    calls it, one call fewer per move."""
    return _PLAYS.get(kind, Plays._checked)


# Each move's handler, once `_check` accepted it (apply, and play for the other moves).
HANDLERS: dict[type, Callable] = {
    Reveal: Turns.apply_reveal,
    TakeDiscard: Turns.apply_take_discard,
    Draw: Turns.apply_draw,
    KeepDrawn: Turns.apply_keep_drawn,
    DiscardDrawn: Turns.apply_discard_drawn,
    Forfeit: Turns.apply_forfeit,
}

MOVE_KINDS = tuple(HANDLERS)  # every kind of move, for move_maker

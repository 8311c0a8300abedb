"""The game state and its transitions (docs/rules.md).

A `Game` is a plain, deterministic state machine: `legal_actions(player)`,
`apply(player, action)`, `is_over`, `ranking()`. All randomness comes from the game's
seed, so a seed plus the move list reproduces a game exactly. `to_dict`/`from_dict`
round-trip the whole state through JSON.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .actions import Action, DiscardDrawn, Draw, Forfeit, KeepDrawn, Reveal, TakeDiscard
from .frozen import Frozen
from .rules import RuleSet, check_player_count
from .scoring import ender_penalised, round_scores, shared_ranks

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
            for c in range(cols):
                cells = _complete(range(c, size, cols), values, state)
                if cells is not None:
                    lines.append(("column", c, cells))
            if clear_rows:
                for r in range(rows):
                    cells = _complete(range(r * cols, r * cols + cols), values, state)
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

    def to_dict(self) -> dict:
        return {"values": self.values, "state": self.state}

    @classmethod
    def from_dict(cls, rows: int, cols: int, data: dict) -> Grid:
        return cls(rows, cols, list(data["values"]), list(data["state"]))


def _complete(line: range, values: list[int], state: list[int]) -> list[int] | None:
    """The remaining cells of a line if it clears: at least 2, all face up, all equal.
    Runs after every move, so it stops at the first face-down or different card."""
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
    return [i for i in line if state[i] != GONE]


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
        """Who played the round's first turn (a record's `starter`), None until someone
        did. Not always `starter`, whom the rules named: they may leave before playing."""
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


class Game:
    """A whole game: rounds until a total reaches the end score, or too few remain."""

    def __init__(
        self,
        players: list[Player] | list[dict],
        rules: RuleSet | None = None,
        seed: int | str = 0,
        game_id: str = "",
        *,
        deal: bool = True,
    ):
        self.rules = rules or RuleSet()
        self.players = [p if isinstance(p, Player) else Player(**p) for p in players]
        check_player_count(len(self.players))
        ids = [p.id for p in self.players]
        if len(set(ids)) != len(ids):
            raise ValueError("player ids must be unique")
        self.seed = seed
        self.id = game_id
        self.totals: dict[str, int] = {p: 0 for p in ids}
        self.forfeited: list[str] = []
        self.rounds: list[Round] = []
        self.phase = SETUP
        # reseat "game": one shuffle for the whole game, kept for every round.
        self.game_seating: list[str] | None = None
        self.hold_scoring = False
        if deal:
            self.start_next_round()

    # ----- lookups -------------------------------------------------------------------
    @property
    def round(self) -> Round:
        return self.rounds[-1]

    @property
    def is_over(self) -> bool:
        return self.phase == GAME_OVER

    def player(self, player_id: str) -> Player:
        for p in self.players:
            if p.id == player_id:
                return p
        raise KeyError(player_id)

    def name(self, player_id: str) -> str:
        return self.player(player_id).name

    def active(self) -> list[str]:
        """Players still in the game, in lobby order."""
        return [p.id for p in self.players if p.id not in self.forfeited]

    def _rng(self, *parts) -> random.Random:
        # One stream per purpose, all derived from the game's seed: no hidden RNG state
        # to store, and a record replays without it.
        return random.Random(":".join(str(p) for p in (self.seed, *parts)))

    # ----- rounds --------------------------------------------------------------------
    def start_next_round(self, *, seating=None, deck=None, starter=None) -> None:
        """Deal a new round. `seating`, `deck` and `starter` replay a record's choices;
        `starter` (who played the first turn) only settles a drawing of lots."""
        if self.rounds and self.phase != ROUND_OVER:
            raise IllegalMove("The round is still being played")
        rules = self.rules
        number = len(self.rounds) + 1
        active = self.active()
        if seating is None:
            seating = self._seating_for(number, active)
        if deck is None:
            deck = list(DECK)
            self._rng(number, "deck").shuffle(deck)
            # The deck is listed in dealing order: grids, then discard, then draw pile.
        rnd = Round(number, list(seating))
        n = rules.cells
        pos = 0
        for p in seating:
            rnd.grids[p] = Grid(rules.rows, rules.cols, list(deck[pos : pos + n]))
            pos += n
        rnd.discard = [deck[pos]]
        rnd.draw_pile = list(reversed(deck[pos + 1 :]))
        rnd.dealt = {
            "grids": {p: _rows_of(rnd.grids[p].values, rules.cols) for p in seating},
            "discard": [deck[pos]],
            "draw_pile": list(deck[pos + 1 :]),
        }
        rnd.setup_left = {p: rules.initial_flips for p in seating}
        rnd.recorded_starter = starter
        self.rounds.append(rnd)
        self.phase = SETUP
        self._maybe_finish_setup()

    def _seating_for(self, number: int, active: list[str]) -> list[str]:
        reseat = self.rules.reseat
        if reseat == "round":
            seating = list(active)
            self._rng(number, "seating").shuffle(seating)
            return seating
        if reseat == "game":
            if self.game_seating is None:
                self.game_seating = list(active)
                self._rng("seating").shuffle(self.game_seating)
            return [p for p in self.game_seating if p in active]
        return active

    def _maybe_finish_setup(self) -> None:
        rnd = self.rounds[-1]
        if any(rnd.setup_left.get(p, 0) > 0 for p in rnd.seating if p not in self.forfeited):
            return
        rnd.starter = self._choose_starter()
        rnd.turn = rnd.starter
        self.phase = PLAY

    def _choose_starter(self) -> str:
        rnd = self.rounds[-1]
        playing = [p for p in rnd.seating if p not in self.forfeited]
        if len(self.rounds) > 1:
            previous_ender = self.rounds[-2].result and self.rounds[-2].result["ender"]
            if previous_ender in playing:
                return previous_ender
        if self.rules.initial_flips == 0:
            return self._draw_lots(playing)
        sums = {p: sum(rnd.grids[p].face_up_values()) for p in playing}
        best = max(sums.values())
        tied = [p for p in playing if sums[p] == best]
        if len(tied) > 1:
            highs = {p: max(rnd.grids[p].face_up_values(), default=-99) for p in tied}
            top = max(highs.values())
            tied = [p for p in tied if highs[p] == top]
        if len(tied) > 1:
            return self._draw_lots(tied)
        return tied[0]

    def _draw_lots(self, candidates: list[str]) -> str:
        rnd = self.rounds[-1]
        first = rnd.recorded_starter
        if first is None:
            return self._rng(rnd.number, "starter").choice(candidates)
        if first in candidates:
            return first
        # A replay: the winner left before playing and the turn passed on to `first`.
        # The nearest candidate before `first` in seat order gives the same play (the
        # replay checks the rest: whoever is wrong here makes a later move illegal).
        seating = rnd.seating
        at = seating.index(first)
        for step in range(1, len(seating)):
            if seating[at - step] in candidates:
                return seating[at - step]
        raise AssertionError("no candidate in the seating")

    # ----- moves ---------------------------------------------------------------------
    def stage(self, player_id: str) -> str | None:
        """Where `player_id` is in a move now: "setup" (first flips left), "take" (their
        turn, nothing drawn), "drawn" (their turn, a card drawn), or None (no move)."""
        phase = self.phase
        if phase != SETUP and phase != PLAY or player_id in self.forfeited or not self.rounds:
            return None
        rnd = self.rounds[-1]
        if player_id not in rnd.grids:
            return None
        if phase == SETUP:
            return "setup" if rnd.setup_left.get(player_id, 0) > 0 else None
        if rnd.turn != player_id:
            return None
        return "take" if rnd.drawn is None else "drawn"

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

    def apply(self, player_id: str, action: Action) -> list[dict]:
        """Apply one move, or raise IllegalMove and change nothing.

        Returns the public events the move caused (for move logs and animations)."""
        self._check(player_id, action)
        handler = _HANDLERS[type(action)]
        log = self.rounds[-1].log if self.rounds else []
        start = len(log)
        handler(self, player_id, action)
        return self.rounds[-1].log[start:]

    def _check(self, player_id: str, action: Action) -> None:
        """Every validation happens here, before anything changes."""
        if self.phase == GAME_OVER:
            raise IllegalMove("The game is over")
        if player_id not in self.totals:
            raise IllegalMove("You are not playing in this game")
        if player_id in self.forfeited:
            raise IllegalMove("You have left this game")
        kind = type(action)
        if kind is Forfeit:
            return
        if self.phase in (ROUND_OVER, SCORING):
            raise IllegalMove("The round is over; the next one has not started yet")
        rnd = self.rounds[-1]
        grid = rnd.grids[player_id]
        if self.phase == SETUP:
            if kind is not Reveal:
                raise IllegalMove("Turn your first cards face up before play starts")
            if rnd.setup_left[player_id] <= 0:
                raise IllegalMove("You have already turned your first cards; wait for the others")
            self._check_face_down(grid, action.row, action.col)
            return
        if kind is Reveal:
            raise IllegalMove("Play has started: draw a card or take the discard")
        if rnd.turn != player_id:
            raise IllegalMove(f"It is {self.name(rnd.turn)}'s turn")
        if kind is TakeDiscard or kind is Draw:
            if rnd.drawn is not None:
                raise IllegalMove("You have drawn a card: keep it or discard it")
            if kind is TakeDiscard:
                self._check_in_grid(grid, action.row, action.col)
            return
        if rnd.drawn is None:
            raise IllegalMove("Draw a card first")
        if kind is KeepDrawn:
            self._check_in_grid(grid, action.row, action.col)
            return
        if kind is DiscardDrawn:
            if action.flip is None:
                if grid.face_down_count():
                    raise IllegalMove("Choose a face-down card to turn over")
            else:
                self._check_face_down(grid, *action.flip)
            return
        raise IllegalMove("Unknown move")

    @staticmethod
    def _check_in_grid(grid: Grid, row: int, col: int) -> None:
        if grid.state[grid.index(row, col)] == GONE:
            raise IllegalMove("That card was cleared from the grid")

    @staticmethod
    def _check_face_down(grid: Grid, row: int, col: int) -> None:
        state = grid.state[grid.index(row, col)]
        if state == UP:
            raise IllegalMove("That card is already face up")
        if state == GONE:
            raise IllegalMove("That card was cleared from the grid")

    def _reveal(self, player_id: str, action: Reveal) -> None:
        rnd = self.rounds[-1]
        grid = rnd.grids[player_id]
        i = grid.index(action.row, action.col)
        grid.state[i] = UP
        rnd.setup_left[player_id] -= 1
        rnd.moves.append(
            {"player": player_id, "type": "reveal", "row": action.row, "col": action.col}
        )
        rnd.log.append(
            Frozen(
                {
                    "type": "reveal",
                    "player": player_id,
                    "row": action.row,
                    "col": action.col,
                    "value": grid.values[i],
                }
            )
        )
        self._clear(player_id)
        self._maybe_finish_setup()

    def _take_discard(self, player_id: str, action: TakeDiscard) -> None:
        card = self.round.discard.pop()
        move = {"player": player_id, "type": "take_discard", "row": action.row, "col": action.col}
        self._replace(player_id, action.row, action.col, card, move, "take_discard")

    def _replace(self, player_id: str, row: int, col: int, card: int, move: dict, kind: str):
        """The turns that put a card into the grid: the replaced card goes face up on
        the discard pile, lines clear, the turn ends."""
        rnd = self.rounds[-1]
        old = self._place(player_id, row, col, card)
        rnd.moves.append(move)
        rnd.log.append(
            Frozen(
                {
                    "type": kind,
                    "player": player_id,
                    "row": row,
                    "col": col,
                    "value": card,
                    "replaced": old,
                }
            )
        )
        self._clear(player_id)
        self._end_turn(player_id)

    def _draw(self, player_id: str, action: Draw) -> None:
        rnd = self.rounds[-1]
        if not rnd.draw_pile:
            self.reshuffle()
        rnd.drawn = rnd.draw_pile.pop()
        rnd.log.append(Frozen({"type": "draw", "player": player_id}))

    def reshuffle(self, order: list[int] | None = None) -> None:
        """The discard pile except its top card becomes the draw pile.

        `order` (next card first) replays a recorded reshuffle; otherwise it is seeded."""
        rnd = self.rounds[-1]
        top = rnd.discard[-1]
        cards = rnd.discard[:-1]
        if order is None:
            order = list(cards)
            self._rng(rnd.number, "reshuffle", rnd.reshuffles).shuffle(order)
        elif sorted(order) != sorted(cards):
            raise IllegalMove("A reshuffle must use exactly the discard pile under its top card")
        rnd.reshuffles += 1
        rnd.discard = [top]
        rnd.draw_pile = list(reversed(order))
        rnd.moves.append({"type": "reshuffle", "draw_pile": list(order)})
        rnd.log.append(Frozen({"type": "reshuffle", "count": len(order)}))

    def _keep_drawn(self, player_id: str, action: KeepDrawn) -> None:
        rnd = self.rounds[-1]
        card, rnd.drawn = rnd.drawn, None
        move = {
            "player": player_id,
            "type": "draw",
            "keep": True,
            "row": action.row,
            "col": action.col,
        }
        self._replace(player_id, action.row, action.col, card, move, "keep_drawn")

    def _discard_drawn(self, player_id: str, action: DiscardDrawn) -> None:
        rnd = self.rounds[-1]
        card, rnd.drawn = rnd.drawn, None
        rnd.discard.append(card)
        flip = None
        if action.flip is not None:
            grid = rnd.grids[player_id]
            i = grid.index(*action.flip)
            grid.state[i] = UP
            flip = Frozen(row=action.flip[0], col=action.flip[1], value=grid.values[i])
        rnd.moves.append(
            {
                "player": player_id,
                "type": "draw",
                "keep": False,
                "flip": list(action.flip) if action.flip is not None else None,
            }
        )
        event = {"type": "discard_drawn", "player": player_id, "value": card, "flip": flip}
        rnd.log.append(Frozen(event))
        self._clear(player_id)
        self._end_turn(player_id)

    def _forfeit(self, player_id: str, action: Forfeit) -> None:
        rnd = self.rounds[-1]
        self.forfeited.append(player_id)
        move = {"player": player_id, "type": "forfeit"}
        if self.phase == ROUND_OVER:
            # Optional key: this forfeit came after the round was scored. Without it a
            # forfeit after the last turn is replayed before the scoring.
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
    def _place(self, player_id: str, row: int, col: int, card: int) -> int:
        """Put `card` face up at (row, col); the replaced card goes face up on the discard."""
        rnd = self.rounds[-1]
        grid = rnd.grids[player_id]
        i = grid.index(row, col)
        old = grid.values[i]
        grid.values[i] = card
        grid.state[i] = UP
        rnd.discard.append(old)
        return old

    def _clear(self, player_id: str) -> None:
        rnd = self.rounds[-1]
        for kind, number, values in rnd.grids[player_id].clear_lines(self.rules.clear_rows):
            rnd.discard.extend(values)
            rnd.log.append(
                Frozen(
                    {
                        "type": "clear",
                        "player": player_id,
                        "line": kind,
                        "index": number,
                        "value": values[0],
                    }
                )
            )

    def _next_after(self, player_id: str) -> str:
        seating = self.round.seating
        start = seating.index(player_id)
        for step in range(1, len(seating) + 1):
            candidate = seating[(start + step) % len(seating)]
            if candidate not in self.forfeited:
                return candidate
        raise AssertionError("no active player left")

    def _end_turn(self, player_id: str) -> None:
        rnd = self.rounds[-1]
        if rnd.ender is None:
            if rnd.grids[player_id].face_down_count() == 0:
                rnd.ender = player_id
                rnd.log.append(Frozen({"type": "ended", "player": player_id}))
                seating = rnd.seating
                start = seating.index(player_id)
                order = seating[start + 1 :] + seating[:start]
                rnd.last_turns = [p for p in order if p not in self.forfeited]
        else:
            rnd.last_turns.remove(player_id)
        if rnd.ender is not None:
            if not rnd.last_turns:
                self._end_round()
            else:
                rnd.turn = rnd.last_turns[0]
        else:
            rnd.turn = self._next_after(player_id)

    def _end_round(self) -> None:
        self.round.turn = None
        if self.hold_scoring:
            self.phase = SCORING
        else:
            self.score_round()

    def score_round(self) -> None:
        """Final reveal, clears, scores and totals; then the game ends or waits for the
        next round. Runs at once after the last turn unless `hold_scoring` is set (replays
        of records where someone left between the last turn and the scoring)."""
        rnd = self.rounds[-1]
        if self.phase not in (PLAY, SCORING) or rnd.turn is not None:
            raise IllegalMove("The round is not over")
        playing = [p for p in rnd.seating if p not in self.forfeited]
        for p in playing:
            grid = rnd.grids[p]
            flipped = [i for i, s in enumerate(grid.state) if s == DOWN]
            for i in flipped:
                grid.state[i] = UP
            self._clear(p)
        raw = {p: rnd.grids[p].score() for p in playing}
        ender = rnd.ender
        scores = round_scores(raw, ender, self.rules.penalty)
        penalised = ender_penalised(raw, ender)
        for p in playing:
            self.totals[p] += scores[p]
        rnd.result = {
            "ender": ender,
            "raw": raw,
            "scores": scores,
            "totals": {p: self.totals[p] for p in playing},
        }
        rnd.log.append(Frozen({"type": "round_end", "ender": ender, "penalised": penalised}))
        if any(self.totals[p] >= self.rules.end_score for p in playing):
            self.phase = GAME_OVER
        else:
            self.phase = ROUND_OVER

    # ----- results -------------------------------------------------------------------
    def ranking(self) -> list[dict]:
        """Best first; equal totals share a rank; forfeited players share the last rank,
        the one who left last listed first."""
        playing = self.active()
        ranking = shared_ranks(self.totals, playing)  # ties in lobby order
        last = len(playing) + 1
        for p in reversed(self.forfeited):
            ranking.append({"player": p, "rank": last, "total": self.totals[p]})
        return ranking

    def penalised(self, rnd: Round | None = None) -> bool:
        rnd = rnd or self.round
        result = rnd.result
        return (
            bool(result)
            and result["ender"] in result["scores"]
            and (result["scores"][result["ender"]] != result["raw"][result["ender"]])
        )

    # ----- serialisation -------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "seed": self.seed,
            "rules": self.rules.to_dict(),
            "players": [p.to_dict() for p in self.players],
            "totals": self.totals,
            "forfeited": self.forfeited,
            "phase": self.phase,
            "game_seating": self.game_seating,
            "rounds": [r.to_dict() for r in self.rounds],
        }

    @classmethod
    def from_dict(cls, data: dict) -> Game:
        rules = RuleSet.from_dict(data["rules"])
        game = cls(data["players"], rules, data["seed"], data["id"], deal=False)
        game.totals = dict(data["totals"])
        game.forfeited = list(data["forfeited"])
        game.phase = data["phase"]
        game.game_seating = data["game_seating"]
        game.rounds = [Round.from_dict(rules, r) for r in data["rounds"]]
        return game


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


_HANDLERS = {
    Reveal: Game._reveal,
    TakeDiscard: Game._take_discard,
    Draw: Game._draw,
    KeepDrawn: Game._keep_drawn,
    DiscardDrawn: Game._discard_drawn,
    Forfeit: Game._forfeit,
}


def _rows_of(values: list[int], cols: int) -> list[list[int]]:
    return [values[i : i + cols] for i in range(0, len(values), cols)]

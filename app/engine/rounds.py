"""A game's rounds: dealing, who starts, the end of a round and its scoring. A part of
`Game` (game.py), kept apart for length."""

from __future__ import annotations

from app.engine.frozen import Frozen
from app.engine.scoring import ender_penalised, round_scores
from app.engine.state import (
    DECK,
    DOWN,
    GAME_OVER,
    GONE,
    PLAY,
    ROUND_OVER,
    SCORING,
    SETUP,
    UP,
    Grid,
    IllegalMove,
    Round,
    shuffle_once,
)


class Rounds:
    """Dealing and ending rounds (mixed into `Game`)."""

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
            shuffle_once(self._rng(number, "deck"), deck)
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
        left, forfeited = rnd.setup_left, self.forfeited
        for p in rnd.seating:  # (a loop: runs after every first flip)
            if left.get(p, 0) > 0 and p not in forfeited:
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
            grid.state[:] = map(_TURNED_OVER.__getitem__, grid.state)
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


# A cell's state once every card is turned over, by its state now.
_TURNED_OVER = {DOWN: UP, UP: UP, GONE: GONE}


def _rows_of(values: list[int], cols: int) -> list[list[int]]:
    return [values[i : i + cols] for i in range(0, len(values), cols)]

"""The expert bot: the strong bot's expected-value play, and on its last turn after
another player ended the round, the chance to have the ender penalised.

Like every bot it decides from its view alone (never a face-down card, the draw pile's
order or another player's drawn card). On top of the strong bot's valuation of each
legal action (change of my expected round score, column potential, the card left to the
next player, the odds of the ender's penalty) it values, on its last turn, each option's
chance of leaving my score no higher than the ender's (whose cards are all face up), which
has them penalised when nobody else does it: worth that chance times the penalty, shared
among my opponents.

Measured (README, "Figures") it plays at the strong bot's level, short of its targets:
the tuning tried (turning cards more readily, weighing the game's totals when a round
ends the game) did not beat the strong bot either.
"""

from __future__ import annotations

import math
import random

from .actions import Action
from .bots import HIDDEN, STRONG, _estimate, _penalise, _phi, _Strong, play_mind

EXPERT = {
    **STRONG,
    "last": 1.0,  # weight of the ender's penalty I can cause on my last turn
}


class _Expert(_Strong):
    def __init__(self, view: dict, rng: random.Random):
        self.me = view["me"]
        self.ender_score = None  # set before the strong bot's reading values flips
        super().__init__(view, rng, EXPERT)
        ender = view["round"]["ender"]
        if ender is not None and ender != self.me and ender in self.grids:
            # The ender turned every card: their score is known, unless a clear comes.
            score = sum(v for v in self.grids[ender] if v > HIDDEN)
            if score > 0:
                self.ender_score = score
                self.others_miss = 1.0
                for p in self.opponents:
                    if p != ender:
                        self.others_miss *= 1.0 - self.at_most(p, score)
                self._flip_choice = self._best_flip()  # now with the ender's penalty

    def at_most(self, player: str, score: float) -> float:
        """Chance that `player` ends the round with at most `score`."""
        cells = self.grids[player]
        sd = math.sqrt(cells.count(HIDDEN)) * self.know.sd + 0.5
        return _phi((score + 0.5 - _estimate(cells, self.mean)) / sd)

    def ender_penalty(self, mu: float, hidden: int) -> float:
        """On my last turn after someone else ended: the ender is penalised if my score
        is no higher. Worth that chance (when nobody else does it) times the penalty."""
        score = self.ender_score
        sd = math.sqrt(hidden) * self.know.sd + 0.5
        chance = _phi((score + 0.5 - mu) / sd)
        weight = self.p["last"] / max(1, len(self.opponents))
        return -weight * self.others_miss * chance * (_penalise(self.rules, score) - score)

    def keep_value(self, i: int, x: int) -> float:
        value = super().keep_value(i, x)
        if self.ender_score is None:
            return value
        hidden = len(self.hidden) - (self.cells[i] == HIDDEN)
        return value + self.ender_penalty(self.current + self.place(i, x), hidden)

    def flip(self, i: int) -> float:
        value = super().flip(i)
        if self.ender_score is None:
            return value
        return value + self.ender_penalty(self.current + value, len(self.hidden))


def expert_bot(view: dict, rng: random.Random) -> Action:
    return play_mind(_Expert, view, rng)

"""The expert bot: the strong bot's expected-value play, tuned, and aware of the game.

Like every bot it decides from its view alone (never a face-down card, the draw pile's
order or another player's drawn card). On top of the strong bot's valuation of each
legal action (change of my expected round score, column potential, the card left to the
next player, the odds of the ender's penalty) it
- turns cards over more readily (rounds it ends early, before the others' grids improve,
  pay more than the information a face-down card keeps), and
- weighs ending a round by the game: when this round will likely end the game (a total
  would pass the end score), ending it is worth the chance that I then have the lowest
  total, not only my round score.
"""

from __future__ import annotations

import math
import random

from .actions import Action
from .bots import HIDDEN, STRONG, _estimate, _phi, _spread_reveal, _Strong, moves

EXPERT = {
    **STRONG,
    "flip_bonus": 1.5,  # worth of turning a card: progress towards ending first
    "game": 12.0,  # points a near-certain game win is worth when ending the last round
}


class _Expert(_Strong):
    def __init__(self, view: dict, rng: random.Random):
        # Set before the strong bot's reading of the view, which already values ends.
        self.me = view["me"]
        self.end_score = view["rules"]["end_score"]
        totals = {p["id"]: p["total"] for p in view["players"] if not p["forfeited"]}
        # Hidden running totals (a rule option): play for the round alone.
        self.totals = None if None in totals.values() else totals
        super().__init__(view, rng, EXPERT)

    def end_value(self, score: float) -> float:
        value = super().end_value(score)
        if self.totals is None or self.stalling:
            return value
        return value - self.p["game"] * self.game_win_chance(score)

    def game_win_chance(self, score: float) -> float:
        """If I end the round with `score` and that ends the game: the chance that my
        total is then the lowest (0 when the game goes on)."""
        totals = self.totals
        mine = totals[self.me] + score
        sd_card = self.know.sd
        others = []
        for p in self.opponents:
            cells = self.grids[p]
            mu = _estimate(cells, self.mean) - self.p["opp_turn"]
            sd = math.sqrt(cells.count(HIDDEN) * sd_card * sd_card + 4.0)
            others.append((totals[p] + mu, sd))
        if max([mine] + [t for t, _ in others]) < self.end_score:
            return 0.0
        chance = 1.0
        for total, sd in others:
            chance *= _phi((total - mine - 0.5) / sd)
        return chance


def expert_bot(view: dict, rng: random.Random) -> Action:
    kind = moves(view).stage
    if kind is None:
        raise ValueError("the viewer has no move to make")
    if kind == "setup":
        return _spread_reveal(view, rng)
    mind = _Expert(view, rng)
    if kind == "take":
        return mind.take_or_draw()
    return mind.reply(view["round"]["drawn"])[1]

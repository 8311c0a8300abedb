"""The expert bot: the strong bot's play, checked by looking ahead near a round's end.

Like every bot it decides from its view alone (never a face-down card, the draw pile's
order or another player's drawn card). Its mind is the strong bot's expected-value play
with four constants tuned for it (EXPERT: it turns cards sooner, ends rounds only when
clearly lowest, against strong bots alone as readily as they do, and does not keep cards
off the discard pile for the next player's sake), plus, on its last turn after another
player ended the round, the chance to have the ender penalised (the ender's cards are all
face up, so their score is known). Before its last turn, a move's change of my expected
score is weighed (EXPERT["fitted"]) with the change of my grid's worth by a table fitted
on its own games (columns.py: a high card is likely to be replaced, a pair may clear),
which the hand-made values do not know.

Once someone has at most LOOK["near"] face-down cards (or the round was ended), it looks
ahead (foresight.py): a few options (the strong mind's move, its best cells for the card,
drawing, turning a card) are each played out to the round's end (lookahead.py) on the
same guesses at the cards nobody has seen, every player then playing as the greedy bot
does.
An option is valued by my chance to win the game once the round is scored (from the
totals, when they are shown; else my score less my opponents' mean). It plays another
option than the strong mind's only when that did better on the same guesses by more
than two standard errors: picking the best of a few noisy averages, measured, lost to
the strong bot. Every rule option is covered by the fast model (columns, rows, every
penalty, any grid); the look-ahead is skipped, keeping the strong mind's move, when
what is seen cannot be a deck. Once a round is stalling (as for every bot: far longer
than usual) each of its turns turns one of its face-down cards, so that a table of
experts that all wait still ends the round. Measured figures: docs/figures.md.
"""

from __future__ import annotations

import math
import random

from app.bots import columns

# LOOK: the look-ahead's settings, read here beside EXPERT (screens change both).
from app.bots.foresight import LOOK as LOOK
from app.bots.foresight import Lookahead, as_option
from app.bots.reading import (
    HIDDEN,
    estimate,
    make_action,
    moves,
    opponents_of,
    penalise,
    spread_reveal,
)
from app.bots.strong import STRONG, Strong, phi
from app.engine.actions import Action

# The strong bot's constants, four of them tuned for the expert by screens of 400 games
# against three greedy bots on fixed seeds (common random numbers; docs/figures.md, "Engine and
# bots"): turning a card is worth more (a mid card is discarded rather than kept on a
# face-down cell), opponents gain more on a last turn and ending is worth less (it ends
# rounds only when clearly lowest), and the card left on the discard pile is not weighed
# by what the next player gains (blocking cost more points than it denied). flip_bonus
# 2.2 (was 1.5): 1.5 points a game better against three greedy on fresh seeds. fitted
# 0.75 (was 0.3, chosen with the look-ahead off): with the look-ahead on, as played, 0.6
# and 0.75 beat 0.3 against greedy and strong bots alike, 0.75 more against strong, 0.9
# less; the table alone (1.0) loses.
EXPERT = {
    **STRONG,
    "flip_bonus": 2.2,
    "end_edge": -1.5,
    "opp_turn": 4.0,
    "block": 0.0,
    "last": 1.0,  # weight of the ender's penalty I can cause on my last turn
    "fitted": 0.75,  # weight of the fitted worth of my grid (columns.py) against the hand-made
}


# Against strong bots only, ending a round I am likely lowest in is worth what the strong
# bot itself gives it: they end rounds sooner than greedy bots, so waiting for a surer end
# costs more (1.5 against -1.5 gained points against three strong on every fresh screen,
# and lost points against three greedy; docs/figures.md, "Refits and ending rounds against
# strong bots, 2026-12-04").
AGAINST_STRONG = {"end_edge": 1.5}


def _constants(view: dict) -> dict:
    """EXPERT, with AGAINST_STRONG when every opponent is a strong bot (the table shows
    each bot's level, so a person playing knows it too)."""
    opponents = set(opponents_of(view))
    levels = {p["bot"] for p in view["players"] if p["id"] in opponents}
    return {**EXPERT, **AGAINST_STRONG} if levels == {"strong"} else EXPERT


class Expert(Strong):
    def __init__(self, view: dict, rng: random.Random):
        self.me = view["me"]
        self.ender_score = None  # set before the strong bot's reading values flips
        constants = _constants(view)
        self.worth = columns.worth_for(view, constants["fitted"])  # None: hand-made alone
        super().__init__(view, rng, constants)
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
        return phi((score + 0.5 - estimate(cells, self.mean)) / sd)

    def ender_penalty(self, mu: float, hidden: int) -> float:
        """On my last turn after someone else ended: the ender is penalised if my score
        is no higher. Worth that chance (when nobody else does it) times the penalty."""
        score = self.ender_score
        sd = math.sqrt(hidden) * self.know.sd + 0.5
        chance = phi((score + 0.5 - mu) / sd)
        weight = self.p["last"] / max(1, len(self.opponents))
        return -weight * self.others_miss * chance * (penalise(self.rules, score) - score)

    def keep_value(self, i: int, x: int) -> float:
        value = super().keep_value(i, x)
        if self.worth is not None and self.ends(i):
            return value + self._to_worth()
        if self.ender_score is None:
            return value
        hidden = len(self.hidden) - (self.cells[i] == HIDDEN)
        return value + self.ender_penalty(self.current + self.place(i, x), hidden)

    def flip(self, i: int) -> float:
        value = super().flip(i)
        if self.worth is not None:
            cells, worth = self.cells, self.worth
            turned = sum(p * worth(_with(cells, i, v)) for v, p in self.know.probs.items())
            return self._weigh(value, turned - worth(cells))
        if self.ender_score is None:
            return value
        return value + self.ender_penalty(self.current + value, len(self.hidden))

    # -- the fitted worth of my grid (columns.py), weighed against the hand-made values
    def place(self, i: int, x: int) -> float:
        value = super().place(i, x)
        if self.worth is None:
            return value
        cells, worth = self.cells, self.worth
        return self._weigh(value, worth(_with(cells, i, x)) - worth(cells))

    def _weigh(self, hand: float, fitted: float) -> float:
        w = self.p["fitted"]
        return w * fitted + (1.0 - w) * hand

    def _to_worth(self) -> float:
        """An ending move is valued against my expected score as it stands: with the
        fitted worth, that is partly the grid's worth, not the plain sum."""
        return self.p["fitted"] * (self.current - self.worth(self.cells))

    def _best_flip(self) -> tuple[float, int] | None:
        best = super()._best_flip()
        if best is not None and self.worth is not None and self.ends(best[1]):
            return best[0] + self._to_worth(), best[1]
        return best


def _with(cells: tuple, i: int, x: int) -> tuple:
    return (*cells[:i], x, *cells[i + 1 :])


def expert_bot(view: dict, rng: random.Random) -> Action:
    kind = moves(view).stage
    if kind is None:
        raise ValueError("the viewer has no move to make")
    if kind == "setup":
        return spread_reveal(view, rng)
    mind = Expert(view, rng)
    chosen = mind.take_or_draw() if kind == "take" else mind.reply(view["round"]["drawn"])[1]
    look = Lookahead.of(view, mind, kind)
    if look is not None:
        chosen = look.best(chosen, rng)
    if mind.stalling and not mind.last_turn and mind.hidden:
        return _hurried(mind, kind, chosen)
    return chosen


def _hurried(mind: Expert, kind: str, chosen: Action) -> Action:
    """A round gone on far too long: every move of mine turns one of my face-down cards,
    so that the round ends within a dozen of my turns. Valuing alone does not end it:
    a table of experts can pass low cards round for ever, each taking the discard."""
    cols = mind.cols
    i = as_option(chosen, cols)[1]
    if i in mind.hidden:  # taken or kept onto a face-down cell, or a card turned
        return chosen
    if kind == "take":
        return make_action("draw", None, cols)
    x = mind.rnd["drawn"]
    value, i = min((mind.keep_value(i, x), i) for i in mind.hidden)
    flip = mind._flip_choice
    if flip is not None and flip[0] < value:
        return make_action("discard_drawn", flip[1], cols)
    return make_action("keep_drawn", i, cols)

"""Bots: functions of what one player may see, never of the game itself.

A bot receives `view(game, player)` (a JSON-able dict, see view.py) and a
`random.Random`, and returns one legal `Action`. It never sees face-down values, the
draw pile's order or another player's drawn card, because the view does not hold them.
A bot in SIGHTED also plays on a `Sight` (sight.py): the same public information read
in place from the game, for bot games without a view per change.
What they share (reading a view) is in reading.py; this module keeps the registry.

- `random`: any legal move (first a kind of move at random, then a position).
- `greedy` (greedy.py): the best single move for its own grid, valuing an unknown card at the
  deck's mean; avoids ending a round it would likely be penalised for.
- `expert` (expert.py): the strong bot's play with constants tuned for it, checked near a
  round's end by playing the round out on guesses at the hidden cards (lookahead.py).
- `strong` (strong.py): counts cards (every face-up card and the discard pile), weighs drawing
  against the discard by the expected best reply, plans columns, keeps cards the next
  player needs off the discard pile, and ends a round only when that likely pays.
"""

from __future__ import annotations

import random

from app.bots.expert import expert_bot
from app.bots.greedy import greedy_bot, greedy_play
from app.bots.reading import Bot, moves
from app.bots.strong import strong_bot
from app.engine.actions import Action, DiscardDrawn, KeepDrawn


def random_bot(view: dict, rng: random.Random) -> Action:
    """A legal move: first the kind of move at random, then where."""
    legal = moves(view)
    kind = legal.stage
    if kind is None:
        raise ValueError("the viewer has no move to make")
    actions = legal.actions
    if kind == "setup":
        return rng.choice(actions)
    if kind == "take":
        return actions[0] if len(actions) == 1 or rng.random() < 0.5 else rng.choice(actions[1:])
    keeps = [m for m in actions if isinstance(m, KeepDrawn)]
    discards = [m for m in actions if isinstance(m, DiscardDrawn)]
    return rng.choice(keeps if rng.random() < 0.5 else discards)


BOTS: dict[str, Bot] = {
    "random": random_bot,
    "greedy": greedy_bot,
    "strong": strong_bot,
    "expert": expert_bot,
}

# Bots that also play on a Sight (sight.py): the player's public information read in
# place, without a fresh view per change. Each makes the same move as on a view.
SIGHTED = {"greedy": greedy_play}


def choose(name: str, view: dict, rng: random.Random) -> Action:
    """The move bot `name` makes on `view`. Raises KeyError for an unknown bot and
    ValueError when the viewer has no move to make."""
    return BOTS[name](view, rng)

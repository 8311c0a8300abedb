"""The expert's look-ahead choice: near a round's end, a few options (the strong mind's
move, its best cells for the card, drawing, turning a card) are each played out to the
round's end (lookahead.py) on the same guesses at the cards nobody has seen, and another
option than the strong mind's is played only when it did clearly better (expert.py)."""

from __future__ import annotations

import math
import random

from app.bots.lookahead import (
    Deal,
    Table,
    deal,
    draw,
    end_turn,
    place,
    play_out,
    turn_up,
    unseen_cards,
)
from app.bots.reading import HIDDEN, make_action
from app.bots.strong import phi

LOOK = {
    "on": True,  # False: the strong mind's move only (cheap screens of the mind's constants)
    "near": 1,  # look ahead once someone has at most this many face-down cards
    "mine": -1,  # or once I have at most this many
    "turns": 120,  # turns played out at most (then every card is turned and scored)
    "samples": 40,  # guesses at the hidden cards per decision (16 won 216 of 400, 40: 241)
    "places": 3,  # cells tried for a card I may keep (the strong mind's best ones)
    "versus": 1.0,  # weight of my opponents' mean round score against mine
    "game": True,  # value a round by my chance to win the game after it (if totals shown)
    "growth": 25.0,  # points the highest total gains per round
    "spread": 12.0,  # spread of the difference of two players' round scores
    "edge": 2.0,  # points per round I expect to gain on an opponent
    "sure": 2.0,  # standard errors by which another option must beat the strong mind's
}


def as_option(action, cols: int) -> tuple[str, int | None]:
    kind = type(action).__name__
    if kind == "Draw":
        return "draw", None
    if kind == "DiscardDrawn":
        flip = action.flip
        return "discard_drawn", None if flip is None else flip[0] * cols + flip[1]
    name = {"TakeDiscard": "take_discard", "KeepDrawn": "keep_drawn"}[kind]
    return name, action.row * cols + action.col


class Lookahead:
    """One decision near a round's end: a few options (the strong mind's best ones),
    each played out to the round's end on the same guesses at the hidden cards; the
    option with the best average of my score less my opponents' mean wins."""

    def __init__(self, view: dict, mind, kind: str, active: list[str], unseen: list[int]):
        self.look = LOOK
        rnd = view["round"]
        self.mind = mind
        self.kind = kind
        self.cols = view["rules"]["cols"]
        self.table = Table(view["rules"], active, view["me"])
        self.grids = [mind.grids[p] for p in active]
        self.unseen = unseen
        self.draw_count = rnd["draw_count"]
        self.pile = rnd["discard_pile"]
        self.drawn = rnd["drawn"]
        self.ender = active.index(rnd["ender"]) if rnd["ender"] in active else None
        self.last = [active.index(p) for p in rnd["last_turns"] if p in active]
        self._replies: dict[int, tuple[str, int | None]] = {}
        # The game's totals (None when hidden): the round is valued by my chance to win
        # the game after it, which weighs a risky round by what it can cost.
        self.totals = None
        self.end_score = view["rules"]["end_score"]
        totals = {p["id"]: p["total"] for p in view["players"]}
        if LOOK["game"] and all(totals.get(p) is not None for p in active):
            self.totals = [totals[p] for p in active]

    def win_chance(self, result: list[float]) -> float:
        """My chance to win the game once this round scores `result`: certain when the
        round ends the game; else each opponent's chance to stay above me over the
        rounds left (a normal spread per round), as if independent."""
        me = self.table.me
        new = [t + r for t, r in zip(self.totals, result, strict=True)]
        mine = new[me]
        top = max(new)
        if top >= self.end_score:
            return 1.0 if all(mine <= t for t in new) else 0.0
        look = self.look
        rounds = max(1.0, (self.end_score - top) / look["growth"])
        spread = look["spread"] * math.sqrt(rounds)
        chance = 1.0
        for q, t in enumerate(new):
            if q != me:
                chance *= phi((t - mine + look["edge"] * rounds) / spread)
        return chance

    @classmethod
    def of(cls, view: dict, mind, kind: str) -> Lookahead | None:
        """The look-ahead for this decision, or None when it does not pay (the round is
        far from its end) or cannot be made (what is seen is not a deck)."""
        rnd = view["round"]
        gone = {p["id"] for p in view["players"] if p["forfeited"]}
        active = [p for p in rnd["seating"] if p not in gone]
        if not LOOK["on"] or view["me"] not in active or len(active) < 2:
            return None
        fewest = min(mind.grids[p].count(HIDDEN) for p in active)
        mine = mind.grids[view["me"]].count(HIDDEN)
        if rnd["ender"] is None and fewest > LOOK["near"] and mine > LOOK["mine"]:
            return None
        unseen = unseen_cards(mind.grids, rnd["discard_pile"], rnd["drawn"])
        needed = sum(mind.grids[p].count(HIDDEN) for p in active) + rnd["draw_count"]
        if unseen is None or len(unseen) < needed:
            return None
        return cls(view, mind, kind, active, unseen)

    def options(self, chosen) -> list[tuple[str, int | None]]:
        mind, places = self.mind, self.look["places"]
        found = [as_option(chosen, self.cols)]
        if self.kind == "take":
            top = mind.rnd["discard_top"]
            best = sorted(mind.live, key=lambda i: mind.keep_value(i, top))[:places]
            found += [("take_discard", i) for i in best] + [("draw", None)]
        else:
            x = self.drawn
            best = sorted(mind.live, key=lambda i: mind.keep_value(i, x))[:places]
            found += [("keep_drawn", i) for i in best]
            hidden = mind.hidden
            if not hidden:
                found.append(("discard_drawn", None))
            elif len(hidden) <= 2:
                found += [("discard_drawn", i) for i in hidden]
            elif mind._flip_choice is not None:
                found.append(("discard_drawn", mind._flip_choice[1]))
        unique = []
        for option in found:
            if option not in unique:
                unique.append(option)
        return unique

    def reply(self, x: int) -> tuple[str, int | None]:
        """What I do with a drawn `x` (the strong mind's choice)."""
        found = self._replies.get(x)
        if found is None:
            found = self._replies[x] = as_option(self.mind.reply(x)[1], self.cols)
        return found

    def apply(self, d: Deal, option: tuple[str, int | None]) -> None:
        table, me = self.table, self.table.me
        kind, i = option
        if kind == "take_discard":
            place(table, d, me, i, d.discard.pop())
            return
        if kind == "draw":
            x = draw(d)
            kind, i = self.reply(x)
        else:
            x = self.drawn
        if kind == "keep_drawn":
            place(table, d, me, i, x)
        else:
            d.discard.append(x)
            if i is not None:
                turn_up(table, d, me, i)

    def best(self, chosen, rng: random.Random):
        options = self.options(chosen)
        if len(options) == 1:
            return chosen
        table, me = self.table, self.table.me
        # values[k][s]: option k's outcome on guess s (lower is better)
        values: list[list[float]] = [[] for _ in options]
        weight = self.look["versus"] / (len(self.grids) - 1)
        # Rounds of more players take longer to play out: fewer guesses (the budget).
        samples = max(6, self.look["samples"] * 4 // max(4, len(self.grids)))
        for _ in range(samples):
            seed = rng.getrandbits(32)
            start = deal(
                table,
                self.grids,
                self.unseen,
                self.draw_count,
                self.pile,
                self.ender,
                self.last,
                random.Random(seed),
            )
            for k, option in enumerate(options):
                d = start.copy(random.Random(seed + 1))
                self.apply(d, option)
                result = play_out(table, d, end_turn(table, d, me), self.look["turns"])
                if self.totals is not None:
                    values[k].append(-self.win_chance(result))
                else:
                    mine = result[me]
                    values[k].append(mine - weight * (sum(result) - mine))
        k = self.clearly_better(values)
        if k == 0:
            return chosen
        return make_action(options[k][0], options[k][1], self.cols)

    def clearly_better(self, values: list[list[float]]) -> int:
        """The option to play: the strong mind's (0) unless another did better on the
        same guesses by more than `sure` standard errors (a few dozen guesses are
        noisy; picking the best of noisy estimates would often pick noise)."""
        best, best_mean = 0, 0.0
        n = len(values[0])
        if n < 2:
            return 0
        for k in range(1, len(values)):
            diffs = [b - a for a, b in zip(values[0], values[k], strict=True)]
            mean = sum(diffs) / n
            var = sum((x - mean) ** 2 for x in diffs) / (n - 1)
            if mean < best_mean and mean < -self.look["sure"] * math.sqrt(var / n):
                best, best_mean = k, mean
        return best

"""The strong bot: counts cards (every face-up card and the discard pile), weighs
drawing against the discard by the expected best reply, plans columns, keeps cards the
next player needs off the discard pile, and ends a round only when that likely pays.
`play_mind` drives it and the expert (expert.py), which differ only in their mind."""

from __future__ import annotations

import math
import random

from app.bots.greedy import best_place
from app.bots.reading import (
    CLEARED,
    DECK_COUNTS,
    HIDDEN,
    clear_bonus,
    estimate,
    flat_cells,
    grid_lines,
    is_stalling,
    make_action,
    moves,
    next_player,
    opponents_of,
    penalise,
    spread_reveal,
)
from app.engine.actions import Action
from app.engine.state import DECK

STRONG = {
    "flip_bonus": 0.6,  # worth of turning a card: information and progress
    "block": 0.5,  # weight of the next player's gain from the card I leave on top
    "block_base": 2.0,  # what the next player gains anyway by drawing
    "end_edge": 1.5,  # worth of ending a round I am likely to win outright
    "potential": 0.7,  # weight of a column one matching card away from clearing
    "opp_turn": 2.0,  # what an opponent gains on a last turn
    "looks": 1.5,  # cards I may use per turn (the discard, or a draw)
}


class _Knowledge:
    """What the viewer knows this turn: the cards not seen yet (in the draw pile or face
    down anywhere), their mean and spread. Seen: every face-up card, the whole discard
    pile and my drawn card."""

    __slots__ = ("counts", "unseen", "mean", "sd", "probs")

    def __init__(self, view: dict, grids: dict[str, list[int]]):
        counts = dict(DECK_COUNTS)
        rnd = view["round"]
        for cells in grids.values():
            for v in cells:
                if v > HIDDEN:
                    counts[v] -= 1
        pile = rnd.get("discard_pile")
        if pile is None:
            pile = [rnd["discard_top"]] if rnd["discard_top"] is not None else []
        for v in pile:
            counts[v] -= 1
        if rnd["drawn"] is not None:
            counts[rnd["drawn"]] -= 1
        unseen = sum(c for c in counts.values() if c > 0)
        if unseen <= 0:  # cannot happen with a full deck; stay safe anyway
            counts, unseen = dict(DECK_COUNTS), len(DECK)
        self.counts = counts
        self.unseen = unseen
        self.probs = {v: c / unseen for v, c in counts.items() if c > 0}
        self.mean = sum(v * p for v, p in self.probs.items())
        var = sum((v - self.mean) ** 2 * p for v, p in self.probs.items())
        self.sd = math.sqrt(var)


def phi(z: float) -> float:
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


class Strong:
    """One decision of the strong bot. Every option is valued as the change of my
    expected round score (lower is better) plus strategic terms: column potential, the
    card left to the next player, and the odds of the penalty when ending the round."""

    def __init__(self, view: dict, rng: random.Random, params: dict | None = None):
        self.p = params or STRONG
        self.rng = rng
        rules = view["rules"]
        self.rules = rules
        self.cols = cols = rules["cols"]
        self.lines = grid_lines(rules["rows"], cols, rules["clear_rows"])
        rnd = view["round"]
        self.rnd = rnd
        self.grids = {p: flat_cells(g) for p, g in rnd["grids"].items()}
        self.cells = cells = self.grids[view["me"]]
        self.know = _Knowledge(view, self.grids)
        self.mean = self.know.mean
        self.opponents = opponents_of(view)
        self.hidden = [i for i, v in enumerate(cells) if v == HIDDEN]
        # The cells a card may replace: stated by the legal actions (a kept draw now, or
        # the taken discard now and a kept draw after drawing: the same cells).
        legal = moves(view)
        self.live = legal.of("keep_drawn") or legal.of("take_discard")
        self.last_turn = rnd["ender"] is not None
        self.stalling = is_stalling(rnd)
        # Turns left in this round, roughly: the fewest hidden cards at the table.
        fewest = min(
            [sum(1 for v in self.grids[p] if v == HIDDEN) for p in self.opponents]
            + [len(self.hidden)]
        )
        self.horizon = 0.0 if self.last_turn else 1.0 + 1.5 * fewest
        self.current = estimate(cells, self.mean)
        self.up_values = {v for v in cells if v > HIDDEN}
        # Column potential: for each cell, the other live cards of its column.
        self.chance = {}
        if self.horizon > 0:
            know = self.know
            for v in range(1, 13):
                left = know.counts[v]
                if left > 0:
                    self.chance[v] = 1.0 - (1.0 - left / know.unseen) ** (
                        self.p["looks"] * self.horizon
                    )
        self.others = []
        for i in range(len(cells)):
            column = self.lines[i][0]
            self.others.append(tuple(cells[j] for j in column if j != i and cells[j] != CLEARED))
        self.pot_before = [
            self._potential([cells[j] for j in self.lines[c][0] if cells[j] != CLEARED])
            for c in range(cols)
        ]
        nxt = next_player(view)
        self.next_cells = self.grids[nxt] if nxt is not None else None
        if self.next_cells is not None:
            self.next_live = [i for i, v in enumerate(self.next_cells) if v != CLEARED]
        self._blocks: dict[int, float] = {}
        self._flip_choice = self._best_flip()

    def block(self, top: int) -> float:
        """Cost of leaving `top` on the discard pile: part of what the next player would
        gain by taking it, beyond what drawing gives anyway."""
        found = self._blocks.get(top)
        if found is None:
            found = 0.0
            if self.next_cells is not None:
                gain = best_place(self.next_cells, self.next_live, top, self.lines, self.mean)[1]
                extra = gain - self.p["block_base"]
                if extra > 0:
                    found = self.p["block"] * extra
            self._blocks[top] = found
        return found

    # -- my grid -------------------------------------------------------------------
    def _potential(self, live: list[int]) -> float:
        """Expected saving from a column (its live cards) that one more matching card
        would clear: the chance such a card turns up in time, times what it clears."""
        n = len(live)
        if n < 2 or not self.chance:
            return 0.0
        best = 0.0
        chance = self.chance
        for v in set(live):
            if v > 0 and v in chance and live.count(v) == n - 1:
                best = max(best, chance[v] * n * v)
        return self.p["potential"] * best

    def _potential_after(self, i: int, x: int) -> float:
        """Column potential once a face-up `x` lands at cell `i` (fast paths for the
        2- and 3-card columns every grid has)."""
        chance = self.chance
        if not chance:
            return 0.0
        others = self.others[i]
        if len(others) == 2:
            a, b = others
            if a == b:
                if a == x or a not in chance:
                    return 0.0  # cleared, or nothing worth completing
                return self.p["potential"] * chance[a] * 3 * a
            if x in chance and x in (a, b):
                return self.p["potential"] * chance[x] * 3 * x
            return 0.0
        if len(others) == 1:
            a = others[0]
            if a == x:
                return 0.0
            best = chance[a] * 2 * a if a in chance else 0.0
            if x in chance:
                best = max(best, chance[x] * 2 * x)
            return self.p["potential"] * best
        return self._potential([*others, x])

    def place(self, i: int, x: int) -> float:
        """Change of my expected score if a face-up `x` replaces cell `i`."""
        cells = self.cells
        old = cells[i]
        delta = x - (self.mean if old == HIDDEN else old)
        if x in self.up_values:
            delta -= clear_bonus(cells, i, x, self.lines[i])
        if self.chance:
            delta -= self._potential_after(i, x) - self.pot_before[i % self.cols]
        return delta

    def flip(self, i: int) -> float:
        """Change of my expected score from turning the hidden cell `i`: the chance of
        clearing a line, plus what knowing the card is worth."""
        cells = self.cells
        delta = 0.0
        probs = self.know.probs
        seen = set()
        for line in self.lines[i]:
            for j in line:
                v = cells[j]
                if j != i and v > HIDDEN and v not in seen:
                    seen.add(v)
                    p = probs.get(v)
                    if p:
                        delta -= p * clear_bonus(cells, i, v, self.lines[i])
        if not self.last_turn:
            delta -= self.p["flip_bonus"] + (20.0 if self.stalling else 0.0)
        return delta

    def _best_flip(self) -> tuple[float, int] | None:
        """The hidden cell best turned (not counting the card discarded)."""
        best = None
        for i in self.hidden:
            if self.ends(i):
                base = self.current - self.mean
                value = -self.current
                for v, p in self.know.probs.items():
                    score = base + v - clear_bonus(self.cells, i, v, self.lines[i])
                    value += p * self.end_value(score)
            else:
                value = self.flip(i)
            if best is None or value < best[0] or (value == best[0] and self.rng.random() < 0.5):
                best = (value, i)
        return best

    # -- ending the round ----------------------------------------------------------
    def lowest_chance(self, score: float) -> float:
        """Chance that every opponent ends strictly above `score` after a last turn."""
        chance = 1.0
        sd_card = self.know.sd
        for p in self.opponents:
            cells = self.grids[p]
            hidden = cells.count(HIDDEN)
            mu = estimate(cells, self.mean) - self.p["opp_turn"]
            sd = math.sqrt(hidden * sd_card * sd_card + 4.0)
            chance *= phi((mu - score - 0.5) / sd)
        return chance

    def end_value(self, score: float) -> float:
        """Expected final score if I end the round with `score`, less the edge of ending
        when I am likely lowest."""
        if self.stalling:
            return score - 100.0
        if score <= 0:
            return score - self.p["end_edge"]
        chance = self.lowest_chance(score)
        penalised = penalise(self.rules, score)
        return score + (1.0 - chance) * (penalised - score) - self.p["end_edge"] * chance

    def ends(self, i: int) -> bool:
        """Does a move that turns cell `i` face up end the round?"""
        return not self.last_turn and len(self.hidden) == 1 and self.hidden[0] == i

    # -- options -------------------------------------------------------------------
    def keep_value(self, i: int, x: int) -> float:
        """Value of `x` replacing cell `i` (a kept draw or the taken discard)."""
        cells = self.cells
        old = cells[i]
        if self.ends(i):
            clear = clear_bonus(cells, i, x, self.lines[i]) if x in self.up_values else 0
            return self.end_value(self.current - self.mean + x - clear) - self.current
        value = self.place(i, x)
        if old != HIDDEN:
            # The replaced card goes on top, unless a clear puts an x there.
            cleared = x in self.up_values and clear_bonus(cells, i, x, self.lines[i])
            value += self.block(x if cleared else old)
        return value

    def reply(self, x: int) -> tuple[float, Action]:
        """Best thing to do with a drawn `x`: (value, action)."""
        cols = self.cols
        if not self.live:
            return 0.0, make_action("discard_drawn", None, cols)
        best_value, best_i = 1e9, -1
        for i in self.live:
            value = self.keep_value(i, x)
            if value < best_value:
                best_value, best_i = value, i
        action = make_action("keep_drawn", best_i, cols)
        flip = self._flip_choice
        if flip is not None:
            value = flip[0] + self.block(x)
            if value < best_value:
                i = flip[1]
                return value, make_action("discard_drawn", i, cols)
        elif self.block(x) < best_value:
            return self.block(x), make_action("discard_drawn", None, cols)
        return best_value, action

    def take_or_draw(self) -> Action:
        cols = self.cols
        top = self.rnd["discard_top"]
        if not self.live:
            return make_action("draw", None, cols)
        best_value, best_i = 1e9, -1
        for i in self.live:
            value = self.keep_value(i, top)
            if value < best_value:
                best_value, best_i = value, i
        # Drawing: whatever I do next covers the top card; I reply to what I draw.
        draw_value = 0.0
        for x, p in self.know.probs.items():
            draw_value += p * self.reply(x)[0]
        if best_value < draw_value:
            return make_action("take_discard", best_i, cols)
        return make_action("draw", None, cols)


def play_mind(mind_class: type[Strong], view: dict, rng: random.Random) -> Action:
    """Setup reveals are spread; a turn asks `mind_class` what to take and how to reply."""
    kind = moves(view).stage
    if kind is None:
        raise ValueError("the viewer has no move to make")
    if kind == "setup":
        return spread_reveal(view, rng)
    mind = mind_class(view, rng)
    if kind == "take":
        return mind.take_or_draw()
    return mind.reply(view["round"]["drawn"])[1]


def strong_bot(view: dict, rng: random.Random) -> Action:
    return play_mind(Strong, view, rng)

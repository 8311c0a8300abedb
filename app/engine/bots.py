"""Bots: functions of what one player may see, never of the game itself.

A bot receives `view(game, player)` (a JSON-able dict, see view.py) and a
`random.Random`, and returns one legal `Action`. It never sees face-down values, the
draw pile's order or another player's drawn card, because the view does not hold them.

- `random`: any legal move (first a kind of move at random, then a position).
- `greedy`: the best single move for its own grid, valuing an unknown card at the
  deck's mean; avoids ending a round it would likely be penalised for.
- `expert` (expert.py): the strong bot's play, tuned, and aware of the game's totals.
- `strong`: counts cards (every face-up card and the discard pile), weighs drawing
  against the discard by the expected best reply, plans columns, keeps cards the next
  player needs off the discard pile, and ends a round only when that likely pays.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from .actions import Action, DiscardDrawn, Draw, KeepDrawn, Reveal, TakeDiscard
from .game import DECK

# A cell of a parsed grid: its value when face up, else one of these markers (values
# lie in -2..12, so the markers can never be mistaken for a card).
HIDDEN = -100
CLEARED = -101

CARD_VALUES = tuple(range(-2, 13))
DECK_COUNTS = {v: DECK.count(v) for v in CARD_VALUES}
MEAN_CARD = sum(DECK) / len(DECK)  # about 5.07: what an unknown card is worth

Bot = Callable[[dict, random.Random], Action]


# ----- reading a view ----------------------------------------------------------------
def _flat(grid_rows) -> tuple[int, ...]:
    """A view's grid as a flat tuple: the value of each face-up card, else a marker.
    A view's grids are shared until they change, so each is read once (the cache holds
    the grid itself, so its id cannot be reused while cached)."""
    found = _FLAT.get(id(grid_rows))
    if found is not None and found[0] is grid_rows:
        return found[1]
    if len(_FLAT) > 256:
        _FLAT.clear()
    flat = tuple(
        cell["value"] if cell["state"] == "up" else _MARKERS[cell["state"]]
        for row in grid_rows
        for cell in row
    )
    _FLAT[id(grid_rows)] = (grid_rows, flat)
    return flat


_FLAT: dict[int, tuple] = {}
_MARKERS = {"down": HIDDEN, "gone": CLEARED}


class Moves:
    """The viewer's legal actions (the view's `legal`, stated by the engine) read once:
    the stage of the turn, and for each kind of action the cells it may target (flat
    indexes; None for discarding with nothing left to turn)."""

    __slots__ = ("stage", "targets", "actions")

    def __init__(self, legal, cols: int):
        self.targets: dict[str, list[int | None]] = {}
        self.actions: list[Action] = []
        for entry in legal:
            kind, i, action = _read_action(entry, cols)
            self.targets.setdefault(kind, []).append(i)
            self.actions.append(action)
        self.stage = _STAGES[legal[0]["type"]] if legal else None

    def of(self, kind: str) -> list[int | None]:
        return self.targets.get(kind, [])


def _read_action(entry, cols: int) -> tuple[str, int | None, Action]:
    """(kind, flat index or None, Action) of one legal action. The view's action dicts
    are shared, so each is read once (the cache holds it: its id stays its own)."""
    found = _ENTRIES.get(id(entry))
    if found is not None and found[0] is entry and found[1] == cols:
        return found[2]
    kind = entry["type"]
    if kind == "discard_drawn":
        flip = entry["flip"]
        i = None if flip is None else flip[0] * cols + flip[1]
    else:
        i = entry["row"] * cols + entry["col"] if "row" in entry else None
    read = (kind, i, _action(kind, i, cols))
    if len(_ENTRIES) > 20_000:
        _ENTRIES.clear()
    _ENTRIES[id(entry)] = (entry, cols, read)
    return read


_ENTRIES: dict[int, tuple] = {}

_STAGES = {
    "reveal": "setup",
    "draw": "take",
    "take_discard": "take",
    "keep_drawn": "drawn",
    "discard_drawn": "drawn",
}


def moves(view: dict) -> Moves:
    """The viewer's legal actions, read. A view's `legal` is shared by every view with
    the same grid and stage, so it is read once (the cache holds the list itself, so
    its id cannot be reused while cached)."""
    legal = view["legal"]
    found = _READ.get(id(legal))
    if found is not None and found[0] is legal:
        return found[1]
    if len(_READ) > 256:
        _READ.clear()
    read = Moves(legal, view["rules"]["cols"])
    _READ[id(legal)] = (legal, read)
    return read


_READ: dict[int, tuple[object, Moves]] = {}


def has_move(view: dict) -> bool:
    """Whether the viewer has a move to make now."""
    return bool(view["legal"])


def _action(kind: str, i: int | None, cols: int) -> Action:
    """The action of `kind` at flat index `i` (actions are immutable: made once)."""
    key = (kind, i, cols)
    found = _ACTIONS.get(key)
    if found is None:
        if kind == "draw":
            found = Draw()
        elif kind == "discard_drawn":
            found = DiscardDrawn(None if i is None else (i // cols, i % cols))
        else:
            found = _KINDS[kind](i // cols, i % cols)
        _ACTIONS[key] = found
    return found


_KINDS = {"reveal": Reveal, "take_discard": TakeDiscard, "keep_drawn": KeepDrawn}
_ACTIONS: dict[tuple, Action] = {}


def _lines(rows: int, cols: int, clear_rows: bool) -> list[list[tuple[int, ...]]]:
    """For each cell, the lines (tuples of cell indexes) that can clear through it."""
    key = (rows, cols, clear_rows)
    cached = _LINES.get(key)
    if cached is None:
        cached = []
        for i in range(rows * cols):
            r, c = divmod(i, cols)
            lines = [tuple(k * cols + c for k in range(rows))]
            if clear_rows:
                lines.append(tuple(r * cols + k for k in range(cols)))
            cached.append(lines)
        _LINES[key] = cached
    return cached


_LINES: dict[tuple[int, int, bool], list[list[tuple[int, ...]]]] = {}


def _clear_bonus(cells: list[int], i: int, x: int, lines: list[tuple[int, ...]]) -> int:
    """Points removed by clears if a face-up `x` lands at `i` (one pass, no chains)."""
    removed = 0
    shared = False
    for line in lines:
        n = 0
        for j in line:
            if j == i:
                n += 1
                continue
            v = cells[j]
            if v == CLEARED:
                continue
            if v != x:
                n = 0
                break
            n += 1
        if n >= 2:
            removed += n * x - (x if shared else 0)
            shared = True
    return removed


def _next_player(view: dict) -> str | None:
    """Who moves after the viewer this round (None if nobody does)."""
    rnd = view["round"]
    me = view["me"]
    if rnd["ender"] is not None:
        left = rnd["last_turns"]
        if me in left:
            k = left.index(me)
            return left[k + 1] if k + 1 < len(left) else None
        return left[0] if left else None
    gone = {p["id"] for p in view["players"] if p["forfeited"]}
    seating = rnd["seating"]
    start = seating.index(me)
    for step in range(1, len(seating)):
        candidate = seating[(start + step) % len(seating)]
        if candidate not in gone:
            return candidate
    return None


def _opponents(view: dict) -> list[str]:
    me = view["me"]
    gone = {p["id"] for p in view["players"] if p["forfeited"]}
    return [p for p in view["round"]["seating"] if p != me and p not in gone]


def _penalise(rules: dict, score: float) -> float:
    penalty = rules["penalty"]
    mode = penalty["mode"]
    if mode == "multiplier":
        return score * penalty["multiplier"]
    if mode == "flat":
        return score + penalty["flat"]
    return score * penalty["multiplier"] + penalty["flat"]


def _spread_reveal(view: dict, rng: random.Random) -> Action:
    """Setup: a face-down card, in a column with no face-up card if there is one."""
    cols = view["rules"]["cols"]
    cells = _flat(view["round"]["grids"][view["me"]])
    hidden = moves(view).of("reveal")
    used = {i % cols for i, v in enumerate(cells) if v != HIDDEN and v != CLEARED}
    fresh = [i for i in hidden if i % cols not in used]
    return _action("reveal", rng.choice(fresh or hidden), cols)


# ----- random ------------------------------------------------------------------------
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


def _stalling(rnd: dict) -> bool:
    """A round gone on far longer than usual: bots then hurry to end it, so that no
    table of bots that all avoid ending can play on for ever."""
    return len(rnd["log"]) > STALL_EVENTS * len(rnd["seating"])


STALL_EVENTS = 60  # public events per player (a turn makes 1 or 2; rounds average ~20)


# ----- greedy ------------------------------------------------------------------------
GREEDY_TAKE = 5.0  # take the discard when it gains at least this much
GREEDY_KEEP = 2.0  # keep a drawn card when it gains at least this much


def _best_place(cells, targets, x: int, lines, mean: float) -> tuple[int, float]:
    """Which of the `targets` (cells a face-up `x` may replace) gains most for this
    grid: (index, points gained); the first such cell on a tie."""
    if x not in cells:  # no clear possible (it needs another card of the same value)
        if not targets:
            return -1, -1e9
        worth = _worth(cells, mean)
        i = max(targets, key=worth.__getitem__)
        return i, worth[i] - x
    best_i, best_gain = -1, -1e9
    for i in targets:
        v = cells[i]
        gain = (mean if v == HIDDEN else v) - x + _clear_bonus(cells, i, x, lines[i])
        if gain > best_gain:
            best_i, best_gain = i, gain
    return best_i, best_gain


def _worth(cells, mean: float) -> tuple[float, ...]:
    """What each cell of a grid is worth now: its card, or `mean` if face down. Read
    once per grid for the greedy bot's constant mean."""
    if mean != MEAN_CARD:
        return tuple(mean if v == HIDDEN else v for v in cells)
    found = _WORTH.get(id(cells))
    if found is not None and found[0] is cells:
        return found[1]
    if len(_WORTH) > 256:
        _WORTH.clear()
    worth = tuple(mean if v == HIDDEN else v for v in cells)
    _WORTH[id(cells)] = (cells, worth)
    return worth


_WORTH: dict[int, tuple] = {}


def _estimate(cells: list[int], mean: float) -> float:
    total = 0.0
    for v in cells:
        if v == HIDDEN:
            total += mean
        elif v != CLEARED:
            total += v
    return total


def greedy_bot(view: dict, rng: random.Random) -> Action:
    legal = moves(view)
    kind = legal.stage
    if kind is None:
        raise ValueError("the viewer has no move to make")
    if kind == "setup":
        return _spread_reveal(view, rng)
    rules = view["rules"]
    cols = rules["cols"]
    rnd = view["round"]
    cells = _flat(rnd["grids"][view["me"]])
    lines = _lines(rules["rows"], cols, rules["clear_rows"])
    if kind == "take":
        top = rnd["discard_top"]
        i, gain = _best_place(cells, legal.of("take_discard"), top, lines, MEAN_CARD)
        if gain >= GREEDY_TAKE and not (
            cells[i] == HIDDEN
            and cells.count(HIDDEN) == 1
            and _greedy_fears_end(view, cells, i, top)
        ):
            return _action("take_discard", i, cols)
        return _action("draw", None, cols)
    drawn = rnd["drawn"]
    i, gain = _best_place(cells, legal.of("keep_drawn"), drawn, lines, MEAN_CARD)
    flips = legal.of("discard_drawn")
    if flips == [None]:  # nothing left to turn over
        return _action("keep_drawn", i, cols) if gain > 0 else _action("discard_drawn", None, cols)
    keep = gain >= GREEDY_KEEP
    if len(flips) == 1 and (cells[i] == HIDDEN or not keep):
        # This move would turn my last card and end the round: only if it likely pays.
        ending_score = drawn if keep else MEAN_CARD
        if _greedy_fears_end(view, cells, flips[0], ending_score):
            j, up_gain = _best_up_place(cells, drawn, lines)
            if j >= 0 and up_gain >= -3:
                return _action("keep_drawn", j, cols)
    if keep:
        return _action("keep_drawn", i, cols)
    return _action("discard_drawn", rng.choice(flips), cols)


def _best_up_place(cells: list[int], x: int, lines) -> tuple[int, float]:
    best_i, best_gain = -1, -1e9
    for i, v in enumerate(cells):
        if v in (HIDDEN, CLEARED):
            continue
        gain = v - x + _clear_bonus(cells, i, x, lines[i])
        if gain > best_gain:
            best_i, best_gain = i, gain
    return best_i, best_gain


def _greedy_fears_end(view: dict, cells: list[int], last: int, value: float) -> bool:
    """Would ending now (my last hidden card at `last` becoming `value`) likely be
    penalised? Opponents are valued at their face-up cards plus the mean per hidden one."""
    rnd = view["round"]
    if rnd["ender"] is not None:
        return False
    if _stalling(rnd):
        return False
    mine = _estimate(cells, MEAN_CARD) - MEAN_CARD + value
    if mine <= 0:
        return False
    grids = rnd["grids"]
    best_other = min(_estimate(_flat(grids[p]), MEAN_CARD) for p in _opponents(view))
    return mine >= best_other


# ----- strong ------------------------------------------------------------------------
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


def _phi(z: float) -> float:
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


class _Strong:
    """One decision of the strong bot. Every option is valued as the change of my
    expected round score (lower is better) plus strategic terms: column potential, the
    card left to the next player, and the odds of the penalty when ending the round."""

    def __init__(self, view: dict, rng: random.Random, params: dict | None = None):
        self.p = params or STRONG
        self.rng = rng
        rules = view["rules"]
        self.rules = rules
        self.cols = cols = rules["cols"]
        self.lines = _lines(rules["rows"], cols, rules["clear_rows"])
        rnd = view["round"]
        self.rnd = rnd
        self.grids = {p: _flat(g) for p, g in rnd["grids"].items()}
        self.cells = cells = self.grids[view["me"]]
        self.know = _Knowledge(view, self.grids)
        self.mean = self.know.mean
        self.opponents = _opponents(view)
        self.hidden = [i for i, v in enumerate(cells) if v == HIDDEN]
        # The cells a card may replace: stated by the legal actions (a kept draw now, or
        # the taken discard now and a kept draw after drawing: the same cells).
        legal = moves(view)
        self.live = legal.of("keep_drawn") or legal.of("take_discard")
        self.last_turn = rnd["ender"] is not None
        self.stalling = _stalling(rnd)
        # Turns left in this round, roughly: the fewest hidden cards at the table.
        fewest = min(
            [sum(1 for v in self.grids[p] if v == HIDDEN) for p in self.opponents]
            + [len(self.hidden)]
        )
        self.horizon = 0.0 if self.last_turn else 1.0 + 1.5 * fewest
        self.current = _estimate(cells, self.mean)
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
        nxt = _next_player(view)
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
                gain = _best_place(self.next_cells, self.next_live, top, self.lines, self.mean)[1]
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
            delta -= _clear_bonus(cells, i, x, self.lines[i])
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
                        delta -= p * _clear_bonus(cells, i, v, self.lines[i])
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
                    score = base + v - _clear_bonus(self.cells, i, v, self.lines[i])
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
            mu = _estimate(cells, self.mean) - self.p["opp_turn"]
            sd = math.sqrt(hidden * sd_card * sd_card + 4.0)
            chance *= _phi((mu - score - 0.5) / sd)
        return chance

    def end_value(self, score: float) -> float:
        """Expected final score if I end the round with `score`, less the edge of ending
        when I am likely lowest."""
        if self.stalling:
            return score - 100.0
        if score <= 0:
            return score - self.p["end_edge"]
        chance = self.lowest_chance(score)
        penalised = _penalise(self.rules, score)
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
            clear = _clear_bonus(cells, i, x, self.lines[i]) if x in self.up_values else 0
            return self.end_value(self.current - self.mean + x - clear) - self.current
        value = self.place(i, x)
        if old != HIDDEN:
            # The replaced card goes on top, unless a clear puts an x there.
            cleared = x in self.up_values and _clear_bonus(cells, i, x, self.lines[i])
            value += self.block(x if cleared else old)
        return value

    def reply(self, x: int) -> tuple[float, Action]:
        """Best thing to do with a drawn `x`: (value, action)."""
        cols = self.cols
        if not self.live:
            return 0.0, _action("discard_drawn", None, cols)
        best_value, best_i = 1e9, -1
        for i in self.live:
            value = self.keep_value(i, x)
            if value < best_value:
                best_value, best_i = value, i
        action = _action("keep_drawn", best_i, cols)
        flip = self._flip_choice
        if flip is not None:
            value = flip[0] + self.block(x)
            if value < best_value:
                i = flip[1]
                return value, _action("discard_drawn", i, cols)
        elif self.block(x) < best_value:
            return self.block(x), _action("discard_drawn", None, cols)
        return best_value, action

    def take_or_draw(self) -> Action:
        cols = self.cols
        top = self.rnd["discard_top"]
        if not self.live:
            return _action("draw", None, cols)
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
            return _action("take_discard", best_i, cols)
        return _action("draw", None, cols)


def play_mind(mind_class: type[_Strong], view: dict, rng: random.Random) -> Action:
    """Setup reveals are spread; a turn asks `mind_class` what to take and how to reply."""
    kind = moves(view).stage
    if kind is None:
        raise ValueError("the viewer has no move to make")
    if kind == "setup":
        return _spread_reveal(view, rng)
    mind = mind_class(view, rng)
    if kind == "take":
        return mind.take_or_draw()
    return mind.reply(view["round"]["drawn"])[1]


def strong_bot(view: dict, rng: random.Random) -> Action:
    return play_mind(_Strong, view, rng)


BOTS: dict[str, Bot] = {"random": random_bot, "greedy": greedy_bot, "strong": strong_bot}

# The expert builds on the strong bot above (its own module: this one is long enough).
from .expert import expert_bot  # noqa: E402

BOTS["expert"] = expert_bot


def choose(name: str, view: dict, rng: random.Random) -> Action:
    """The move bot `name` makes on `view`. Raises KeyError for an unknown bot and
    ValueError when the viewer has no move to make."""
    return BOTS[name](view, rng)

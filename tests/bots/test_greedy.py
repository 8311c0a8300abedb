"""The greedy bot's shortcuts decide as the plain valuation does: the best cell for a
card, and the same move whether the view's cells are shared objects or a JSON copy."""

from __future__ import annotations

import json
import random

from app.bots.greedy import best_place, greedy_bot
from app.bots.reading import CLEARED, HIDDEN, MEAN_CARD, clear_bonus, grid_lines, pick
from app.engine import GAME_OVER, ROUND_OVER, Game, Player, RuleSet, view


def plain_best_place(cells, targets, x, lines, mean):
    """Every target valued one by one: its card (the mean if face down) less `x`, plus
    what the lines through it would clear; the first best wins."""
    best_i, best_gain = -1, -1e9
    for i in targets:
        v = cells[i]
        gain = (mean if v == HIDDEN else v) - x + clear_bonus(cells, i, x, lines[i])
        if gain > best_gain:
            best_i, best_gain = i, gain
    return best_i, best_gain


def test_the_best_place_is_the_plain_valuations_over_random_grids():
    rng = random.Random(14)
    checked = clears = 0
    for _ in range(3000):
        rows, cols = rng.choice([(3, 4), (2, 3), (3, 3), (2, 2), (2, 4)])
        lines = grid_lines(rows, cols, rng.random() < 0.5)
        values = rng.choice([[1, 2, 3], [-2, 0, 5], list(range(-2, 13))])
        cells = tuple(rng.choice([*values, HIDDEN, HIDDEN, CLEARED]) for _ in range(rows * cols))
        targets = [i for i, v in enumerate(cells) if v != CLEARED]
        if not targets:
            continue
        x = rng.choice(values)
        mean = rng.choice([MEAN_CARD, 4.25, 5, 0])  # a whole mean can tie a card
        expected = plain_best_place(cells, targets, x, lines, mean)
        assert best_place(cells, targets, x, lines, mean) == expected, (cells, x)
        checked += 1
        clears += clear_bonus(cells, expected[0], x, lines[expected[0]]) != 0
    assert checked > 2500 and clears > 100  # the clearing cases were reached


def test_greedy_moves_the_same_on_a_view_and_on_its_json_copy():
    rules = RuleSet(clear_rows=True)
    game = Game([Player(f"p{k}", f"P{k}", "greedy") for k in range(3)], rules, seed="json")
    rng = random.Random(3)
    moves = 0
    while game.phase != GAME_OVER and moves < 400:
        if game.phase == ROUND_OVER:
            game.start_next_round()
            continue
        pid = next(p for p in game.round.seating if game.legal_actions(p))
        state = rng.getstate()
        action = greedy_bot(view(game, pid), rng)
        rng.setstate(state)
        assert greedy_bot(json.loads(json.dumps(view(game, pid))), rng) == action
        game.apply(pid, action)
        moves += 1
    assert moves == 400 or game.phase == GAME_OVER


def test_the_bots_choice_draws_as_random_choice():
    for seed in range(50):
        mine, theirs = random.Random(seed), random.Random(seed)
        for n in [1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 1, 6]:
            cards = list(range(100, 100 + n))
            assert pick(mine, cards) == theirs.choice(cards)
        assert mine.random() == theirs.random()  # left at the same place

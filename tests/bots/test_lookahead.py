"""The expert's fast model of a round (lookahead.py) follows the rules (docs/rules.md)."""

from __future__ import annotations

import random
from collections import Counter

from app.bots.lookahead import (
    DOWN,
    GONE,
    UP,
    Deal,
    Table,
    clear,
    deal,
    draw,
    end_turn,
    play_out,
    scores,
    unseen_cards,
)
from app.bots.reading import DECK_COUNTS
from app.bots.strong import Strong
from app.engine import Game, Player, view

RULES = {
    "rows": 3,
    "cols": 4,
    "clear_rows": False,
    "penalty": {"mode": "multiplier", "multiplier": 2, "flat": 10},
}


def a_deal(grids, states, rules=RULES, discard=(0,)) -> tuple[Table, Deal]:
    table = Table(rules, [f"p{k}" for k in range(len(grids))], "p0")
    d = Deal.__new__(Deal)
    d.vals = [list(g) for g in grids]
    d.st = [list(s) for s in states]
    d.draw, d.discard, d.ender, d.last = [], list(discard), None, []
    d.rng = random.Random(1)
    return table, d


def test_a_column_of_equal_face_up_cards_clears_onto_the_discard_pile():
    grid = [5, 1, 2, 3, 5, 4, 6, 7, 5, 8, 9, 10]
    table, d = a_deal([grid], [[UP] * 12])
    clear(table, d, 0)
    assert [d.st[0][i] for i in (0, 4, 8)] == [GONE] * 3
    assert d.st[0].count(GONE) == 3 and d.discard == [0, 5, 5, 5]


def test_a_face_down_card_stops_a_clear_and_two_cards_left_still_clear():
    grid = [5, 1, 2, 3, 5, 4, 6, 3, 5, 8, 9, 3]
    states = [UP] * 12
    states[8] = DOWN  # column 0: the last 5 is face down
    states[3] = GONE  # column 3: two 3s left
    table, d = a_deal([grid], [states])
    clear(table, d, 0)
    assert d.st[0][0] == UP and d.st[0][8] == DOWN
    assert d.st[0][7] == GONE and d.st[0][11] == GONE


def test_row_clears_chain_into_columns():
    rules = dict(RULES, rows=3, cols=2, clear_rows=True)
    table, d = a_deal([[4, 4, 7, 9, 7, 9]], [[UP] * 6], rules)
    clear(table, d, 0)
    assert d.st[0] == [GONE] * 6
    table, d = a_deal([[4, 4, 7, 9, 7, 9]], [[UP] * 6], dict(rules, clear_rows=False))
    clear(table, d, 0)
    assert d.st[0] == [UP] * 6


def test_scores_reveal_clear_and_penalise_the_ender():
    up = [UP] * 12
    hidden_column = [DOWN, UP, UP, UP, DOWN, UP, UP, UP, UP, UP, UP, UP]
    ender = [1] * 12  # 12, not strictly lowest: doubled
    other = [9, 0, 0, 0, 9, 0, 0, 0, 9, 0, 1, 1]  # the revealed 9s clear: 2
    table, d = a_deal([ender, other, [1] * 12], [up, hidden_column, up])
    d.ender = 0
    assert scores(table, d) == [24, 2, 12]
    flat = dict(RULES, penalty={"mode": "both", "multiplier": 3, "flat": 5})
    table, d = a_deal([[0] * 12, [0] * 12], [up, up], flat)
    d.ender = 0
    assert scores(table, d) == [0, 0]  # zero is never penalised
    table, d = a_deal([[1] + [0] * 11, [1] + [0] * 11], [up, up], flat)
    d.ender = 1
    assert scores(table, d) == [1, 8]


def test_the_ender_gives_everyone_else_one_last_turn():
    up, down = [UP] * 12, [DOWN] + [UP] * 11
    table, d = a_deal([[1] * 12] * 3, [down, up, down])
    assert end_turn(table, d, 0) == 1  # p0 still has a card down
    assert end_turn(table, d, 1) == 2 and d.ender == 1 and d.last == [2, 0]
    assert end_turn(table, d, 2) == 0
    assert end_turn(table, d, 0) is None


def test_an_empty_draw_pile_is_rebuilt_from_the_discard_pile_under_its_top():
    table, d = a_deal([[1] * 12], [[UP] * 12], discard=(3, 4, 5))
    assert draw(d) in (3, 4) and d.discard == [5] and len(d.draw) == 1


def test_a_guess_deals_exactly_the_unseen_cards_and_plays_a_round_out():
    game = Game([Player(f"p{k}", f"P{k}", "greedy") for k in range(3)], seed=5)
    for pid in game.round.seating:
        game.apply(pid, game.legal_actions(pid)[0])
        game.apply(pid, game.legal_actions(pid)[0])
    seen = view(game, game.round.turn)
    mind = Strong(seen, random.Random(1))
    rnd = seen["round"]
    unseen = unseen_cards(mind.grids, rnd["discard_pile"], None)
    seating = list(rnd["seating"])
    table = Table(seen["rules"], seating, seen["me"])
    grids = [mind.grids[p] for p in seating]
    d = deal(
        table, grids, unseen, rnd["draw_count"], rnd["discard_pile"], None, [], random.Random(2)
    )
    everything = Counter(d.draw + d.discard + [v for vals in d.vals for v in vals])
    assert everything == Counter(DECK_COUNTS)
    final = play_out(table, d, seating.index(rnd["turn"]))
    assert d.ender is not None and not d.last
    assert all(DOWN not in st for st in d.st) and len(final) == 3


def test_the_fast_greedy_plays_as_the_greedy_bot():
    """On the real cards (which only a test may read), a turn of the fast model's greedy
    leaves the grid and the discard pile the greedy bot leaves (both draw the card they
    turn at random from the same random state: the same card)."""
    from app.bots.greedy import greedy_bot
    from app.bots.lookahead import greedy_turn
    from app.engine import PLAY
    from benchmarks.bot_bench import deciders

    compared = 0
    game = Game([Player(f"p{k}", f"P{k}", "greedy") for k in range(4)], seed=3)
    rng = random.Random(3)
    for pid in deciders(game, 400):
        rnd = game.round
        if game.phase != PLAY or rnd.drawn is not None:
            game.apply(pid, greedy_bot(view(game, pid), rng))
            continue
        seating = list(rnd.seating)
        table = Table(view(game, pid)["rules"], seating, pid)
        d = Deal.__new__(Deal)
        d.vals = [list(rnd.grids[p].values) for p in seating]
        d.st = [list(rnd.grids[p].state) for p in seating]
        d.draw, d.discard, d.rng = list(rnd.draw_pile), list(rnd.discard), random.Random()
        d.rng.setstate(rng.getstate())
        d.ender = None if rnd.ender is None else seating.index(rnd.ender)
        d.last = [seating.index(p) for p in rnd.last_turns]
        me = seating.index(pid)
        greedy_turn(table, d, me)
        while game.round is rnd and rnd.turn == pid and game.phase == PLAY:
            game.apply(pid, greedy_bot(view(game, pid), rng))
        if game.phase != PLAY or game.round is not rnd:
            continue  # the round ended: the engine's final reveal turned every card
        grid = rnd.grids[pid]
        assert d.vals[me] == list(grid.values)
        assert d.st[me] == list(grid.state)
        assert d.discard == rnd.discard
        compared += 1
    assert compared > 100

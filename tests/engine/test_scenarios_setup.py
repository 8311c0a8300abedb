"""Fixed-deck scenarios: the deal, the setup reveals and who starts.

Decks are listed in dealing order (each seat's grid row-major, the discard card, then
the draw pile next card first); `build_deck` fills the rest with the unused cards."""

import copy
import random

import pytest

from app.engine import (
    PLAY,
    ROUND_OVER,
    SETUP,
    Draw,
    Forfeit,
    Game,
    RecordError,
    Reveal,
    RuleSet,
    TakeDiscard,
    replay,
    to_record,
)
from tests.engine.engine_helpers import (
    DOWN,
    GONE,
    UP,
    A,
    B,
    assert_illegal,
    build_deck,
    check_invariants,
    fixed_game,
    flip_turn,
    flip_until_round_end,
    grid_values,
    keep_turn,
    players,
    quick_game,
    reveal,
    state_at,
)

# ----- setup ------------------------------------------------------------------------


def test_deal_follows_the_deck_order():
    deck = build_deck([A, B], 5, [9, 3, 8])
    game = Game(players(2), RuleSet(), deal=False)
    game.start_next_round(seating=["p2", "p1"], deck=deck)
    rnd = game.round
    # the first grid dealt goes to the first seat
    assert grid_values(game, "p2") == A
    assert grid_values(game, "p1") == B
    assert rnd.discard == [5]
    assert rnd.draw_pile[-3:] == [8, 3, 9]  # next card is the end of the list
    assert rnd.dealt["draw_pile"][:3] == [9, 3, 8]
    assert all(s == DOWN for g in rnd.grids.values() for s in g.state)
    assert game.phase == SETUP and rnd.turn is None and rnd.starter is None
    check_invariants(game)


def test_setup_reveals_are_chosen_by_each_player():
    game = fixed_game([A, B], 5)
    assert game.legal_actions("p1") == [Reveal(r, c) for r in range(3) for c in range(4)]
    # any order between players; play waits for everybody
    game.apply("p2", Reveal(2, 3))
    game.apply("p1", Reveal(1, 2))
    assert game.phase == SETUP
    assert state_at(game, "p2", 2, 3) == UP and state_at(game, "p1", 1, 2) == UP
    assert_illegal(game, "p2", Reveal(2, 3), "That card is already face up")
    assert_illegal(game, "p1", Draw(), "Turn your first cards face up before play starts")
    assert_illegal(game, "p1", TakeDiscard(0, 0), "Turn your first cards face up")
    assert_illegal(game, "p1", Reveal(3, 0), "There is no card at that position")
    assert_illegal(game, "p1", Reveal(0, 4), "There is no card at that position")
    game.apply("p1", Reveal(0, 3))
    assert game.round.setup_left["p1"] == 0
    assert game.legal_actions("p1") == []
    assert_illegal(game, "p1", Reveal(2, 2), "You have already turned your first cards")
    assert game.phase == SETUP and game.round.turn is None
    assert len(game.legal_actions("p2")) == 11
    game.apply("p2", Reveal(0, 0))
    assert game.phase == PLAY
    # Ann: 7 + 4 = 11, Bob: 11 + 0 = 11, Ann's highest is 7 < 11: Bob starts
    assert game.round.starter == "p2" and game.round.turn == "p2"
    assert game.round.moves == [
        {"player": "p2", "type": "reveal", "row": 2, "col": 3},
        {"player": "p1", "type": "reveal", "row": 1, "col": 2},
        {"player": "p1", "type": "reveal", "row": 0, "col": 3},
        {"player": "p2", "type": "reveal", "row": 0, "col": 0},
    ]
    assert [e["value"] for e in game.round.log if e["type"] == "reveal"] == [11, 7, 4, 0]
    assert_illegal(game, "p2", Reveal(1, 1), "Play has started")
    check_invariants(game)


def test_play_waits_for_the_last_player_to_flip():
    game = fixed_game([A, B, A], 5)
    reveal(game, "p1", (0, 0), (0, 1))
    reveal(game, "p3", (1, 0), (1, 1))
    reveal(game, "p2", (0, 0))
    assert game.phase == SETUP
    for p in ("p1", "p3"):
        assert game.legal_actions(p) == []
        assert_illegal(game, p, Draw(), "Turn your first cards face up")
    reveal(game, "p2", (0, 1))
    assert game.phase == PLAY


def test_no_initial_flips_plays_at_once():
    game = fixed_game([A, B], 5, rules=RuleSet(initial_flips=0))
    assert game.phase == PLAY
    assert game.round.starter in ("p1", "p2")
    assert all(s == DOWN for g in game.round.grids.values() for s in g.state)
    assert_illegal(game, game.round.starter, Reveal(0, 0), "Play has started")


def test_four_initial_flips():
    game = fixed_game([A, B], 5, rules=RuleSet(initial_flips=4))
    reveal(game, "p1", (0, 0), (0, 1), (0, 2))
    assert game.phase == SETUP and len(game.legal_actions("p1")) == 9
    reveal(game, "p1", (0, 3))
    reveal(game, "p2", (2, 0), (2, 1), (2, 2), (2, 3))
    # Ann 1+2+3+4 = 10, Bob 8+9+10+11 = 38
    assert game.phase == PLAY and game.round.starter == "p2"


def test_a_setup_reveal_clears_a_column():
    rules = RuleSet(rows=2)
    game = fixed_game([[6, 1, 2, 3, 6, 4, 5, 7], [1, 2, 3, 4, 5, 6, 7, 8]], 9, rules=rules)
    reveal(game, "p1", (0, 0), (1, 0))
    assert state_at(game, "p1", 0, 0) == GONE and state_at(game, "p1", 1, 0) == GONE
    assert game.round.discard == [9, 6, 6]
    reveal(game, "p2", (0, 0), (0, 1))
    # Cleared cards are no longer face-up cards of the grid: Ann's sum is 0, Bob's 3.
    assert game.round.starter == "p2"
    check_invariants(game)


# ----- who starts -------------------------------------------------------------------


def starter_game(first_two, seed=0, rules=None):
    """Each player turns (0, 0) and (0, 1), showing the two given values."""
    grids = [[[a, b, 1, 2], [3, 4, 5, 6], [7, 8, 9, 10]] for a, b in first_two]
    game = fixed_game(grids, 11, seed=seed, rules=rules)
    for p in game.round.seating:
        reveal(game, p, (0, 0), (0, 1))
    assert game.phase == PLAY
    return game


def test_starter_highest_sum():
    game = starter_game([(1, 12), (11, 10), (2, 3)])
    assert game.round.starter == "p2" and game.round.turn == "p2"


def test_starter_highest_sum_may_be_negative():
    game = starter_game([(-2, -1), (-1, -1), (-2, -2)])
    assert game.round.starter == "p2"


def test_starter_tie_goes_to_the_single_highest_card():
    # Ann 6+6 = 12, Bob 12+0 = 12, Cat 12-1 = 11: only the tied count, Bob has the 12.
    game = starter_game([(6, 6), (12, 0), (12, -1)])
    assert game.round.starter == "p2"
    game = starter_game([(12, 0), (6, 6), (5, 7)])
    assert game.round.starter == "p1"


def test_starter_still_tied_is_drawn_by_lot_among_the_tied():
    seen = set()
    for seed in range(40):
        game = starter_game([(12, 0), (3, 8), (0, 12), (5, 5)], seed=seed)
        starter = game.round.starter
        assert starter in ("p1", "p3")
        # the seed decides
        assert starter_game([(12, 0), (3, 8), (0, 12), (5, 5)], seed=seed).round.starter == starter
        seen.add(starter)
    assert seen == {"p1", "p3"}


def test_starter_with_no_initial_flips_is_random():
    seen = set()
    for seed in range(40):
        game = fixed_game([A, B, A], 5, rules=RuleSet(initial_flips=0), seed=seed)
        again = fixed_game([A, B, A], 5, rules=RuleSet(initial_flips=0), seed=seed)
        assert game.round.starter == again.round.starter
        seen.add(game.round.starter)
    assert seen == {"p1", "p2", "p3"}


def test_later_round_starts_with_the_previous_ender():
    # Ann starts (face-up 12+0+1 = 13), keeps a card; Bob flips his last card and ends.
    game = quick_game([[[12, 0], [1, -2]], [[1, 2], [3, 4]]])
    assert game.round.starter == "p1"
    keep_turn(game, "p1", (0, 0))
    flip_turn(game, "p2", (1, 1))
    assert game.round.ender == "p2"
    flip_until_round_end(game)
    assert game.phase == ROUND_OVER
    # Round 2: Ann shows much more, but Bob ended round 1 and starts.
    deck = build_deck([[[12, 11], [10, 1]], [[0, 1], [2, 3]]], 7, rules=game.rules)
    game.start_next_round(seating=["p1", "p2"], deck=deck)
    for p in ("p1", "p2"):
        reveal(game, p, (0, 0), (0, 1), (1, 0))
    assert game.round.starter == "p2" and game.round.turn == "p2"
    # also with a shuffled deal
    game2 = quick_game([[[12, 0], [1, -2]], [[1, 2], [3, 4]]])
    keep_turn(game2, "p1", (0, 0))
    flip_until_round_end(game2)
    game2.start_next_round()
    for p in ("p1", "p2"):
        reveal(game2, p, (0, 0), (0, 1), (1, 0))
    assert game2.round.starter == "p2"


def test_a_record_cannot_name_another_starter_than_the_ender():
    game = quick_game([[[12, 0], [1, -2]], [[1, 2], [3, 4]]])
    keep_turn(game, "p1", (0, 0))
    flip_until_round_end(game)
    ender = game.round.ender
    game.start_next_round()
    for p in ("p1", "p2"):
        reveal(game, p, (0, 0), (0, 1), (1, 0))
    assert game.round.turn == ender
    keep_turn(game, ender, (1, 1))
    record = to_record(game)
    assert record["rounds"][1]["starter"] == ender
    assert replay(copy.deepcopy(record)).totals == game.totals
    record["rounds"][1]["starter"] = "p1" if ender == "p2" else "p2"
    with pytest.raises(RecordError, match="round 2: the starter is"):
        replay(record)


def test_first_round_rule_when_the_ender_has_left():
    grids = [[[12, 0], [1, -2]], [[1, 2], [3, 4]], [[5, 1], [2, 3]]]
    game = quick_game(grids)
    keep_turn(game, "p1", (0, 0))
    flip_turn(game, "p2", (1, 1))
    assert game.round.ender == "p2"
    flip_until_round_end(game)
    assert game.phase == ROUND_OVER
    game.apply("p2", Forfeit())
    deck = build_deck([[[1, 0], [2, 5]], [[6, 5], [4, 7]]], 7, rules=game.rules)
    game.start_next_round(seating=["p1", "p3"], deck=deck)
    assert game.round.seating == ["p1", "p3"]
    for p in ("p1", "p3"):
        reveal(game, p, (0, 0), (0, 1), (1, 0))
    # highest sum: Cat 6+5+4 = 15 against Ann 1+0+2 = 3
    assert game.round.starter == "p3"


def test_first_round_rule_for_a_missing_ender_draws_lots_on_ties():
    seen = set()
    for seed in range(30):
        game = quick_game([[[12, 0], [1, -2]], [[1, 2], [3, 4]], [[5, 1], [2, 3]]], seed=seed)
        keep_turn(game, "p1", (0, 0))
        flip_turn(game, "p2", (1, 1))
        flip_until_round_end(game)
        game.apply("p2", Forfeit())
        deck = build_deck([[[6, 5], [4, 7]], [[6, 5], [4, 8]]], 7, rules=game.rules)
        game.start_next_round(seating=["p1", "p3"], deck=deck)
        for p in ("p1", "p3"):
            reveal(game, p, (0, 0), (0, 1), (1, 0))
        seen.add(game.round.starter)
    assert seen == {"p1", "p3"}


def test_a_shuffle_from_one_draw_of_words_is_randoms_shuffle():
    """Deals and reshuffles use state.shuffle_once (their rng shuffles once, then is
    dropped): the same order as random.Random.shuffle, from words drawn in one call."""
    from app.engine.state import DECK, shuffle_once

    for seed in range(200):
        for cards in (list(DECK), list(range(seed % 40)), ["a"], []):
            expected, mine = list(cards), list(cards)
            random.Random(f"deck-{seed}").shuffle(expected)
            shuffle_once(random.Random(f"deck-{seed}"), mine)
            assert mine == expected


class _Words(random.Random):
    """An rng from a list of 32-bit words, drawn as CPython's Random draws them (its
    shuffle reads them through getrandbits)."""

    def __init__(self, words):
        super().__init__(0)
        self.words = list(words)
        self.at = 0

    def _next(self):
        self.at += 1
        return self.words[self.at - 1]

    def getrandbits(self, k):
        if k <= 32:
            return self._next() >> (32 - k)
        assert k % 32 == 0
        return sum(self._next() << (32 * n) for n in range(k // 32))


def test_a_shuffle_needing_more_words_than_drawn_draws_more_and_keeps_the_order():
    from app.engine.state import DECK, shuffle_once

    # A word with every bit set is refused at every card (2**k - 1 >= i + 1): a deck
    # that needs far more words than one draw makes.
    source = random.Random("words")
    words = [0xFFFFFFFF if k < 400 else source.getrandbits(32) for k in range(5000)]
    expected, mine = list(DECK), list(DECK)
    _Words(words).shuffle(expected)
    shuffle_once(_Words(words), mine)
    assert mine == expected
    assert sorted(mine) == sorted(DECK) and mine != list(DECK)

"""Fixed-deck scenarios: one or more for every rule of docs/rules.md.

Decks are listed in dealing order (each seat's grid row-major, the discard card, then
the draw pile next card first); `build_deck` fills the rest with the unused cards."""

import copy
import json
import random
from collections import Counter

import pytest
from engine_helpers import (
    DOWN,
    GONE,
    UP,
    assert_illegal,
    build_deck,
    check_invariants,
    first_down,
    fixed_game,
    flip_turn,
    flip_until_round_end,
    grid_values,
    keep_turn,
    players,
    quick_game,
    quick_rules,
    ranking_key,
    snapshot,
)

from app.engine import (
    GAME_OVER,
    PLAY,
    ROUND_OVER,
    SETUP,
    DiscardDrawn,
    Draw,
    Forfeit,
    Game,
    IllegalMove,
    KeepDrawn,
    Penalty,
    RecordError,
    Reveal,
    RuleSet,
    TakeDiscard,
    replay,
    to_record,
    view,
)

# Two 3×4 grids with no two equal cards in a column.
A = [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]
B = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]


def two_player_game(draw=(9, 3, 8, 6, 2), discard=5, seed=0) -> Game:
    """Ann (p1) turned 1 and 2 (sum 3), Bob (p2) 0 and 1 (sum 1): Ann starts."""
    game = fixed_game([A, B], discard, draw, seed=seed)
    for p in ("p1", "p2"):
        game.apply(p, Reveal(0, 0))
        game.apply(p, Reveal(0, 1))
    assert game.phase == PLAY and game.round.turn == "p1"
    return game


def reveal(game, p, *cells):
    for cell in cells:
        game.apply(p, Reveal(*cell))


def state_at(game, p, r, c):
    grid = game.round.grids[p]
    return grid.state[r * grid.cols + c]


def value_at(game, p, r, c):
    grid = game.round.grids[p]
    return grid.values[r * grid.cols + c]


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


# ----- a turn -----------------------------------------------------------------------


def test_take_discard_onto_a_face_up_card():
    game = two_player_game()
    events = game.apply("p1", TakeDiscard(0, 0))
    assert value_at(game, "p1", 0, 0) == 5 and state_at(game, "p1", 0, 0) == UP
    assert game.round.discard == [1]
    assert game.round.turn == "p2"
    assert game.round.moves[-1] == {"player": "p1", "type": "take_discard", "row": 0, "col": 0}
    assert events[0] == {
        "type": "take_discard",
        "player": "p1",
        "row": 0,
        "col": 0,
        "value": 5,
        "replaced": 1,
    }
    check_invariants(game)


def test_take_discard_onto_a_face_down_card():
    game = two_player_game()
    game.apply("p1", TakeDiscard(2, 3))
    assert value_at(game, "p1", 2, 3) == 5 and state_at(game, "p1", 2, 3) == UP
    # the hidden 12 goes face up onto the discard pile
    assert game.round.discard == [12]
    assert game.round.grids["p1"].face_down_count() == 9
    assert game.round.turn == "p2"
    check_invariants(game)


def test_draw_and_keep():
    game = two_player_game()
    pile = len(game.round.draw_pile)
    game.apply("p1", Draw())
    assert game.round.drawn == 9 and len(game.round.draw_pile) == pile - 1
    assert game.round.turn == "p1"
    assert game.legal_actions("p1") == [
        *(KeepDrawn(r, c) for r in range(3) for c in range(4)),
        *(DiscardDrawn((r, c)) for r in range(3) for c in range(4) if (r, c) > (0, 1)),
    ]
    assert game.legal_actions("p2") == []
    game.apply("p1", KeepDrawn(1, 1))
    assert value_at(game, "p1", 1, 1) == 9 and state_at(game, "p1", 1, 1) == UP
    assert game.round.discard == [5, 6]
    assert game.round.drawn is None and game.round.turn == "p2"
    assert game.round.moves[-1] == {
        "player": "p1",
        "type": "draw",
        "keep": True,
        "row": 1,
        "col": 1,
    }
    check_invariants(game)


def test_draw_and_keep_onto_a_face_up_card():
    game = two_player_game()
    card = keep_turn(game, "p1", (0, 1))
    assert card == 9
    assert value_at(game, "p1", 0, 1) == 9
    assert game.round.discard == [5, 2]


def test_draw_discard_and_flip():
    game = two_player_game()
    game.apply("p1", Draw())
    game.apply("p1", DiscardDrawn((2, 0)))
    assert game.round.discard == [5, 9]
    assert state_at(game, "p1", 2, 0) == UP and value_at(game, "p1", 2, 0) == 9
    assert game.round.turn == "p2"
    assert game.round.moves[-1] == {
        "player": "p1",
        "type": "draw",
        "keep": False,
        "flip": [2, 0],
    }
    check_invariants(game)


def test_discard_without_flip_is_illegal_while_face_down_cards_remain():
    game = two_player_game()
    game.apply("p1", Draw())
    assert DiscardDrawn(None) not in game.legal_actions("p1")
    assert_illegal(game, "p1", DiscardDrawn(None), "Choose a face-down card to turn over")
    assert_illegal(game, "p1", DiscardDrawn((0, 0)), "That card is already face up")


def test_discard_without_flip_when_no_face_down_card_is_left():
    # Not reachable by play (a player without face-down cards has ended the round), so
    # it is built from a saved state: Ann's grid is all face up, no line complete.
    game = two_player_game()
    data = json.loads(json.dumps(game.to_dict()))
    data["rounds"][-1]["grids"]["p1"]["state"] = [UP] * 12
    game = Game.from_dict(data)
    game.apply("p1", Draw())
    legal = game.legal_actions("p1")
    assert DiscardDrawn(None) in legal
    assert not [a for a in legal if isinstance(a, DiscardDrawn) and a.flip is not None]
    assert_illegal(game, "p1", DiscardDrawn((1, 1)), "That card is already face up")
    game.apply("p1", DiscardDrawn(None))
    assert game.round.discard == [5, 9]
    assert game.round.moves[-1] == {"player": "p1", "type": "draw", "keep": False, "flip": None}
    assert game.round.ender == "p1" and game.round.turn == "p2"


def test_drawn_card_is_seen_by_the_drawer_only():
    game = two_player_game()
    game.apply("p1", Draw())
    assert view(game, "p1")["round"]["drawn"] == 9
    for who in ("p2", None, "nobody"):
        data = view(game, who)
        assert data["round"]["drawn"] is None
        assert data["round"]["has_drawn"] is True
    # the public log says a card was drawn, not which
    assert game.round.log[-1] == {"type": "draw", "player": "p1"}
    game.apply("p1", KeepDrawn(0, 0))
    assert view(game, "p1")["round"]["drawn"] is None
    assert view(game, "p1")["round"]["has_drawn"] is False


def test_turns_go_clockwise_in_seat_order():
    game = fixed_game([A, B, A], 5, seating=["p3", "p1", "p2"])
    reveal(game, "p1", (0, 0), (0, 1))  # Ann's grid is B: 0 + 1
    reveal(game, "p2", (0, 0), (0, 1))  # 1 + 2
    reveal(game, "p3", (2, 2), (2, 3))  # 11 + 12
    order = []
    for _ in range(6):
        p = game.round.turn
        order.append(p)
        keep_turn(game, p, (0, 0) if p != "p3" else (2, 2))
    assert order == ["p3", "p1", "p2", "p3", "p1", "p2"]


# ----- clearing lines ---------------------------------------------------------------

CLEAR_A = [[5, 1, 4, 3], [5, 2, 4, 7], [9, 8, 10, 11]]


def clear_game(discard=5, draw=(11, -2, 6), rules=None, grid=CLEAR_A):
    """Ann shows the 5s of column 0 and the 4s of column 2 (sum 18): she starts."""
    game = fixed_game([grid, B], discard, draw, rules=rules or RuleSet(initial_flips=4))
    reveal(game, "p1", (0, 0), (1, 0), (0, 2), (1, 2))
    reveal(game, "p2", (0, 0), (0, 1), (0, 2), (0, 3))
    assert game.round.turn == "p1"
    assert game.round.grids["p1"].face_down_count() == 8  # nothing cleared yet
    return game


def test_column_clear_after_taking_the_discard():
    game = clear_game()
    game.apply("p1", TakeDiscard(2, 0))
    assert [state_at(game, "p1", r, 0) for r in range(3)] == [GONE] * 3
    # the replaced 9 first, then the cleared column: a 5 is the new top
    assert game.round.discard == [9, 5, 5, 5]
    assert {"type": "clear", "player": "p1", "line": "column", "index": 0, "value": 5} in (
        game.round.log
    )
    assert game.round.grids["p1"].score() == sum([1, 4, 3, 2, 4, 7, 8, 10, 11])
    # positions never move: the cells keep their coordinates
    assert grid_values(game, "p1")[0] == [None, 1, 4, 3]
    keep_turn(game, "p2", (0, 0))
    assert not [a for a in game.legal_actions("p1") if getattr(a, "col", None) == 0]
    assert_illegal(game, "p1", TakeDiscard(1, 0), "That card was cleared from the grid")
    game.apply("p1", Draw())
    assert_illegal(game, "p1", KeepDrawn(0, 0), "That card was cleared from the grid")
    assert_illegal(game, "p1", DiscardDrawn((2, 0)), "That card was cleared from the grid")
    check_invariants(game)


def test_column_clear_after_a_flip():
    game = clear_game()
    game.apply("p1", Draw())
    game.apply("p1", DiscardDrawn((2, 2)))  # the hidden 10 is not a 4: no clear
    assert game.round.discard == [5, 11]
    keep_turn(game, "p2", (0, 0))
    grid = [[5, 1, 4, 3], [5, 2, 4, 7], [9, 8, 4, 11]]
    game = clear_game(grid=grid)
    game.apply("p1", Draw())
    game.apply("p1", DiscardDrawn((2, 2)))
    assert game.round.discard == [5, 11, 4, 4, 4]
    assert [state_at(game, "p1", r, 2) for r in range(3)] == [GONE] * 3


def test_column_clear_after_keeping_a_drawn_card_minus_twos_too():
    grid = [[-2, 1, 4, 3], [-2, 2, 4, 7], [9, 8, 10, 11]]
    game = fixed_game([grid, B], 0, (-2,), rules=RuleSet(initial_flips=2))
    reveal(game, "p1", (0, 0), (1, 0))
    reveal(game, "p2", (0, 0), (0, 1))  # 0 + 1 = 1 > -4: Bob starts
    game.apply("p2", TakeDiscard(0, 0))  # Bob takes the 0: the discard top is his 0
    game.apply("p1", Draw())
    assert game.round.drawn == -2
    game.apply("p1", KeepDrawn(2, 0))
    assert [state_at(game, "p1", r, 0) for r in range(3)] == [GONE] * 3
    assert game.round.discard == [0, 9, -2, -2, -2]
    assert game.round.grids["p1"].score() == 1 + 4 + 3 + 2 + 4 + 7 + 8 + 10 + 11
    check_invariants(game)


def test_a_complete_column_that_is_not_all_face_up_stays():
    game = clear_game()
    # column 0 shows 5, 5 and a hidden card: Ann replaces the (0, 0) 5 by a 5
    game.apply("p1", TakeDiscard(0, 0))
    assert state_at(game, "p1", 0, 0) == UP and game.round.discard == [5]


def test_clears_on_a_two_row_grid():
    rules = RuleSet(rows=2, initial_flips=1)
    game = fixed_game([[8, 1, 2, 3, 4, 5, 6, 7], [0, 1, 2, 3, 4, 5, 6, 7]], 8, rules=rules)
    reveal(game, "p1", (0, 0))
    reveal(game, "p2", (0, 0))
    game.apply("p1", TakeDiscard(0, 1))  # no clear: column 1 has a hidden card
    game.apply("p2", TakeDiscard(1, 1))
    # Ann's column 0 is 8 (up) and 4 (down); Bob put Ann's 1 on his (1, 1)
    game = fixed_game([[8, 1, 2, 3, 8, 5, 6, 7], [0, 1, 2, 3, 4, 5, 6, 7]], 9, rules=rules)
    reveal(game, "p1", (0, 0))
    reveal(game, "p2", (0, 0))
    game.apply("p1", Draw())
    game.apply("p1", DiscardDrawn((1, 0)))
    assert [state_at(game, "p1", r, 0) for r in range(2)] == [GONE, GONE]
    assert game.round.discard[-3:] == [game.round.discard[-3], 8, 8]
    check_invariants(game)


@pytest.mark.parametrize("clear_rows", [False, True])
def test_clear_rows_option(clear_rows):
    rules = quick_rules(initial_flips=2, clear_rows=clear_rows)
    game = fixed_game([[[3, 3], [5, 6]], [[1, 2], [4, 8]]], 7, rules=rules)
    reveal(game, "p1", (0, 0), (0, 1))  # a complete row of 3s
    if clear_rows:
        assert [state_at(game, "p1", 0, c) for c in range(2)] == [GONE, GONE]
        assert game.round.discard == [7, 3, 3]
        assert game.round.log[-1]["line"] == "row"
    else:
        assert [state_at(game, "p1", 0, c) for c in range(2)] == [UP, UP]
        assert game.round.discard == [7]


def test_a_row_clear_completes_a_column():
    # 3×3: column 0 is 5, 5, 9; row 2 is 9, 9 and a hidden 3. A 9 onto (2, 2) clears row
    # 2, which leaves column 0 with two 5s: cleared in turn.
    grid = [[5, 1, 2], [5, 4, 6], [9, 9, 3]]
    other = [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    for clear_rows in (True, False):
        rules = RuleSet(cols=3, initial_flips=4, clear_rows=clear_rows)
        game = fixed_game([grid, other], 9, rules=rules)
        reveal(game, "p1", (0, 0), (1, 0), (2, 0), (2, 1))
        reveal(game, "p2", (0, 0), (0, 1), (0, 2), (1, 0))
        assert game.round.turn == "p1"  # 28 against 6
        game.apply("p1", TakeDiscard(2, 2))
        if clear_rows:
            assert grid_values(game, "p1") == [[None, 1, 2], [None, 4, 6], [None, None, None]]
            assert game.round.discard == [3, 9, 9, 9, 5, 5]
            clears = [(e["line"], e["index"]) for e in game.round.log if e["type"] == "clear"]
            assert clears == [("row", 2), ("column", 0)]
        else:
            assert grid_values(game, "p1") == [[5, 1, 2], [5, 4, 6], [9, 9, 9]]
            assert game.round.discard == [3]
        check_invariants(game)


def test_a_column_clear_completes_a_row():
    grid = [[5, 1, 2], [5, 4, 6], [5, 8, 8]]
    other = [[0, 1, 2], [3, 4, 5], [6, 7, 9]]
    rules = RuleSet(cols=3, initial_flips=4, clear_rows=True)
    game = fixed_game([grid, other], 5, rules=rules)
    reveal(game, "p1", (0, 0), (1, 0), (2, 1), (2, 2))
    reveal(game, "p2", (0, 0), (0, 1), (0, 2), (1, 0))
    game.apply("p1", TakeDiscard(2, 0))  # 5 onto the 5
    assert grid_values(game, "p1") == [[None, 1, 2], [None, 4, 6], [None, None, None]]
    assert game.round.discard == [5, 5, 5, 5, 8, 8]
    clears = [(e["line"], e["index"]) for e in game.round.log if e["type"] == "clear"]
    assert clears == [("column", 0), ("row", 2)]


def test_a_line_needs_two_remaining_cards():
    # 2×3 with rows: Ann's row 0 (6, 6, 6) clears, leaving one card per column.
    rules = RuleSet(rows=2, cols=3, initial_flips=3, clear_rows=True)
    game = fixed_game([[6, 6, 1, 2, 3, 4], [0, 1, 2, 3, 4, 5]], 6, rules=rules)
    reveal(game, "p1", (0, 0), (0, 1), (1, 0))
    reveal(game, "p2", (0, 0), (0, 1), (0, 2))
    assert game.round.turn == "p1"
    game.apply("p1", TakeDiscard(0, 2))  # completes row 0
    assert grid_values(game, "p1") == [[None, None, None], [2, 3, 4]]
    assert game.round.discard == [1, 6, 6, 6]
    # (1, 0) is face up alone in column 0: it stays
    assert state_at(game, "p1", 1, 0) == UP
    # Ann's single face-up cards never clear on their own
    keep_turn(game, "p2", (0, 0))
    flip_turn(game, "p1", (1, 1))
    assert [state_at(game, "p1", 1, c) for c in range(3)] == [UP, UP, DOWN]


# ----- the draw pile runs out ----------------------------------------------------------


def exhaust_draw_pile(seed=0):
    game = two_player_game(seed=seed)
    while game.round.draw_pile:
        keep_turn(game, game.round.turn, (0, 0))
    assert len(game.round.discard) == 126
    assert not [m for m in game.round.moves if m["type"] == "reshuffle"]
    return game


def test_reshuffle_when_the_draw_pile_is_empty():
    game = exhaust_draw_pile()
    # taking the discard does not need the draw pile
    p = game.round.turn
    game.apply(p, TakeDiscard(0, 0))
    assert game.round.draw_pile == []
    assert game.round.moves[-1]["type"] == "take_discard"
    p = game.round.turn
    before = list(game.round.discard)
    game.apply(p, Draw())
    reshuffle = game.round.moves[-1]
    assert reshuffle["type"] == "reshuffle" and "player" not in reshuffle
    order = reshuffle["draw_pile"]
    assert Counter(order) == Counter(before[:-1]) and len(order) == 125
    assert game.round.discard == [before[-1]]
    assert game.round.drawn == order[0]
    assert game.round.draw_pile == list(reversed(order[1:]))
    assert order != before[:-1]  # shuffled
    game.apply(p, KeepDrawn(0, 0))
    assert game.round.moves[-2]["type"] == "reshuffle"
    assert game.round.moves[-1]["type"] == "draw"
    check_invariants(game)
    # seeded: the same game gives the same order, another seed another order
    again = exhaust_draw_pile()
    again.apply(again.round.turn, TakeDiscard(0, 0))
    again.apply(again.round.turn, Draw())
    assert again.round.moves[-1]["draw_pile"] == order
    other = exhaust_draw_pile(seed=1)
    other.apply(other.round.turn, TakeDiscard(0, 0))
    other.apply(other.round.turn, Draw())
    assert other.round.moves[-1]["draw_pile"] != order
    # and the record replays it
    assert replay(to_record(game)).round.draw_pile == game.round.draw_pile


# ----- end of a round ---------------------------------------------------------------


def test_round_end_gives_each_other_player_one_last_turn_in_order():
    grids = [[[12, 0], [1, -2]], [[1, 2], [3, 4]], [[3, 1], [2, 5]]]
    game = quick_game(grids)
    assert game.round.turn == "p1"
    keep_turn(game, "p1", (0, 0))
    flip_turn(game, "p2", (1, 1))
    rnd = game.round
    assert rnd.ender == "p2" and rnd.last_turns == ["p3", "p1"]
    assert {"type": "ended", "player": "p2"} in rnd.log
    assert rnd.turn == "p3"
    assert_illegal(game, "p1", Draw(), "It is Cat's turn")
    assert_illegal(game, "p2", Draw(), "It is Cat's turn")
    keep_turn(game, "p3", (0, 0))  # Cat keeps her face-down card hidden
    assert game.phase == PLAY and rnd.turn == "p1" and rnd.last_turns == ["p1"]
    flip_turn(game, "p1", (1, 1))  # Ann turns her last card: she does not "end" again
    assert rnd.ender == "p2"
    assert game.phase == ROUND_OVER
    # final reveal: every card is face up
    assert all(s != DOWN for g in rnd.grids.values() for s in g.state)
    assert rnd.result["ender"] == "p2"
    assert_illegal(game, "p2", Draw(), "The round is over")
    check_invariants(game)


def test_final_reveal_clears_and_cleared_cards_score_nothing():
    grids = [[[12, 0], [1, -2]], [[1, 4], [3, 4]]]  # Bob's hidden 4 completes column 1
    game = quick_game(grids, draw=(10, 6))
    flip_turn(game, "p1", (1, 1))  # Ann ends
    card = keep_turn(game, "p2", (0, 0))  # Bob keeps a 6 over his 1, (1, 1) stays down
    assert card == 6
    assert game.phase == ROUND_OVER
    assert grid_values(game, "p2") == [[6, None], [3, None]]
    assert game.round.discard[-3:] == [1, 4, 4]
    assert game.round.result["raw"] == {"p1": 11, "p2": 9}


def test_final_reveal_clears_several_columns_left_to_right():
    rules = RuleSet(cols=3, initial_flips=4)
    ann = [[1, 2, 3], [4, 5, 6], [8, 9, 10]]
    bob = [[7, 1, 3], [7, 2, 3], [7, 4, 3]]
    draw = [11, 12] * 5
    game = fixed_game([ann, bob], 0, draw, rules=rules)
    reveal(game, "p1", (0, 0), (0, 1), (0, 2), (1, 0))
    reveal(game, "p2", (0, 0), (1, 0), (0, 2), (1, 2))
    while game.phase == PLAY:
        p = game.round.turn
        if p == "p1":
            flip_turn(game, p, first_down(game, p))
        else:
            kept = keep_turn(game, p, (0, 1))
    assert game.round.ender == "p1"
    assert grid_values(game, "p2") == [[None, kept, None], [None, 2, None], [None, 4, None]]
    assert game.round.discard[-6:] == [7, 7, 7, 3, 3, 3]
    clears = [(e["line"], e["index"]) for e in game.round.log if e["type"] == "clear"]
    assert clears == [("column", 0), ("column", 2)]
    assert game.round.result["raw"]["p2"] == kept + 2 + 4
    check_invariants(game)


def test_final_reveal_clears_several_rows_top_to_bottom():
    rules = RuleSet(cols=3, initial_flips=4, clear_rows=True)
    ann = [[1, 2, 3], [4, 5, 6], [8, 9, 10]]
    bob = [[6, 6, 6], [1, 3, 4], [2, 2, 2]]
    draw = [11, 12] * 5
    game = fixed_game([ann, bob], 0, draw, rules=rules)
    reveal(game, "p1", (0, 0), (0, 1), (0, 2), (1, 0))
    reveal(game, "p2", (0, 0), (0, 1), (2, 0), (2, 1))
    while game.phase == PLAY:
        p = game.round.turn
        if p == "p1":
            flip_turn(game, p, first_down(game, p))
        else:
            kept = keep_turn(game, p, (1, 0))
    rows = grid_values(game, "p2")
    assert rows[0] == [None] * 3 and rows[2] == [None] * 3
    assert rows[1] == [kept, 3, 4]
    assert game.round.discard[-6:] == [6, 6, 6, 2, 2, 2]
    # one card left in each column: no column clears
    assert game.round.result["raw"]["p2"] == sum(rows[1])


# ----- scoring ----------------------------------------------------------------------

# The ender (Ann) shows the highest cards at setup, starts and turns her last card at
# once; everyone else turns theirs in their last turn. Raw scores are the grid sums.
EX_10_24_10 = [[[12, 0], [0, -2]], [[1, 2], [9, 12]], [[3, 4], [1, 2]]]
EX_8_11_8 = [[[10, 0], [0, -2]], [[2, 3], [4, 2]], [[1, 2], [2, 3]]]
EX_12_8_12 = [[[12, 1], [1, -2]], [[1, 2], [2, 3]], [[3, 4], [4, 1]]]
EX_M3 = [[[0, -1], [-2, 0]], [[-2, -1], [-1, -2]], [[-2, -1], [-1, 12]]]


def play_quick_round(grids, rules=None):
    game = quick_game(grids, rules=rules)
    assert game.round.starter == "p1"
    flip_until_round_end(game)
    assert game.round.ender == "p1"
    return game


@pytest.mark.parametrize(
    ("grids", "raw", "scores"),
    [
        (EX_10_24_10, [10, 24, 10], [20, 24, 10]),
        (EX_8_11_8, [8, 11, 8], [16, 11, 8]),
        (EX_12_8_12, [12, 8, 12], [24, 8, 12]),
        (EX_M3, [-3, -6, 8], [-3, -6, 8]),
    ],
)
def test_worked_scoring_examples(grids, raw, scores):
    game = play_quick_round(grids)
    result = game.round.result
    ids = ["p1", "p2", "p3"]
    assert result["ender"] == "p1"
    assert result["raw"] == dict(zip(ids, raw, strict=True))
    assert result["scores"] == dict(zip(ids, scores, strict=True))
    assert result["totals"] == dict(zip(ids, scores, strict=True))
    assert game.totals == dict(zip(ids, scores, strict=True))
    assert game.penalised() == (raw != scores)
    assert game.round.log[-1] == {
        "type": "round_end",
        "ender": "p1",
        "penalised": raw != scores,
    }


@pytest.mark.parametrize(
    ("grids", "ender_raw", "ender_score"),
    [
        ([[[12, 0], [0, -2]], [[1, 2], [9, 12]]], 10, 10),  # strictly lowest
        ([[[12, 0], [0, -2]], [[1, 2], [3, 4]]], 10, 20),  # tie: penalised
        ([[[2, 0], [0, -2]], [[1, -1], [0, 0]]], 0, 0),  # tie at 0: never penalised
        ([[[3, 0], [1, -2]], [[-2, -1], [-1, -2]]], 2, 4),  # above a negative score
        ([[[0, -1], [-2, 0]], [[-2, -1], [-1, -2]]], -3, -3),  # negative: never penalised
    ],
)
def test_ender_penalty_cases(grids, ender_raw, ender_score):
    game = play_quick_round(grids)
    assert game.round.result["raw"]["p1"] == ender_raw
    assert game.round.result["scores"]["p1"] == ender_score
    assert game.round.result["scores"]["p2"] == game.round.result["raw"]["p2"]


@pytest.mark.parametrize(
    ("penalty", "expected"),
    [
        (Penalty("multiplier", 3), 30),
        (Penalty("multiplier", 5), 50),
        (Penalty("flat", flat=7), 17),
        (Penalty("flat", flat=50), 60),
        (Penalty("both", 4, 5), 45),
        (Penalty("both", 2, 1), 21),
    ],
)
def test_penalty_modes(penalty, expected):
    game = play_quick_round(EX_10_24_10, quick_rules(penalty=penalty))
    assert game.round.result["scores"] == {"p1": expected, "p2": 24, "p3": 10}
    # no penalty below zero, whatever the mode
    game = play_quick_round(EX_M3, quick_rules(penalty=penalty))
    assert game.round.result["scores"]["p1"] == -3


def test_running_totals_and_game_end():
    grids = [[[12, 0], [1, -2]], [[1, 2], [3, 4]]]  # Ann 11 (penalised: 22), Bob 10
    rules = quick_rules(end_score=40)
    game = quick_game(grids, rules=rules)
    flip_until_round_end(game)
    assert game.phase == ROUND_OVER and not game.is_over
    assert game.totals == {"p1": 22, "p2": 10}
    deck = build_deck(grids, 7, rules=rules)
    game.start_next_round(seating=["p1", "p2"], deck=deck)
    for p in ("p1", "p2"):
        reveal(game, p, (0, 0), (0, 1), (1, 0))
    flip_until_round_end(game)
    assert game.round.result["totals"] == {"p1": 44, "p2": 20}
    assert game.phase == GAME_OVER and game.is_over
    assert [r.result["scores"] for r in game.rounds] == [{"p1": 22, "p2": 10}] * 2
    assert game.ranking() == [
        {"player": "p2", "rank": 1, "total": 20},
        {"player": "p1", "rank": 2, "total": 44},
    ]
    with pytest.raises(IllegalMove):
        game.start_next_round()
    assert_illegal(game, "p1", Draw(), "The game is over")
    assert_illegal(game, "p1", Forfeit(), "The game is over")


@pytest.mark.parametrize(("end_score", "over"), [(21, True), (22, True), (23, False)])
def test_game_ends_at_or_above_end_score(end_score, over):
    grids = [[[12, 0], [1, -2]], [[1, 2], [3, 4]]]
    game = quick_game(grids, rules=quick_rules(end_score=end_score))
    keep_turn(game, "p1", (0, 0))  # Ann keeps the 1 over her 12: raw 0
    assert game.phase == PLAY and not game.is_over
    game = quick_game(grids, rules=quick_rules(end_score=end_score))
    flip_until_round_end(game)
    assert game.totals["p1"] == 22
    assert game.is_over == over
    assert game.phase == (GAME_OVER if over else ROUND_OVER)


def test_game_never_ends_mid_round():
    # Bob's face-up cards add up to 24 > 10 during the last turns: only the scored
    # round's totals count.
    game = quick_game(EX_10_24_10, rules=quick_rules(end_score=10))
    flip_turn(game, "p1", (1, 1))
    flip_turn(game, "p2", (1, 1))
    assert game.round.grids["p2"].score() == 24
    assert game.phase == PLAY and not game.is_over and game.round.turn == "p3"
    flip_turn(game, "p3", (1, 1))
    assert game.phase == GAME_OVER


def test_ranking_shares_ranks():
    grids = [[[10, 0], [0, -2]], [[2, 3], [1, 2]], [[1, 2], [2, 3]]]  # 8, 8, 8
    game = play_quick_round(grids)
    assert game.round.result["scores"] == {"p1": 16, "p2": 8, "p3": 8}
    ranking = game.ranking()
    assert ranking_key(ranking) == [(1, "p2", 8), (1, "p3", 8), (3, "p1", 16)]
    assert [e["rank"] for e in ranking] == [1, 1, 3]


# ----- forfeits ---------------------------------------------------------------------

THREE = [[[12, 0], [1, -2]], [[1, 2], [3, 4]], [[3, 1], [2, 5]]]


def test_forfeit_on_your_turn_with_a_drawn_card():
    game = quick_game(THREE, draw=(9, 6))
    game.apply("p1", Draw())
    assert game.round.drawn == 9
    pile = len(game.round.draw_pile)
    game.apply("p1", Forfeit())
    rnd = game.round
    assert rnd.drawn is None and rnd.draw_pile[-1] == 9 and len(rnd.draw_pile) == pile + 1
    assert rnd.turn == "p2" and game.forfeited == ["p1"]
    assert rnd.moves[-1] == {"player": "p1", "type": "forfeit"}
    assert game.legal_actions("p1") == []
    assert_illegal(game, "p1", Draw(), "You have left this game")
    assert_illegal(game, "p1", Forfeit(), "You have left this game")
    assert [p["forfeited"] for p in view(game, "p2")["players"]] == [True, False, False]
    check_invariants(game)
    game.apply("p2", Draw())
    assert game.round.drawn == 9  # nobody saw it: Bob draws the same card
    game.apply("p2", DiscardDrawn((1, 1)))
    assert game.round.ender == "p2" and game.round.last_turns == ["p3"]
    flip_turn(game, "p3", (1, 1))
    result = game.round.result
    assert set(result["raw"]) == {"p2", "p3"}
    assert game.totals["p1"] == 0
    # Ann has the lowest total but ranks last
    assert game.ranking()[-1] == {"player": "p1", "rank": 3, "total": 0}
    check_invariants(game)


def test_forfeit_out_of_turn_keeps_the_turn():
    game = quick_game(THREE)
    game.apply("p1", Draw())
    game.apply("p3", Forfeit())
    assert game.round.turn == "p1" and game.round.drawn is not None
    game.apply("p1", KeepDrawn(0, 0))
    assert game.round.turn == "p2"
    keep_turn(game, "p2", (0, 0))
    assert game.round.turn == "p1"  # Cat is skipped


def test_forfeit_during_setup():
    game = fixed_game([A, B, A], 5)
    reveal(game, "p1", (0, 0), (0, 1))
    game.apply("p3", Forfeit())
    assert game.phase == SETUP
    assert game.legal_actions("p3") == []
    reveal(game, "p2", (2, 2), (2, 3))
    assert game.phase == PLAY and game.round.starter == "p2"
    # the last player to flip leaves: play starts at once
    game = fixed_game([A, B, A], 5)
    reveal(game, "p1", (0, 0), (0, 1))
    reveal(game, "p2", (0, 0))
    reveal(game, "p3", (2, 3), (2, 2))
    game.apply("p2", Forfeit())
    assert game.phase == PLAY and game.round.starter == "p3"
    check_invariants(game)


def test_forfeit_during_last_turns():
    grids = [*THREE, [[4, 1], [2, 6]]]
    game = quick_game(grids)
    flip_turn(game, "p1", (1, 1))
    assert game.round.last_turns == ["p2", "p3", "p4"]
    game.apply("p3", Forfeit())  # not on turn
    assert game.round.last_turns == ["p2", "p4"] and game.round.turn == "p2"
    flip_turn(game, "p2", (1, 1))
    assert game.round.turn == "p4"
    game.apply("p4", Draw())
    game.apply("p4", Forfeit())  # the last one to play leaves: the round is scored
    assert game.phase == ROUND_OVER
    assert set(game.round.result["raw"]) == {"p1", "p2"}
    ranking = game.ranking()
    assert {e["player"]: e["rank"] for e in ranking[2:]} == {"p3": 3, "p4": 3}
    check_invariants(game)


def test_forfeit_of_the_ender_during_last_turns():
    game = quick_game(THREE)
    flip_turn(game, "p1", (1, 1))
    game.apply("p1", Forfeit())
    assert game.phase == PLAY and game.round.turn == "p2"
    flip_until_round_end(game)
    result = game.round.result
    assert result["ender"] == "p1" and set(result["scores"]) == {"p2", "p3"}


@pytest.mark.parametrize("when", ["setup", "own_turn", "drawn", "other_turn", "last_turn"])
def test_forfeit_leaving_one_player_ends_the_game_unscored(when):
    grids = [[[12, 0], [1, -2]], [[1, 2], [3, 4]]]
    if when == "setup":
        game = fixed_game(grids, 7, rules=quick_rules())
        game.apply("p1", Reveal(0, 0))
    else:
        game = quick_game(grids)
    if when == "drawn":
        game.apply("p1", Draw())
    if when == "last_turn":
        flip_turn(game, "p1", (1, 1))
    leaver = "p2" if when in ("other_turn", "last_turn") else "p1"
    game.apply(leaver, Forfeit())
    assert game.phase == GAME_OVER and game.is_over
    assert game.round.result is None
    assert game.totals == {"p1": 0, "p2": 0}
    stayer = "p1" if leaver == "p2" else "p2"
    assert game.ranking() == [
        {"player": stayer, "rank": 1, "total": 0},
        {"player": leaver, "rank": 2, "total": 0},
    ]
    record = to_record(game)
    assert "result" not in record["rounds"][-1]
    assert record["final"]["ended"] is True and record["final"]["forfeited"] == [leaver]
    assert ranking_key(replay(record).ranking()) == ranking_key(game.ranking())
    assert_illegal(game, stayer, Draw(), "The game is over")
    check_invariants(game)


def test_forfeit_after_a_scored_round_keeps_earlier_totals():
    grids = [[[12, 0], [1, -2]], [[1, 2], [3, 4]], [[3, 1], [2, 5]]]
    game = quick_game(grids, rules=quick_rules(end_score=1000))
    flip_until_round_end(game)
    totals = dict(game.totals)
    game.apply("p3", Forfeit())
    assert game.phase == ROUND_OVER
    game.start_next_round()
    assert game.round.seating == ["p1", "p2"] and set(game.round.grids) == {"p1", "p2"}
    game.apply("p2", Reveal(0, 0))
    game.apply("p1", Forfeit())
    assert game.is_over and game.totals == totals
    assert [e["rank"] for e in game.ranking()] == [1, 2, 2]
    assert {e["player"] for e in game.ranking()[1:]} == {"p1", "p3"}


def test_forfeited_players_rank_last_sharing_a_rank():
    grids = [[[12, 0], [1, -2]], [[1, 2], [3, 4]], [[3, 1], [2, 5]], [[4, 1], [2, 6]]]
    game = quick_game(grids, rules=quick_rules(end_score=1000))
    flip_until_round_end(game)
    assert game.totals == {"p1": 22, "p2": 10, "p3": 11, "p4": 13}
    game.apply("p2", Forfeit())  # lowest total, leaves
    game.start_next_round()
    game.apply("p4", Forfeit())
    ranking = game.ranking()
    assert ranking_key(ranking) == [
        (1, "p3", 11),
        (2, "p1", 22),
        (3, "p2", 10),
        (3, "p4", 13),
    ]
    assert [e["player"] for e in ranking[:2]] == ["p3", "p1"]


# ----- seating ----------------------------------------------------------------------


def play_rounds(game, rounds, seed=0):
    """Random legal moves until `rounds` rounds were dealt (or the game ends)."""
    rng = random.Random(seed)
    while not game.is_over:
        if game.phase == ROUND_OVER:
            if len(game.rounds) >= rounds:
                return
            game.start_next_round()
            continue
        if game.phase == SETUP:
            p = rng.choice([p for p in game.round.seating if game.legal_actions(p)])
        else:
            p = game.round.turn
        game.apply(p, rng.choice(game.legal_actions(p)))


def seatings(reseat, seed, rounds=4, n=5, forfeit=None):
    game = Game(players(n), quick_rules(end_score=1000, reseat=reseat), seed=seed)
    play_rounds(game, 1, seed)
    if forfeit:
        game.apply(forfeit, Forfeit())
    play_rounds(game, rounds, seed)
    return [r.seating for r in game.rounds]


def test_reseat_never_keeps_lobby_order():
    for seed in range(5):
        assert seatings("never", seed) == [["p1", "p2", "p3", "p4", "p5"]] * 4
    assert seatings("never", 0, forfeit="p2")[1:] == [["p1", "p3", "p4", "p5"]] * 3


def test_reseat_round_shuffles_before_every_round():
    lobby = ["p1", "p2", "p3", "p4", "p5"]
    changed_between_rounds = False
    first_differs = False
    for seed in range(10):
        seats = seatings("round", seed)
        assert all(sorted(s) == lobby for s in seats)
        assert seats == seatings("round", seed)  # seeded
        changed_between_rounds |= len({tuple(s) for s in seats}) > 1
        first_differs |= seats[0] != lobby
    assert changed_between_rounds and first_differs
    assert seatings("round", 1) != seatings("round", 2)
    seats = seatings("round", 3, forfeit="p4")
    assert all(sorted(s) == ["p1", "p2", "p3", "p5"] for s in seats[1:])


def test_reseat_game_shuffles_once_per_game():
    lobby = ["p1", "p2", "p3", "p4", "p5"]
    firsts = set()
    for seed in range(10):
        seats = seatings("game", seed)
        assert sorted(seats[0]) == lobby
        assert all(s == seats[0] for s in seats)
        assert seats == seatings("game", seed)
        firsts.add(tuple(seats[0]))
    assert len(firsts) > 1
    seats = seatings("game", 4, forfeit="p3")
    assert seats[1:] == [[p for p in seats[0] if p != "p3"]] * 3


# ----- hidden totals ----------------------------------------------------------------


def test_hidden_running_score():
    grids = [[[12, 0], [1, -2]], [[1, 2], [3, 4]]]
    rules = quick_rules(end_score=40, show_running_score=False)
    game = quick_game(grids, rules=rules)
    flip_until_round_end(game)
    assert game.phase == ROUND_OVER and game.totals == {"p1": 22, "p2": 10}
    for who in ("p1", "p2", None):
        data = view(game, who)
        assert [p["total"] for p in data["players"]] == [None, None]
        assert data["round"]["result"]["totals"] is None
        assert data["ranking"] is None
    game.start_next_round(seating=["p1", "p2"], deck=build_deck(grids, 7, rules=rules))
    for p in ("p1", "p2"):
        reveal(game, p, (0, 0), (0, 1), (1, 0))
    assert view(game, "p1")["previous_result"]["totals"] is None
    flip_until_round_end(game)
    assert game.is_over
    for who in ("p1", "p2", None):
        data = view(game, who)
        assert [p["total"] for p in data["players"]] == [44, 20]
        assert data["round"]["result"]["totals"] == {"p1": 44, "p2": 20}
        assert list(data["ranking"]) == game.ranking()


def test_shown_running_score():
    game = quick_game([[[12, 0], [1, -2]], [[1, 2], [3, 4]]], rules=quick_rules(end_score=40))
    flip_until_round_end(game)
    data = view(game, "p2")
    assert [p["total"] for p in data["players"]] == [22, 10]
    assert data["round"]["result"]["totals"] == {"p1": 22, "p2": 10}


# ----- illegal moves ----------------------------------------------------------------


def test_illegal_moves_in_play_change_nothing():
    game = two_player_game()
    assert_illegal(game, "p2", Draw(), "It is Ann's turn")
    assert_illegal(game, "p2", TakeDiscard(0, 0), "It is Ann's turn")
    assert_illegal(game, "p1", KeepDrawn(0, 0), "Draw a card first")
    assert_illegal(game, "p1", DiscardDrawn((1, 1)), "Draw a card first")
    assert_illegal(game, "p1", DiscardDrawn(None), "Draw a card first")
    assert_illegal(game, "p1", TakeDiscard(3, 0), "There is no card at that position")
    assert_illegal(game, "p1", TakeDiscard(0, 4), "There is no card at that position")
    assert_illegal(game, "p1", TakeDiscard(-1, 0), "There is no card at that position")
    assert_illegal(game, "p1", Reveal(1, 1), "Play has started")
    assert_illegal(game, "zed", Draw(), "You are not playing in this game")
    game.apply("p1", Draw())
    assert_illegal(game, "p1", Draw(), "You have drawn a card: keep it or discard it")
    assert_illegal(game, "p1", TakeDiscard(0, 0), "You have drawn a card")
    assert_illegal(game, "p2", KeepDrawn(0, 0), "It is Ann's turn")
    assert_illegal(game, "p1", KeepDrawn(5, 5), "There is no card at that position")
    assert_illegal(game, "p1", DiscardDrawn((0, 1)), "That card is already face up")
    assert_illegal(game, "p1", DiscardDrawn((9, 0)), "There is no card at that position")
    assert_illegal(game, "p1", DiscardDrawn(None), "Choose a face-down card")
    assert_illegal(game, "p1", Reveal(2, 2), "Play has started")
    game.apply("p1", KeepDrawn(0, 0))
    assert_illegal(game, "p1", Draw(), "It is Bob's turn")
    with pytest.raises(IllegalMove) as info:
        game.start_next_round()
    assert info.value.reason == "The round is still being played"


def test_illegal_moves_between_rounds_and_after_the_game():
    game = quick_game([[[12, 0], [1, -2]], [[1, 2], [3, 4]]], rules=quick_rules(end_score=40))
    flip_until_round_end(game)
    for p, action in [("p1", Draw()), ("p2", TakeDiscard(0, 0)), ("p1", Reveal(0, 0))]:
        assert_illegal(game, p, action, "The round is over; the next one has not started yet")
    assert game.legal_actions("p1") == [] and game.legal_actions("p2") == []
    game.start_next_round()
    assert_illegal(game, "p1", KeepDrawn(0, 0), "Turn your first cards face up")
    game.apply("p2", Forfeit())
    assert_illegal(game, "p1", Reveal(0, 0), "The game is over")
    assert game.legal_actions("p1") == []


def test_rejected_move_in_a_quick_grid():
    game = quick_game([[[12, 0], [1, -2]], [[1, 2], [3, 4]]])
    assert_illegal(game, "p1", TakeDiscard(0, 2), "There is no card at that position")
    assert_illegal(game, "p1", TakeDiscard(2, 0), "There is no card at that position")
    before = snapshot(game)
    with pytest.raises(IllegalMove):
        game.apply("p2", Draw())
    assert snapshot(game) == before

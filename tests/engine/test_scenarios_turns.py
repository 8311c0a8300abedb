"""Fixed-deck scenarios: a turn, clearing lines and the draw pile running out.

Decks are listed in dealing order (each seat's grid row-major, the discard card, then
the draw pile next card first); `build_deck` fills the rest with the unused cards."""

import json
from collections import Counter

import pytest

from app.engine import (
    DiscardDrawn,
    Draw,
    Game,
    KeepDrawn,
    RuleSet,
    TakeDiscard,
    replay,
    to_record,
    view,
)
from tests.engine.engine_helpers import (
    DOWN,
    GONE,
    UP,
    A,
    B,
    assert_illegal,
    check_invariants,
    fixed_game,
    flip_turn,
    grid_values,
    keep_turn,
    quick_rules,
    reveal,
    state_at,
    two_player_game,
    value_at,
)

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

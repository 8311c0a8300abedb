"""Fixed-deck scenarios: forfeits, seating, hidden totals and illegal moves.

Decks are listed in dealing order (each seat's grid row-major, the discard card, then
the draw pile next card first); `build_deck` fills the rest with the unused cards."""

import random

import pytest

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
    Reveal,
    TakeDiscard,
    replay,
    to_record,
    view,
)
from tests.engine.engine_helpers import (
    A,
    B,
    assert_illegal,
    build_deck,
    check_invariants,
    fixed_game,
    flip_turn,
    flip_until_round_end,
    keep_turn,
    players,
    quick_game,
    quick_rules,
    ranking_key,
    reveal,
    snapshot,
    two_player_game,
)

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

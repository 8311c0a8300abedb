"""The lesson's hints (app.features.lesson): each one true for the learner's view of the
engine's state, pointing at a control whose move is legal now, with fixed deals for each
kind of hint, and random and hint-following play-outs of the lesson's deal."""

from __future__ import annotations

import random

import pytest

from app.bots.registry import choose
from app.engine import DECK, Game, Player, RuleSet, action_from_dict, view
from app.features.lesson import hint
from app.tables.lesson import BOT, RULES, SEED, deck
from app.tables.playing import bot_setup

NAMES = {"me": "Ann", "bot": "Gobbler"}


def game_of(cards: list[int], rules: RuleSet = RULES, bot_setup_done=True) -> Game:
    """A lesson-like game (the learner first, then a greedy bot) dealt from `cards` (the
    learner's grid, the bot's, the discard pile's card, then the draw pile from its
    top), the rest of the deck after them."""
    rest = list(DECK)
    for card in cards:
        rest.remove(card)
    game = Game([Player("me", "Ann"), Player("bot", "Gobbler", BOT)], rules, SEED, deal=False)
    game.start_next_round(deck=cards + rest)
    if bot_setup_done:
        bot_setup(game)
    return game


def hint_of(game: Game, mode=None) -> dict:
    return hint(view(game, "me"), NAMES, "me", mode)


def play(game: Game, action: dict) -> None:
    game.apply("me", action_from_dict(action))


LOW_BOT = [0, 1, -1, 0] * 3  # the bot's grid: low, so that the learner starts


def test_the_setup_hint_asks_for_two_cards_and_points_at_the_first_column():
    game = game_of(deck())
    first = hint_of(game)
    assert first["point"] == "grid" and first["cell"] == "0-0"
    assert "turning over 2 cards" in first["text"]
    play(game, {"type": "reveal", "row": 2, "col": 3})  # the learner may press any card
    second = hint_of(game)
    assert second == {"text": "Turn over 1 more card.", "point": "grid", "cell": "0-0"}


def test_a_discard_that_completes_a_column_is_pointed_at_with_its_cell():
    # Column 1 holds 4, 4 and a face-down 9; the discard pile shows a 4.
    mine = [4, 1, 1, 2, 4, 2, 2, 1, 9, 1, 2, 2]
    game = game_of(mine + LOW_BOT + [4])
    play(game, {"type": "reveal", "row": 0, "col": 0})
    play(game, {"type": "reveal", "row": 1, "col": 0})
    bot_turns(game)
    found = hint_of(game)
    assert found["point"] == "take" and found["cell"] == "2-0"
    assert "column 1" in found["text"] and "cleared" in found["text"]
    # Without JavaScript the take mode's page says where, on the same card.
    assert hint_of(game, "take")["cell"] == "2-0"
    play(game, {"type": "take_discard", "row": 2, "col": 0})
    said = hint_of(game)  # the bot's turn now: the learner's clear is told
    assert said["text"].startswith("Cleared! Three equal cards in a column leave the grid")
    assert said["point"] == ""
    bot_turns(game)  # and again on the learner's next turn, after the bot's
    assert game.round.turn == "me"
    assert hint_of(game)["text"].startswith("Cleared! Three equal cards")
    play(game, {"type": "draw"})
    assert "Cleared!" not in hint_of(game)["text"]  # once a new move is made: no more


MINE = [12, 1, 1, 2, 5, 2, 2, 1, 9, 1, 2, 2]  # a 12 and a 5 in the first column


def learner_to_play(cards: list[int]) -> Game:
    """A game dealt from `cards` where the learner has turned the 12 and the 5 over
    and starts (the bot's cards are low)."""
    game = game_of(cards)
    play(game, {"type": "reveal", "row": 0, "col": 0})
    play(game, {"type": "reveal", "row": 1, "col": 0})
    assert game.round.turn == "me"
    return game


def test_a_low_discard_is_taken_for_the_highest_card():
    take = hint_of(learner_to_play(MINE + LOW_BOT + [0]))
    assert take == {
        "text": "Take the 0 from the discard pile and put it in place of your 12: lower is better.",
        "point": "take",
        "cell": "0-0",
    }


def test_a_high_discard_is_passed_over_for_the_draw_pile():
    found = hint_of(learner_to_play(MINE + LOW_BOT + [11]))
    assert found["point"] == "draw" and found["cell"] == ""
    assert found["text"].startswith("The 11 on the discard pile would not help you")


def test_a_drawn_low_card_is_kept_in_place_of_the_highest():
    game = learner_to_play(MINE + LOW_BOT + [11, 0])
    play(game, {"type": "draw"})
    assert hint_of(game) == {
        "text": "A 0 is low: keep it in place of your 12.",
        "point": "grid",
        "cell": "0-0",
    }


def test_a_drawn_high_card_is_discarded_for_a_face_down_card():
    game = learner_to_play(MINE + LOW_BOT + [11, 12])
    play(game, {"type": "draw"})
    found = hint_of(game)
    assert found == {
        "text": "A 12 is high: discard it and turn over one of your face-down cards.",
        "point": "flip",
        "cell": "",
    }
    # Without JavaScript the flip mode's page asks for the card itself.
    assert hint_of(game, "flip")["point"] == "grid"


def test_the_last_card_of_a_pair_column_is_suggested_when_turning_a_card_over():
    mine = [6, 1, 1, 2, 6, 2, 2, 1, 6, 1, 2, 2]
    game = learner_to_play(mine + LOW_BOT + [10, 11])
    play(game, {"type": "draw"})  # an 11
    found = hint_of(game)
    assert found["point"] == "flip" and found["cell"] == "2-0"
    assert "Try the last card of column 1: if it is a 6 too, the column clears." in found["text"]
    assert hint_of(game, "flip")["cell"] == "2-0"


def test_last_turns_and_the_enders_penalty_are_told():
    # A 2 × 2 grid with three cards turned at the start: the learner (high cards: they
    # start) ends the round by turning over their last card, without the lowest score.
    # (No column of two equal cards: a 2-row grid clears those.)
    rules = RuleSet(rows=2, cols=2, initial_flips=3, end_score=10)
    game = game_of([12, 11, 10, 9] + [0, 0, 1, 1] + [5, 12], rules)
    for row, col in ((0, 0), (0, 1), (1, 0)):
        play(game, {"type": "reveal", "row": row, "col": col})
    assert game.round.turn == "me"
    play(game, {"type": "draw"})  # a 12
    high = hint_of(game)
    assert high == {
        "text": "A 12 is high: discard it and turn over one of your face-down cards.",
        "point": "flip",
        "cell": "",
    }
    play(game, {"type": "discard_drawn", "flip": [1, 1]})
    assert "You turned over your last card" in hint_of(game)["text"]  # the bot's last turn
    bot_turns(game, until_mine=False)
    end = hint_of(game)
    assert game.phase == "game_over" and end["point"] == "next"
    assert "Every card still face down was turned over and counted." in end["text"]
    assert (
        "You ended the round without the lowest score, so your score counted double."
        in (end["text"])
    )
    assert "until someone reaches 100 points" in end["text"]


def test_the_bot_ending_the_round_gives_the_learner_a_last_turn():
    rules = RuleSet(rows=2, cols=2, initial_flips=3, end_score=10)
    # The learner starts (high cards) and takes the discard pile's 5 onto a face-up
    # card; the bot (low cards: no penalty to fear) turns its last card over.
    game = game_of([12, 11, 10, 9] + [0, 1, -1, 2] + [5, 12, 12, 12], rules)
    for row, col in ((0, 0), (0, 1), (1, 0)):
        play(game, {"type": "reveal", "row": row, "col": col})
    play(game, {"type": "take_discard", "row": 0, "col": 0})
    bot_turns(game)
    assert game.round.ender == "bot"
    found = hint_of(game)
    assert found["text"].startswith("Last turn! Gobbler has turned over every card")
    assert agrees(found, view(game, "me")["legal"]) == []


def bot_turns(game: Game, until_mine: bool = True) -> None:
    """The bot plays (its greedy policy, seeded) until it is the learner's turn, or
    the round ends."""
    rng = random.Random(1)
    for _ in range(20):
        if game.phase != "play" or game.round.turn == "me":
            return
        game.apply("bot", choose(BOT, view(game, "bot"), rng))
        if not until_mine and game.round.turn == "me":
            return


# ----- play-outs of the lesson's deal ---------------------------------------------------
def agrees(found: dict, legal) -> list[str]:
    """What is wrong with a hint given the learner's legal moves: the control it points
    at must make a legal move, and its card must be one a legal move may press."""
    kinds = {a["type"] for a in legal}
    cells = {(a["type"], f"{a['row']}-{a['col']}") for a in legal if "row" in a} | {
        ("discard_drawn", f"{a['flip'][0]}-{a['flip'][1]}")
        for a in legal
        if a["type"] == "discard_drawn" and a["flip"]
    }
    point, cell = found["point"], found["cell"]
    needs = {
        "draw": {"draw"},
        "take": {"take_discard"},
        "flip": {"discard_drawn"},
        "discard": {"discard_drawn"},
        "grid": {"reveal", "keep_drawn", "take_discard", "discard_drawn"},
    }
    wrong = []
    if point not in needs or not needs[point] & kinds:
        wrong.append(f"points at {point!r} with {sorted(kinds)} legal")
    if cell and not any((kind, cell) in cells for kind in needs.get(point, ())):
        wrong.append(f"points at card {cell} that no legal move presses")
    if not found["text"]:
        wrong.append("says nothing")
    return wrong


def lesson_game() -> Game:
    return game_of(deck(), bot_setup_done=True)


def follow(found: dict, legal, rng) -> dict:
    """The move a learner who does what the hint says makes."""
    point, cell = found["point"], found["cell"]
    kind = {"draw": "draw", "take": "take_discard", "flip": "discard_drawn"}.get(point)
    if point == "discard":
        return next(a for a in legal if a["type"] == "discard_drawn")
    candidates = [a for a in legal if kind is None or a["type"] == kind]
    if cell:
        at = [a for a in candidates if where(a) == cell]
        candidates = at or candidates
    return rng.choice(candidates)


def where(action) -> str:
    if action["type"] == "discard_drawn":
        return f"{action['flip'][0]}-{action['flip'][1]}" if action["flip"] else ""
    return f"{action.get('row')}-{action.get('col')}"


def play_out(game: Game, choose_move, rng) -> tuple[list[str], list[dict]]:
    wrong, seen = [], []
    for _ in range(300):
        if game.is_over:
            break
        v = view(game, "me")
        if v["legal"]:
            found = hint(v, NAMES, "me")
            seen.append(found)
            wrong += agrees(found, v["legal"])
            game.apply("me", action_from_dict(dict(choose_move(found, v["legal"], rng))))
        else:
            bot = game.round.turn
            game.apply(bot, choose(BOT, view(game, bot), rng))
    return wrong, seen


@pytest.mark.parametrize("seed", range(25))
def test_a_learner_playing_at_random_gets_true_hints_and_finishes(seed):
    game = lesson_game()
    wrong, _seen = play_out(game, lambda _h, legal, rng: rng.choice(legal), random.Random(seed))
    assert wrong == []
    assert game.is_over
    assert hint_of(game)["point"] == "next"


@pytest.mark.parametrize("seed", range(10))
def test_a_learner_who_follows_the_hints_clears_a_column_ends_the_round_and_wins(seed):
    game = lesson_game()
    wrong, seen = play_out(game, follow, random.Random(seed))
    assert wrong == []
    log = game.rounds[0].log
    assert any(e["type"] == "clear" and e["player"] == "me" for e in log)
    assert game.rounds[0].result["ender"] == "me"
    assert game.is_over and game.ranking()[0]["player"] == "me"
    points = {h["point"] for h in seen}
    assert {"grid", "draw", "take", "flip"} <= points  # every kind of move was taught


def test_a_watcher_gets_no_hint():
    game = lesson_game()
    assert hint(view(game, None), NAMES, None) is None

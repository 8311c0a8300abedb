"""The lesson (/learn): a first game at a real table against one bot, on a fixed and
friendly deal, to a low end score (so most likely one round). Its hints are the board's
(app.features.lesson); here are its table, its deal and the tables that follow it.

The deal: the learner's first column holds two 12s around a low card, and the discard
pile shows a third 12: turned over first (as the setup hint suggests), the two 12s make
the learner start (the bot's cards are all lower) and the discard pile's 12 clears the
column at once. Their last column is three 5s, the others pairs; the bot's grid is high,
so the learner can win; the draw pile starts with a high card (the bot throws it away),
a low one to keep and a high one to discard."""

from __future__ import annotations

import random
from collections import Counter

from app.engine import DECK, RuleSet
from app.storage.models import Seat, Table
from app.tables import service
from app.tables.lobby import add_bot_seat, create_table
from app.tables.playing import new_game
from app.tables.step import Change

LEARNER_GRID = (12, 8, 0, 5, 4, 1, 11, 5, 12, 8, 0, 5)  # row by row, four columns
BOT_GRID = (7, 10, 9, 11, 11, 6, 10, 9, 11, 7, 10, 8)
DISCARD = 12
DRAWS = (11, -2, 12, 9, 0, 5, -1, 3, 10, 4)  # the draw pile's first cards, its top first
RULES = RuleSet(end_score=10)  # a real game goes to 100: the lesson stops after a round
BOT = "greedy"
SEED = "skymo-lesson"  # the rest of the deck, and the bot's choices, the same each time
REAL_GAME_BOTS = 2  # "Play a real game": the learner and this many bots


def deck() -> list[int]:
    """The lesson's cards in dealing order: the learner's grid, the bot's, the discard
    pile's card, the draw pile from its top, then the rest of the deck in a fixed order."""
    dealt = [*LEARNER_GRID, *BOT_GRID, DISCARD, *DRAWS]
    rest = sorted((Counter(DECK) - Counter(dealt)).elements())
    random.Random(SEED).shuffle(rest)
    return dealt + rest


def start_lesson(name: str, user_id: int | None = None) -> tuple[Table, Seat]:
    """A lesson table, its game started: the learner (its host) against one bot."""
    table, seat = create_table(
        name, user_id=user_id, rules=RULES.to_dict(), chat=False, lesson=True
    )

    def act(ch: Change):
        add_bot_seat(ch, BOT)
        new_game(ch, ch.seats, seed=SEED, deck=deck())

    service.change(table.code, act)
    return table, seat


def start_real_game(name: str, user_id: int | None = None) -> tuple[Table, Seat]:
    """After the lesson: a table with the default rules, the player and bots, started."""
    table, seat = create_table(name, user_id=user_id)

    def act(ch: Change):
        for _ in range(REAL_GAME_BOTS):
            add_bot_seat(ch, BOT)
        new_game(ch, ch.seats)

    service.change(table.code, act)
    return table, seat

"""The lesson's table (app.tables.lesson): its fixed deal does what the lesson needs,
and a lesson table and the real game after it start as they should."""

from __future__ import annotations

from app.engine import DECK, Draw, Game, Player, Reveal, RuleSet, TakeDiscard, view
from app.storage.models import Seat, Table
from app.tables import lesson
from app.tables.playing import bot_setup


def dealt() -> Game:
    game = Game(
        [Player("me", "Ann"), Player("bot", "Gobbler", lesson.BOT)],
        lesson.RULES,
        lesson.SEED,
        deal=False,
    )
    game.start_next_round(deck=lesson.deck())
    return game


def test_the_deal_is_a_whole_deck_in_the_same_order_every_time():
    cards = lesson.deck()
    assert sorted(cards) == sorted(DECK) and cards == lesson.deck()
    game = dealt()
    assert tuple(game.round.grids["me"].values) == lesson.LEARNER_GRID
    assert tuple(game.round.grids["bot"].values) == lesson.BOT_GRID
    assert game.round.discard == [lesson.DISCARD]
    assert lesson.RULES.end_score < RuleSet().end_score  # most likely one round


def test_the_first_columns_two_twelves_start_the_game_and_the_discard_clears_them():
    game = dealt()
    bot_setup(game)  # whichever two cards the bot turns, they add up to less than 24
    assert max(lesson.BOT_GRID) < 12
    game.apply("me", Reveal(0, 0))
    game.apply("me", Reveal(2, 0))
    assert game.round.turn == "me"
    legal = view(game, "me")["legal"]
    assert {"type": "take_discard", "row": 1, "col": 0} in [dict(a) for a in legal]
    events = game.apply("me", TakeDiscard(1, 0))
    assert [e["type"] for e in events] == ["take_discard", "clear"]


def test_the_draw_pile_starts_with_the_lessons_cards():
    game = dealt()
    bot_setup(game)
    game.apply("me", Reveal(0, 1))
    game.apply("me", Reveal(0, 2))  # an 8 and a 0: the bot (higher) starts
    bot = game.round.turn
    assert bot == "bot"
    game.apply(bot, Draw())
    assert game.round.drawn == lesson.DRAWS[0]


def test_a_lesson_table_seats_the_learner_and_a_bot_and_starts(app):
    with app.app_context():
        table, seat = lesson.start_lesson("Ann")
        table = Table.get_by_id(table.code)
        seats = list(Seat.select().where(Seat.table == table.code).order_by(Seat.position))
    assert table.lesson and table.status == Table.PLAYING and table.chat is False
    assert table.host_seat == seat.id and table.turn_clock is None
    assert [(s.name, s.bot) for s in seats] == [("Ann", None), ("Gobbler", lesson.BOT)]


def test_the_real_game_after_it_has_the_default_rules_and_two_bots(app):
    with app.app_context():
        table, _seat = lesson.start_real_game("Ann")
        table = Table.get_by_id(table.code)
        bots = Seat.select().where((Seat.table == table.code) & Seat.bot.is_null(False)).count()
    assert not table.lesson and table.status == Table.PLAYING
    assert table.rules == RuleSet().to_dict() and bots == lesson.REAL_GAME_BOTS

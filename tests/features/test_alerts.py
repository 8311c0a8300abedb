"""Which moments a committed table brings (app.features.alerts.moments), and their words."""

from __future__ import annotations

from types import SimpleNamespace

from py_vapid import b64urlencode

from app import create_app, i18n
from app.engine import GAME_OVER, PLAY, SETUP, Game, RuleSet
from app.features.alerts import END, ROUND, TURN, Keys, Moment, message, moments
from app.storage.table_store import Snapshot


def snap_of(game: Game, bots=()) -> Snapshot:
    seats = [
        SimpleNamespace(id=int(p.id[1:]), player_id=p.id, bot="greedy" if p.id in bots else None)
        for p in game.players
    ]
    return Snapshot(SimpleNamespace(code="ABC", version=3), seats, game)


def a_game() -> Game:
    return Game([{"id": "s1", "name": "Ann"}, {"id": "s2", "name": "Bob"}], seed=4, game_id="g")


def test_a_round_that_starts_tells_every_person_but_no_bot():
    game = a_game()
    assert game.phase == SETUP
    assert moments(snap_of(game, bots={"s2"})) == [Moment(1, ROUND, "g:r1", 1)]
    assert {m.seat_id for m in moments(snap_of(game))} == {1, 2}


def test_a_turn_tells_its_player_once_for_the_whole_turn():
    game = a_game()
    game.phase = PLAY
    game.round.turn = "s2"
    first = moments(snap_of(game))
    assert first == [Moment(2, TURN, "g:r1:t0", 1)]
    game.round.moves.append({"type": "reshuffle", "draw_pile": []})  # still the same turn
    assert moments(snap_of(game)) == first
    game.round.moves.append({"player": "s2", "type": "draw", "keep": True})
    game.round.turn = "s1"
    assert moments(snap_of(game)) == [Moment(1, TURN, "g:r1:t1", 1)]


def test_the_end_tells_everyone():
    game = a_game()
    game.phase = GAME_OVER
    assert moments(snap_of(game)) == [Moment(1, END, "g:end", 1), Moment(2, END, "g:end", 1)]


def test_a_lobby_brings_no_moment():
    assert moments(Snapshot(SimpleNamespace(code="ABC"), [], None)) == []


def test_the_words_of_each_moment(tmp_path):
    app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{tmp_path / 'db'}"})
    with app.app_context(), i18n.speaking("en"):
        said = [message(Moment(1, kind, "k", 2), "ABC")["body"] for kind in (TURN, ROUND, END)]
    assert said == [
        "Your turn at table ABC.",
        "Round 2 begins at table ABC.",
        "The game at table ABC is over.",
    ]


def test_the_key_is_made_once_and_kept(tmp_path):
    first = Keys(tmp_path).public
    assert Keys(tmp_path).public == first  # read back, not made again
    assert (tmp_path / "vapid_private.pem").stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["vapid_private.pem"]
    given = Keys(tmp_path / "elsewhere", b64urlencode(b"\x01" * 32))
    assert given.public != first


def test_a_round_dealt_straight_into_play_tells_the_others_it_starts():
    game = Game(
        [{"id": "s1", "name": "Ann"}, {"id": "s2", "name": "Bob"}, {"id": "s3", "name": "Cat"}],
        rules=RuleSet(initial_flips=0),
        seed=4,
        game_id="g",
    )
    assert game.phase == PLAY
    starter = int(game.round.turn[1:])
    found = moments(snap_of(game))
    assert sorted((m.seat_id, m.kind) for m in found) == sorted(
        [(s, ROUND) for s in (1, 2, 3) if s != starter] + [(starter, TURN)]
    )

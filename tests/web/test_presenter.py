"""The presenter alone: no Flask app, request or database. Boards are built from a
snapshot of a real engine game, and what each viewer may do or see is checked against
the engine's own statement of it (legal_actions) and its secrets."""

from __future__ import annotations

import json
import random

import pytest

from app.engine import DOWN, PLAY, SETUP, Draw, Game, KeepDrawn, Player, RuleSet
from app.models import Seat, Table
from app.tables import Snapshot
from app.web.presenter import Shared, board

NAMES = ("Ann", "Bob", "Cat")


def snapshot(game: Game) -> Snapshot:
    seats = [Seat(id=i + 1, name=n, position=i, table="T") for i, n in enumerate(NAMES)]
    table = Table(code="T", status=Table.PLAYING, rules=game.rules.to_dict(), version=7)
    table.votes = {}
    table.host_seat = 1
    return Snapshot(table, seats, game)


def new_game(seed="present") -> Game:
    players = [Player(f"s{i + 1}", n) for i, n in enumerate(NAMES)]
    return Game(players, RuleSet(), seed=seed)


def seat(snap: Snapshot, name: str) -> Seat:
    return next(s for s in snap.seats if s.name == name)


def my_actions(b: dict) -> set:
    return {
        (c["action"]["type"], c["row"], c["col"])
        for row in b["me"]["grid"]
        for c in row
        if c["action"]
    }


def test_the_setup_offers_each_player_their_face_down_cards_only():
    game = new_game()
    snap = snapshot(game)
    shared = Shared(snap, present={1, 2, 3})
    for name in NAMES:
        me = seat(snap, name)
        b = board(shared, me)
        legal = {("reveal", a.row, a.col) for a in game.legal_actions(me.player_id)}
        assert my_actions(b) == legal and legal
        # The others' cards are never buttons.
        assert all("<button" not in o["grid_html"] for o in b["opponents"])
        assert [o["name"] for o in b["opponents"]] == [
            n for n in NAMES[NAMES.index(name) + 1 :] + NAMES[: NAMES.index(name)]
        ]


def play_to_turn(game: Game) -> str:
    rng = random.Random(3)
    while game.phase == SETUP:
        for p in game.players:
            options = game.legal_actions(p.id)
            if options:
                game.apply(p.id, rng.choice(options))
    assert game.phase == PLAY
    return game.round.turn


def test_only_the_player_whose_turn_it_is_may_act_and_sees_the_drawn_card():
    game = new_game()
    turn = play_to_turn(game)
    game.apply(turn, Draw())
    drawn = game.round.drawn
    snap = snapshot(game)
    shared = Shared(snap, present={1, 2, 3})
    for name in NAMES:
        me = seat(snap, name)
        b = board(shared, me)
        if me.player_id == turn:
            assert b["my_turn"] and b["drawn"] == drawn
            keeps = {
                ("keep_drawn", a.row, a.col)
                for a in game.legal_actions(turn)
                if isinstance(a, KeepDrawn)
            }
            assert my_actions(b) == keeps
        else:
            assert not b["my_turn"] and b["drawn"] is None and b["someone_drew"]
            assert my_actions(b) == set()


def test_no_face_down_value_and_no_draw_pile_reaches_any_board():
    game = new_game("secrets")
    turn = play_to_turn(game)
    game.apply(turn, Draw())
    snap = snapshot(game)
    shared = Shared(snap, present=set())
    rnd = game.round
    for name in (*NAMES, None):
        me = seat(snap, name) if name else None
        b = board(shared, me)
        text = json.dumps(b, default=str)
        assert "draw_pile" not in text
        for pid, grid in rnd.grids.items():
            shown = shared.cells[pid]
            for i, (value, state) in enumerate(zip(grid.values, grid.state, strict=True)):
                cell = shown[i // grid.cols][i % grid.cols]
                if state == DOWN:
                    assert "value" not in cell and "back" in str(cell["html"])
                    assert f">{value}<" not in str(cell["html"])
        if me is None or me.player_id != turn:
            assert b["drawn"] is None
            assert str(game.round.drawn) not in b["banner"]["text"]


@pytest.mark.parametrize("mode", ["take", "flip", "bogus"])
def test_a_mode_only_counts_when_it_can_be_used(mode):
    game = new_game()
    turn = play_to_turn(game)
    snap = snapshot(game)
    shared = Shared(snap, present=set())
    me = next(s for s in snap.seats if s.player_id == turn)
    other = next(s for s in snap.seats if s.player_id != turn)
    expected = "take" if mode == "take" else None  # nothing drawn: no flip yet
    assert board(shared, me, mode)["mode"] == expected
    assert board(shared, other, mode)["mode"] is None
    if mode == "take":
        assert {a[0] for a in my_actions(board(shared, me, mode))} == {"take_discard"}


def test_the_shared_part_is_built_once_for_every_viewer():
    game = new_game()
    play_to_turn(game)
    snap = snapshot(game)
    shared = Shared(snap, present={1})
    boards = [board(shared, seat(snap, n)) for n in NAMES]
    # The same opponent entries (and their rendered grids) serve every viewer.
    ann, bob, _ = boards
    assert ann["opponents"][1] is shared.opponent["s3"] is bob["opponents"][0]
    assert ann["log"] is bob["log"]
    assert [s["present"] for s in shared.seats] == [True, False, False]
    assert [s["is_me"] for s in shared.seat_list(seat(snap, "Bob"))] == [False, True, False]

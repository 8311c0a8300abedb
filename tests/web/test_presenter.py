"""The presenter alone: no Flask app, request or database. Boards are built from a
snapshot of a real engine game, and what each viewer may do or see is checked against
the engine's own statement of it (legal_actions) and its secrets."""

from __future__ import annotations

import json
import random

import pytest

from app import i18n
from app.engine import DOWN, PLAY, SETUP, Draw, Game, KeepDrawn, Player, RuleSet
from app.engine.actions import action_to_dict
from app.engine.frozen import Frozen
from app.features import outcome
from app.storage.models import Seat, Table
from app.tables import Snapshot
from app.web import presenter
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
        assert all(
            c["action"] is None
            for o in b["opponents"]
            for row in shared.cells[o["id"]]
            for c in row
        )
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
            for i, state in enumerate(grid.state):
                cell = shown[i // grid.cols][i % grid.cols]
                if state == DOWN:
                    assert "value" not in cell and cell["state"] == "down"
                    assert cell["label"].endswith(": face down")
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


def legal_presses(game: Game, pid: str, kinds: set) -> set:
    """The engine's legal actions of these kinds, as (type, row, col)."""
    out = set()
    for a in game.legal_actions(pid):
        d = action_to_dict(a)
        if d["type"] not in kinds:
            continue
        if d["type"] == "discard_drawn":
            if d["flip"]:
                out.add((d["type"], *d["flip"]))
        else:
            out.add((d["type"], d["row"], d["col"]))
    return out


def test_each_mode_presses_exactly_the_legal_moves_of_its_kind():
    game = new_game("modes")
    turn = play_to_turn(game)
    snap = snapshot(game)
    me = next(s for s in snap.seats if s.player_id == turn)
    # Before drawing: no card is a button until "take" is chosen; drawing is offered.
    b = board(Shared(snap, present=set()), me)
    assert my_actions(b) == set() and b["can_draw"]
    b = board(Shared(snap, present=set()), me, "take")
    assert my_actions(b) == legal_presses(game, turn, {"take_discard"}) != set()
    assert not b["can_draw"]
    # After drawing: keep by default, turn a card over in "flip".
    game.apply(turn, Draw())
    snap = snapshot(game)
    b = board(Shared(snap, present=set()), me)
    assert my_actions(b) == legal_presses(game, turn, {"keep_drawn"}) != set()
    assert not b["can_draw"] and b["face_down_left"]
    b = board(Shared(snap, present=set()), me, "flip")
    assert my_actions(b) == legal_presses(game, turn, {"discard_drawn"}) != set()


def test_the_board_offers_what_the_view_says_is_legal_and_nothing_else(monkeypatch):
    """One source of legal moves: a view whose `legal` lists a single card offers only
    that card, whatever the engine would also allow."""
    game = new_game("one-source")
    snap = snapshot(game)
    me = seat(snap, "Bob")
    real = presenter.view

    def narrowed(game, player_id):
        v = real(game, player_id)
        if player_id == me.player_id:
            v = dict(v, legal=(Frozen(type="reveal", row=1, col=2),))
        return v

    monkeypatch.setattr(presenter, "view", narrowed)
    b = board(Shared(snap, present=set()), me)
    assert my_actions(b) == {("reveal", 1, 2)}
    # ...and a view with nothing legal offers nothing (it is not worked out again).
    monkeypatch.setattr(presenter, "view", lambda g, p: dict(real(g, p), legal=()))
    b = board(Shared(snap, present=set()), me)
    assert my_actions(b) == set() and not b["my_turn"] and not b["can_draw"]


def test_a_change_rebuilds_the_view_of_the_grid_it_touched_only():
    """The change step works on a fork of the committed game (app.storage.table_store.fork):
    its views reuse the committed game's unchanged grids, and the committed game's own
    views are not changed through the fork."""
    from app.engine import view
    from app.storage.table_store import fork

    game = new_game("fork")
    turn = play_to_turn(game)
    before = view(game, None)["round"]["grids"]
    copy = fork(game)
    copy.apply(turn, Draw())
    copy.apply(turn, KeepDrawn(0, 0))
    after = view(copy, None)["round"]["grids"]
    assert after[turn] is not before[turn]
    assert all(after[p] is before[p] for p in before if p != turn)
    assert view(game, None)["round"]["grids"] is before


def test_a_shared_part_is_strings_and_lends_the_next_version_what_did_not_change():
    """A table's shared part is kept until its next version: its cards, boxes and log
    are plain strings in untracked dicts (nothing for the garbage collector to walk), and
    the next version's reuses the grids and log lines that did not change."""
    import gc

    from babel.support import NullTranslations

    with i18n.bound(NullTranslations()):
        game = new_game("kept")
        turn = play_to_turn(game)
        first = Shared(snapshot(game), present={1, 2, 3})
        for pid, o in first.opponent.items():
            assert not gc.is_tracked(o)
            assert all(not gc.is_tracked(c) for row in first.cells[pid] for c in row)
        assert all(type(line) is str for line in first.log) and not gc.is_tracked(first.names)
        game.apply(turn, Draw())
        game.apply(turn, KeepDrawn(0, 0))
        after = Shared(snapshot(game), present={1, 2, 3}, previous=first)
        fresh = Shared(snapshot(game), present={1, 2, 3})
        assert after.cells[turn] is not first.cells[turn]
        assert all(after.cells[p] is first.cells[p] for p in after.cells if p != turn)
        assert after.cells == fresh.cells and after.opponent == fresh.opponent
        assert after.log == fresh.log and after.log[0].endswith(
            "drew and kept " + outcome.a(game.round.grids[turn].values[0])
        )

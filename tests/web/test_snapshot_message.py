"""The committed snapshot a process publishes with its change (multi-process mode): the
other process rebuilds it from the message alone, exactly as stored, without reading it
back (finished rounds from its own copy of the game; read once per round at most)."""

from __future__ import annotations

import sys
from itertools import pairwise

import orjson

import app.storage.table_store  # noqa: F401  (the module: `app.storage.table_store` is its Store)
from app.engine import Game, view
from app.storage.table_store import Store, snapshot_message
from tests.web.table_helpers import finish_small_game


def play_a_game(browser, end_score: int) -> None:
    """Ann, Bob and a bot play 2 x 2 grids to `end_score` (several rounds)."""
    finish_small_game(browser, bots=("greedy",), end_score=end_score)


def seats_of(snap):
    return [(s.id, s.position, s.name, s.bot, s.user_id, s.left, s.token) for s in snap.seats]


class Overheard:
    """The hub as publisher, with what another process would be sent (`heard`)."""

    def __init__(self, hub, heard):
        self.hub, self.heard = hub, heard

    def publish(self, code, what="table", snapshot=None):
        self.hub.publish(code, what, snapshot)
        self.heard(code, what, snapshot)

    def broadcast(self, code, name, data):
        self.hub.broadcast(code, name, data)


def test_another_process_rebuilds_every_published_snapshot_from_its_message(
    hub, services, browser, monkeypatch
):
    store_module = sys.modules["app.storage.table_store"]
    reads = []  # finished rounds read back by the other process
    read_rounds = store_module.PAST_ROUNDS.all
    other = Store()  # the other process, hearing every message in order
    heard = []  # (snapshot rebuilt there, snapshot committed here)

    def counted(*args):
        if hearing:
            reads.append(args)
        return read_rounds(*args)

    def fanout(code, what, snapshot):
        nonlocal hearing
        if snapshot is None:
            return
        message = orjson.loads(orjson.dumps(snapshot_message(snapshot)))  # as Redis has it
        hearing = True
        try:
            heard.append((other.from_message(message), snapshot))
        finally:
            hearing = False

    hearing = False
    monkeypatch.setattr(store_module.PAST_ROUNDS, "all", counted)
    monkeypatch.setattr(services.tables, "publisher", Overheard(hub, fanout))
    play_a_game(browser, end_score=150)

    boundaries, before = 0, 0
    for got, snap in heard:
        assert got.version == snap.version and got.table.status == snap.table.status
        assert got.table.votes == orjson.loads(orjson.dumps(snap.table.votes))
        assert got.table.updated_at == snap.table.updated_at
        assert seats_of(got) == seats_of(snap)
        assert got.past_rounds == snap.past_rounds
        if snap.game is None:
            assert got.game is None
        else:
            assert got.game.to_dict() == orjson.loads(orjson.dumps(snap.game.to_dict()))
        boundaries += snap.past_rounds > before
        before = snap.past_rounds
    assert len(heard) > 40 and boundaries >= 2
    assert len(reads) <= boundaries  # finished rounds read back once per round at most


def test_a_rebuilt_game_s_views_reuse_what_did_not_change_and_show_the_same(
    hub, services, browser, monkeypatch
):
    """The other process's game, decoded from each message, starts its views from its
    previous copy's: unchanged grids are the same objects (the board's presenter then
    reuses what it drew for them), and every view equals one built from scratch."""
    other = Store()
    shown = []  # (view there, view of the same game decoded afresh)

    def fanout(code, what, snapshot):
        if snapshot is None or snapshot.game is None:
            return
        got = other.from_message(orjson.loads(orjson.dumps(snapshot_message(snapshot))))
        fresh = Game.from_dict(orjson.loads(orjson.dumps(got.game.to_dict())))
        shown.append((view(got.game, None), view(fresh, None)))  # as its push would

    monkeypatch.setattr(services.tables, "publisher", Overheard(hub, fanout))
    play_a_game(browser, end_score=150)
    assert all(seen == fresh for seen, fresh in shown)
    reused = changed = 0
    for (before, _), (seen, _) in pairwise(shown):
        if before["round"] is None or seen["round"]["number"] != before["round"]["number"]:
            continue
        for player, rows in seen["round"]["grids"].items():
            old = before["round"]["grids"][player]
            if rows is old:
                reused += 1
            elif rows != old:
                changed += 1
    assert len(shown) > 40 and changed > 20
    assert reused > changed  # most changes touch one grid of three

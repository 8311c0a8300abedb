"""The committed snapshot a process publishes with its change (multi-process mode): the
other process rebuilds it from the message alone, exactly as stored, without reading it
back (finished rounds from its own copy of the game; read once per round at most)."""

from __future__ import annotations

import sys

import orjson
from table_helpers import finish_small_game

import app.tables.store  # noqa: F401  (the module: `app.tables.store` is its Store)
from app.hub import hub
from app.tables.store import Store, snapshot_message


def play_a_game(browser, end_score: int) -> None:
    """Ann, Bob and a bot play 2 x 2 grids to `end_score` (several rounds)."""
    finish_small_game(browser, bots=("greedy",), end_score=end_score)


def seats_of(snap):
    return [(s.id, s.position, s.name, s.bot, s.user_id, s.left, s.token) for s in snap.seats]


def test_another_process_rebuilds_every_published_snapshot_from_its_message(browser, monkeypatch):
    store_module = sys.modules["app.tables.store"]
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
    hub.set_fanout(fanout)
    try:
        play_a_game(browser, end_score=150)
    finally:
        hub.set_fanout(None)

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

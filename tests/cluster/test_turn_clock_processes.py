"""The turn clock with two processes on one PostgreSQL + Redis: each timed-out turn is
played once (one version, one turn), whichever process claims it, and the count of
timeouts in a row is the same for both (it is kept on the table row)."""

from __future__ import annotations

import json
import time

import psycopg

from app.engine import Game
from tests.cluster import people
from tests.cluster.test_processes import RULES, receive_version, stored


def clock_of(pg_url: str, code: str) -> dict:
    with psycopg.connect(pg_url) as con:
        (raw,) = con.execute('SELECT clock FROM "table" WHERE code = %s', (code,)).fetchone()
    return json.loads(raw) if raw else {}


def test_each_timed_out_turn_is_played_once_with_two_processes(cluster, pg_url):
    env = {"SKYMO_TURN_CLOCKS": "1,30,60,90,120"}
    a, b = cluster("A", **env), cluster("B", **env)
    ann, bob = people.Person(a.url), people.Person(b.url)
    code = ann.create("Ann")
    bob.join(code, "Bob")
    assert ann.post(f"/t/{code}/rules", {**RULES, "turn_clock": "1"})[0] == 303
    sockets = [ann.socket(), bob.socket()]  # both present: the clock, not absence, counts
    try:
        for ws in sockets:
            receive_version(ws, 0, 3)
        before = stored(pg_url, code)[1]
        assert ann.post(f"/t/{code}/start", {"version": str(before)})[0] == 303
        # Nobody moves: each one's first flips, then two turns each, time out (1 s
        # apiece), and after three in a row each is treated as absent. Nothing else is
        # due for the grace period's 15 s.
        deadline = time.monotonic() + 30
        while len(clock_of(pg_url, code).get("absent", {})) < 2:
            assert time.monotonic() < deadline, clock_of(pg_url, code)
            time.sleep(0.2)
        time.sleep(2.5)  # a step run again would show by now
        state, version, status = stored(pg_url, code)
    finally:
        for ws in sockets:
            ws.close()
    game = Game.from_dict(state)
    ids = [p.id for p in game.players]
    clock = clock_of(pg_url, code)
    assert clock["timeouts"] == {pid: 3 for pid in ids}
    assert set(clock["absent"]) == set(ids)
    # The start, then six automatic steps: two setups and four turns, one version each.
    assert version - before == 1 + 6, (version, before)
    turns = [e for e in game.round.log if e["type"] in people.TURN_ACTIONS]
    starts = [e for e in turns if e["type"] in ("draw", "take_discard")]
    assert len(starts) == 4, turns
    assert not game.forfeited and status == "playing"
    for server in (a, b):
        assert "Traceback" not in server.log_text()

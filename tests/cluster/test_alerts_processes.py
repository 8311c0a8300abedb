"""Turn alerts with two server processes on one PostgreSQL and one Redis: a page visible
on one process holds the alerts the other would send, and once hidden its player is
told of their turn once, whichever process commits the moves."""

from __future__ import annotations

import json
import time

import psycopg
from py_vapid import Vapid, b64urlencode

from app.engine import PLAY, Game
from tests.cluster import people
from tests.cluster.test_processes import receive_version, reveal, seat_table, stored
from tests.web.push_double import PushDouble


def state(pg_url: str, code: str) -> tuple[Game, int]:
    data, version, _ = stored(pg_url, code)
    return Game.from_dict(data), version


def test_a_page_visible_on_one_process_holds_the_others_alerts(cluster, pg_url):
    key = Vapid()
    key.generate_keys()
    raw = key.private_key.private_numbers().private_value.to_bytes(32, "big")
    env = {"SKYMO_ALERTS_LOOPBACK_HTTP": "1", "SKYMO_VAPID_PRIVATE_KEY": b64urlencode(raw)}
    a, b = cluster("A", **env), cluster("B", **env)
    ann, bob = people.Person(a.url), people.Person(b.url)
    code = seat_table(ann, bob, b, pg_url)
    with PushDouble() as double:
        device = double.device("bob")
        bob.get(f"/t/{code}")
        status, _, text = bob.request(
            "POST",
            f"/t/{code}/alerts",
            headers={"X-CSRF-Token": bob.csrf, "Content-Type": "application/json"},
            body=json.dumps(device.subscription()).encode(),
        )
        assert status == 200, text
        bob_ws = bob.socket()  # on B, visible as a page opens
        try:
            receive_version(bob_ws, 0, 3)
            time.sleep(0.3)  # B's "looking" field written
            version = stored(pg_url, code)[1]
            assert ann.post(f"/t/{code}/start", {"version": str(version)})[0] == 303  # on A
            receive_version(bob_ws, version + 1, 3)
            time.sleep(1.0)
            assert double.received == []  # the round began while Bob's page was visible
            bob_ws.send("hidden")  # his phone locks
            time.sleep(0.5)
            assert reveal(ann, code, version + 1)[0] == 303
            assert reveal(bob, code, version + 2, "1-1")[0] == 303
            game, version = state(pg_url, code)
            assert game.phase == PLAY
            if game.round.turn != f"s{people_seat(pg_url, code, 'Bob')}":
                form = {"type": "take_discard", "pos": "0-1", "version": str(version)}
                assert ann.post(f"/t/{code}/move", form)[0] == 303
            pushes = double.wait(1)
            time.sleep(1.0)
            assert len(double.received) == 1
            assert device.read(pushes[0][2])["body"] == f"Your turn at table {code}."
        finally:
            bob_ws.close()


def people_seat(pg_url: str, code: str, name: str) -> int:
    with psycopg.connect(pg_url) as con:
        (seat,) = con.execute(
            "SELECT id FROM seat WHERE table_id = %s AND name = %s", (code, name)
        ).fetchone()
    return seat

"""One gunicorn with two workers and nothing in front (app.web.steering): every connection of
a table, and every request for it on a kept-alive connection, is served by one worker,
and the game plays as anywhere else."""

from __future__ import annotations

import http.client
import os
import re
import signal
import time
from pathlib import Path

import redis

from app.web.steering import owner
from tests.cluster import people
from tests.cluster.conftest import REDIS_URL
from tests.cluster.test_processes import receive_version, reveal, seat_table, stored

SERVED_BY = re.compile(r"^<(\d+)> (\S+) (\S+)$", re.M)  # the access log below


def two_workers(cluster, tmp_path: Path):
    """A server of two steering workers; its workers' names (pids), once both are up."""
    steer = tmp_path / "steer"
    server = cluster(
        "AB",
        SKYMO_WORKERS="2",
        SKYMO_STEER_DIR=str(steer),
        SKYMO_ACCESS_LOG="1",
        GUNICORN_CMD_ARGS="--access-logformat '%(p)s %(m)s %(U)s'",
    )
    deadline = time.time() + 15
    while True:
        found = [p.name for d in steer.glob("skymo-steer-*") for p in d.iterdir()]
        if len(found) == 2:
            return server, sorted(found)
        assert time.time() < deadline, found
        time.sleep(0.1)


def served(server, path: str) -> list[str]:
    """The workers (pids) that served each request for `path`, from the access log."""
    return [pid for pid, _, p in SERVED_BY.findall(server.log_text()) if p == path]


def test_a_kept_alive_connection_is_served_by_each_tables_worker(cluster, tmp_path):
    server, workers = two_workers(cluster, tmp_path)
    codes = [f"K{i:03d}" for i in range(12)]
    assert {owner(c, workers) for c in codes} == set(workers)  # both workers own some
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        for _ in range(2):
            for code in codes:
                conn.request("GET", f"/t/{code}")
                response = conn.getresponse()
                response.read()
                assert response.status == 404  # no such table, wherever it is asked
                assert response.getheader("Connection") == "keep-alive"
            sock = conn.sock
        conn.request("GET", "/t/K000")
        conn.getresponse().read()
        assert conn.sock is sock  # one connection all along
    finally:
        conn.close()
    time.sleep(0.3)  # the access log is written after the answer
    for code in codes:
        assert set(served(server, f"/t/{code}")) == {owner(code, workers)}, code


def test_every_socket_of_a_table_is_on_its_worker_and_moves_reach_them(
    cluster, tmp_path, pg_url, redis_prefix
):
    server, workers = two_workers(cluster, tmp_path)
    ann, bob = people.Person(server.url), people.Person(server.url)
    code = seat_table(ann, bob, server, pg_url)
    sockets = [ann.socket(), bob.socket(), ann.socket(), bob.socket()]
    try:
        for ws in sockets:
            receive_version(ws, 0, 3)
        holders = redis.Redis.from_url(REDIS_URL).zrange(f"{redis_prefix}at:{code}", 0, -1)
        # One process holds the table's sockets: the owner (named host.pid.random).
        assert [h.decode().split(".")[-2] for h in holders] == [owner(code, workers)]
        version = stored(pg_url, code)[1]
        assert ann.post(f"/t/{code}/start", {"version": str(version)})[0] == 303
        for ws in sockets:
            receive_version(ws, version + 1, 2)
        assert reveal(bob, code, version + 1)[0] == 303
        for ws in sockets:
            receive_version(ws, version + 2, 2)
    finally:
        for ws in sockets:
            ws.close()
    time.sleep(0.3)  # the access log is written after the answer
    for path in (f"/t/{code}", f"/t/{code}/start", f"/t/{code}/move"):
        assert set(served(server, path)) == {owner(code, workers)}, path
    assert "Traceback" not in server.log_text()  # sockets closed, connections handed


def test_a_killed_worker_is_replaced_and_its_tables_play_on(cluster, tmp_path, pg_url):
    server, workers = two_workers(cluster, tmp_path)
    ann, bob = people.Person(server.url), people.Person(server.url)
    code = seat_table(ann, bob, server, pg_url)
    version = stored(pg_url, code)[1]
    assert ann.post(f"/t/{code}/start", {"version": str(version)})[0] == 303
    gone = owner(code, workers)
    os.kill(int(gone), signal.SIGKILL)  # its socket file stays behind, nobody reading it
    deadline = time.time() + 20
    while True:  # gunicorn starts another worker in its place
        now = sorted(p.name for d in (tmp_path / "steer").iterdir() for p in d.iterdir())
        if len(now) >= 2 and any(w not in workers for w in now):
            break
        assert time.time() < deadline, now
        time.sleep(0.2)
    # Every page and socket of the table is answered, wherever it lands now.
    ws = bob.socket()
    try:
        receive_version(ws, version + 1, 3)
        assert reveal(ann, code, version + 1)[0] == 303
        receive_version(ws, version + 2, 3)
    finally:
        ws.close()
    assert "Traceback" not in server.log_text()

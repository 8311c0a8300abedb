"""A process's PostgreSQL connections are held only while the database works for a
request: more requests and sockets at once than the pool holds, each also waiting on
something else (here Redis, slowed down), are all answered, and a race of moves still
changes the table exactly once."""

from __future__ import annotations

import contextlib
import threading
import time

import peewee as pw
import psycopg
import pytest

from app.storage.models import open_database
from app.storage.pool import Turnstile
from tests.cluster import people
from tests.cluster.conftest import Relay
from tests.cluster.test_processes import receive_version, stored


@pytest.fixture
def slow_redis():
    """Redis behind a link that adds 0.3 s to every round trip."""
    relay = Relay(("127.0.0.1", 6379), delay=0.15)
    yield f"redis://127.0.0.1:{relay.port}/0"
    relay.close()


def burst(jobs) -> list:
    """Run every job at the same moment, each in its own thread; their results."""
    go = threading.Barrier(len(jobs))
    results: list = [None] * len(jobs)

    def run(i, job):
        go.wait()
        try:
            results[i] = job()
        except Exception as exc:  # reported with the others below
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i, job)) for i, job in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def test_more_requests_and_sockets_than_the_pool_holds_are_all_answered(
    cluster, pg_url, slow_redis
):
    # Two connections, and a request waits at most 2 s for one: a request that kept its
    # connection while it waited for Redis (twice, 0.3 s each) would hold one for over
    # 0.6 s, and 24 of them at once could not all be served within 2 s.
    a = cluster("A", SKYMO_DB_POOL="2", SKYMO_DB_WAIT="2", SKYMO_REDIS_URL=slow_redis)
    ann = people.Person(a.url)
    code = ann.create("Ann")
    players = [ann]
    for name in ("Bob", "Cy", "Di"):
        person = people.Person(a.url)
        person.join(code, name)
        players.append(person)
    version = stored(pg_url, code)[1]
    assert ann.post(f"/t/{code}/start", {"version": str(version)})[0] == 303
    version += 1

    def page(person):
        return lambda: person.request("GET", f"/t/{code}")[0]

    def move(person):
        form = {"type": "reveal", "pos": "0-0", "version": str(version)}
        return lambda: person.post(f"/t/{code}/move", form)[0]

    def socket(person):
        def opened():
            ws = person.socket(timeout=20)
            try:
                return receive_version(ws, version, 20)
            finally:
                ws.close()

        return opened

    pages = [page(p) for p in players for _ in range(4)]
    moves = [move(p) for p in players]
    sockets = [socket(p) for p in players]
    results = burst(pages + moves + sockets)
    answered_pages = results[: len(pages)]
    answered_moves = results[len(pages) : len(pages) + len(moves)]
    pushed = results[len(pages) + len(moves) :]
    assert answered_pages == [200] * len(pages), answered_pages
    # Every player revealed a card of their own at the same version (setup reveals are
    # each player's own: all count); none is turned away for want of a connection.
    assert answered_moves == [303] * len(moves), answered_moves
    assert all(isinstance(t, float) for t in pushed), pushed
    assert stored(pg_url, code)[1] == version + len(moves)  # one change each, written whole
    assert "Traceback" not in a.log_text()


def test_a_statement_or_a_transaction_holds_a_connection_only_while_it_runs(pg_url):
    database = open_database(pg_url, pool_size=2, wait=1)
    db = pw.DatabaseProxy()  # as the models reach it
    db.initialize(database)
    try:
        rows = db.execute_sql("SELECT 1 UNION SELECT 2 ORDER BY 1")
        assert database.turnstile.free == 2  # handed back, the rows still readable
        assert rows.fetchall() == [(1,), (2,)]
        with db.atomic():
            db.execute_sql("SELECT 1")
            with db.atomic():  # a savepoint, on the same connection
                db.execute_sql("SELECT 1")
            assert database.turnstile.free == 1
        assert database.is_closed() and database.turnstile.free == 2
        with pytest.raises(KeyError), db.atomic():
            db.execute_sql("SELECT 1")
            raise KeyError("rolled back")
        assert database.is_closed() and database.turnstile.free == 2
        with db.connection_context():  # opened on purpose: kept until closed
            with db.atomic():
                db.execute_sql("SELECT 1")
            assert not database.is_closed() and database.turnstile.free == 1
        assert database.turnstile.free == 2
    finally:
        database.close_all()


def test_checkouts_wait_their_turn_in_order_and_no_longer_than_the_wait():
    gate = Turnstile(1)
    assert gate.enter(0.1)
    order = []

    def wait_then_leave(name):
        assert gate.enter(5)
        order.append(name)
        gate.leave()

    threads = []
    for name in ("first", "second", "third"):
        threads.append(threading.Thread(target=wait_then_leave, args=(name,)))
        threads[-1].start()
        while gate.waiting() < len(threads):  # each in the queue before the next
            time.sleep(0.01)
    assert not gate.enter(0.05)  # a newcomer does not jump the queue, and gives up
    gate.leave()
    for t in threads:
        t.join(5)
    assert order == ["first", "second", "third"]
    assert gate.free == 1


def test_a_transactions_begin_and_its_last_write_travel_with_other_statements(pg_url, monkeypatch):
    """BEGIN goes with the transaction's first statement and a deferred write with the
    next statement or the COMMIT, each batch in one round trip: what is read and
    committed is the same as statement by statement (values with quotes and percent
    signs included), and a failing write still fails the transaction."""
    database = open_database(pg_url, pool_size=2, wait=1)
    db = pw.DatabaseProxy()
    db.initialize(database)
    trips = []  # each network exchange: a query string, or a pipeline
    pipeline, execute = psycopg.Connection.pipeline, psycopg.Cursor.execute
    in_pipeline = threading.local()

    def counted_pipeline(self, *args, **kwargs):
        trips.append("pipeline")
        in_pipeline.on = True
        try:
            with pipeline(self, *args, **kwargs) as p:
                yield p
        finally:
            in_pipeline.on = False

    def counted_execute(self, query, *args, **kwargs):
        if not getattr(in_pipeline, "on", False):
            trips.append(str(query))
        return execute(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "pipeline", contextlib.contextmanager(counted_pipeline))
    monkeypatch.setattr(psycopg.Cursor, "execute", counted_execute)
    try:
        db.execute_sql("CREATE TABLE batched (k int PRIMARY KEY, v int)")
        db.execute_sql("INSERT INTO batched VALUES (1, 0)")
        trips.clear()
        with db.atomic():  # as a change: lock the row, write it, commit
            row = db.execute_sql("SELECT v FROM batched WHERE k = 1 FOR UPDATE").fetchone()
            assert row == (0,)
            database.defer("UPDATE batched SET v = %s WHERE k = 1", (row[0] + 1,))
        assert len(trips) == 2  # BEGIN + SELECT, UPDATE + COMMIT
        assert trips[0].startswith("BEGIN; SELECT") and trips[1].endswith("WHERE k = 1; COMMIT")
        assert db.execute_sql("SELECT v FROM batched").fetchone() == (1,)

        with db.atomic():  # a deferred write is seen by the transaction's next read
            database.defer("UPDATE batched SET v = 5 WHERE k = 1", ())
            assert db.execute_sql("SELECT v FROM batched").fetchone() == (5,)
        awkward = """it's 100% "odd"; -- not a comment\\ %s"""
        with db.atomic():
            found = db.execute_sql("SELECT %s, v FROM batched WHERE k = %s", (awkward, 1))
            assert found.fetchone() == (awkward, 5)
            database.defer("INSERT INTO batched VALUES (%s, %s)", (2, len(awkward)))
        assert db.execute_sql("SELECT v FROM batched WHERE k = 2").fetchone() == (len(awkward),)
        trips.clear()
        with db.atomic():  # nothing done: nothing sent
            pass
        assert trips == []

        with pytest.raises(pw.IntegrityError), db.atomic():  # fails at the COMMIT's batch
            database.defer("INSERT INTO batched VALUES (1, 9)", ())
        with pytest.raises(KeyError), db.atomic():
            database.defer("UPDATE batched SET v = 7 WHERE k = 1", ())
            raise KeyError("rolled back before anything was sent")
        assert db.execute_sql("SELECT v FROM batched").fetchone() == (5,)
        assert database.is_closed() and database.turnstile.free == 2
    finally:
        with contextlib.suppress(Exception):
            db.execute_sql("DROP TABLE batched")
        database.close_all()

"""The Due table on PostgreSQL: a later version's due time is never overwritten by an
earlier one, a due step is claimed by one process only, however many poll at once, and
a process polls when a step it wrote falls due (at least every second otherwise)."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest
from flask import Flask

from app import due, models
from app.due import LEASE_SECONDS, claim_due, write_due
from app.models import Due, Table, db


@pytest.fixture
def pg_db(pg_url):
    previous = db.obj
    db.initialize(models.open_database(pg_url, pool_size=16))
    models.create_schema()
    with db.connection_context():
        for code in ("AAAAAA", "BBBBBB", "CCCCCC"):
            Table.create(code=code, rules={})
    yield
    db.close_all()
    db.initialize(previous)


def due_rows() -> dict[str, tuple[float, int]]:
    with db.connection_context():
        return {d.table_id: (d.at, d.version) for d in Due.select()}


def test_a_due_time_from_an_older_version_never_replaces_a_newer_one(pg_db):
    with db.connection_context():
        write_due("AAAAAA", 5, 100.0)
        write_due("AAAAAA", 4, 50.0)  # late, from an older snapshot: ignored
        assert due_rows()["AAAAAA"] == (100.0, 5)
        write_due("AAAAAA", 5, 120.0)  # same version (presence changed): taken
        write_due("AAAAAA", 6, 90.0)
        assert due_rows()["AAAAAA"] == (90.0, 6)
        write_due("AAAAAA", 5, None)  # an older "nothing due" deletes nothing
        assert "AAAAAA" in due_rows()
        write_due("AAAAAA", 6, None)
        assert "AAAAAA" not in due_rows()


def test_each_due_step_is_claimed_once_by_processes_polling_together(pg_db):
    now = time.time()
    with db.connection_context():
        write_due("AAAAAA", 1, now - 1)
        write_due("BBBBBB", 1, now - 0.5)
        write_due("CCCCCC", 1, now + 60)  # not due yet
    claims: list[list[str]] = []
    barrier = threading.Barrier(8)

    def poller():
        barrier.wait()
        with db.connection_context():
            claims.append(claim_due(now))

    threads = [threading.Thread(target=poller) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    claimed = sorted(code for batch in claims for code in batch)
    assert claimed == ["AAAAAA", "BBBBBB"]
    # Leased: nobody claims them again until the lease runs out...
    with db.connection_context():
        assert claim_due(now + 1) == []
        assert sorted(claim_due(now + LEASE_SECONDS + 1)) == ["AAAAAA", "BBBBBB"]
    # ...and the lease keeps the version, so the step's own write replaces it.
    assert due_rows()["AAAAAA"][1] == 1


def test_a_process_polls_when_a_step_it_wrote_falls_due_and_each_second_for_others(
    pg_db, monkeypatch
):
    """No poll every 0.1 s while nothing is due: the writer of a step looks for it when it
    falls due, and every process looks at least every IDLE_POLL_SECONDS (a step written
    by a process that died, or whose poll is late)."""
    polls: list[float] = []
    claim = due.claim_due
    monkeypatch.setattr(due, "claim_due", lambda now: polls.append(now) or claim(now))
    ran: dict[str, float] = {}
    snap = SimpleNamespace(version=1)
    when = time.time() + 0.5
    scheduler = due.DueScheduler(
        lambda s: (when, "bot", None),
        lambda code: ran.setdefault(code, time.time()) is not None,
        lambda code: snap,
    )
    scheduler._app = Flask(__name__)
    threading.Thread(target=scheduler._loop, daemon=True).start()
    try:
        time.sleep(0.2)  # the first poll found nothing: the next one is a second away
        with db.connection_context():
            scheduler.wake("AAAAAA", snap)  # this process's step, due in 0.3 s
        time.sleep(0.6)
        # Run when due (the next idle poll would have come 0.5 s later).
        assert when <= ran["AAAAAA"] <= when + 0.35
        with db.connection_context():
            write_due("BBBBBB", 1, time.time())  # another process's step, due now
        time.sleep(due.IDLE_POLL_SECONDS + 0.3)
        assert "BBBBBB" in ran
        # Polled about once a second, and when the step came due (not 20 times).
        assert len(polls) <= 8
    finally:
        scheduler.stop()

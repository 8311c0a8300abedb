"""The Due table on PostgreSQL: a later version's due time is never overwritten by an
earlier one, and a due step is claimed by one process only, however many poll at once."""

from __future__ import annotations

import threading
import time

import pytest

from app import models
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

"""app.storage.pool is the one module that changes Peewee's pool (its checkout, its
ping, statements sent together). It overrides and reads Peewee code that is not its
documented API: this fails when that code changes, so that the module is looked at
again before Peewee is upgraded past its pin (README, "Library patches")."""

from __future__ import annotations

import hashlib
import inspect

import peewee
from playhouse import pool, postgres_ext

# Peewee 4.5.3's.
UPSTREAM_DIGEST = "f523778d633f20c64bf8a3d53a7f8ebfd9505d7eae5652a062e112af309b5dae"


def upstream_source() -> str:
    """What app.storage.pool overrides or reads: the pool (`connect`, `close`,
    `_is_closed`, `_close`, its limits), the connection's state (`_state.conn`), the
    transactions' methods, the exception wrapper and the isolation level's SQL."""
    parts = [
        pool.PooledDatabase,
        postgres_ext.PooledPsycopg3Database,
        peewee._ConnectionState,
        peewee.ExceptionWrapper,
        peewee._BasePsycopgAdapter.isolation_level_str,
    ]
    for name in (
        "connect",
        "close",
        "is_closed",
        "in_transaction",
        "execute_sql",
        "begin",
        "commit",
        "rollback",
    ):
        parts.append(getattr(peewee.Database, name))
    return "".join(inspect.getsource(p) for p in parts)


def test_the_peewee_code_the_pool_changes_is_the_code_it_was_written_for():
    digest = hashlib.sha256(upstream_source().encode()).hexdigest()
    assert digest == UPSTREAM_DIGEST, (
        "Peewee's pool or transactions changed: check app/storage/pool.py against them "
        "(or replace it by playhouse's own pool), then record the new digest"
    )

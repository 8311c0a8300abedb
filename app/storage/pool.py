"""PostgreSQL connections from a pool, held only while the database works for us.

Under gevent every PostgreSQL round trip yields: a request waiting for its answer, then
for the CPU behind every other runnable greenlet, kept its pooled connection all the
while, and also while it rendered pages and pushes or waited for Redis. With thousands
of sockets and requests the pool ran out (requests waited 30 s, then 503). Here a
connection is checked out for one statement outside a transaction, or for one
transaction, and handed back at once; checkouts wait their turn in order
(`Turnstile`), never more than the pool's wait.

A connection opened explicitly (`connect`, `connection_context`) is kept until closed,
as Peewee does.

The one module that changes Peewee: it overrides pool and transaction methods that are
not Peewee's documented API. pyproject.toml pins Peewee below 4.6, and
tests/storage/test_pool_upstream.py fails when the code it relies on changes (README,
"Library patches")."""

from __future__ import annotations

import threading
import time
from collections import deque

import peewee as pw
import psycopg
from playhouse.pool import MaxConnectionsExceeded
from playhouse.postgres_ext import PooledPsycopg3Database


class Conflict(Exception):
    """A change made on the newest snapshot this process knew found the table at
    another version (app.storage.table_rows.VERSION_GUARD): it is rolled back, to be made
    again on the row as locked and read."""


class Turnstile:
    """Up to `size` holders at once; the others wait in arrival order, each at most
    `timeout` seconds. A freed place goes to the longest waiter, never to a newcomer
    (gevent's Semaphore lets a newcomer take it: under load some waiters starved)."""

    def __init__(self, size: int):
        self.free = size
        self._waiting: deque[threading.Event] = deque()
        self._lock = threading.Lock()

    def enter(self, timeout: float) -> bool:
        with self._lock:
            if self.free > 0 and not self._waiting:
                self.free -= 1
                return True
            turn = threading.Event()
            self._waiting.append(turn)
        if turn.wait(None if timeout == float("inf") else timeout):
            return True
        with self._lock:
            if turn.is_set():  # handed over just as the wait ended
                return True
            self._waiting.remove(turn)
        return False

    def leave(self) -> None:
        with self._lock:
            if self._waiting:
                self._waiting.popleft().set()  # the place passes on, still taken
            else:
                self.free += 1

    def waiting(self) -> int:
        with self._lock:
            return len(self._waiting)


class PooledPostgres(PooledPsycopg3Database):
    """Peewee's pooled psycopg 3 database, holding connections only while it works.

    Peewee's pool also pings (SELECT 1) each connection it hands out, holding its locks:
    with many greenlets every checkout then waits for the previous one's round trip. A
    connection handed back in the last PING_AFTER seconds is trusted without the ping
    (one that broke is discarded at check-in: psycopg knows its state); an idle one is
    still pinged."""

    PING_AFTER = 2.0

    def __init__(self, *args, **kwargs):
        self._returned: dict[int, float] = {}
        super().__init__(*args, **kwargs)
        self.turnstile = Turnstile(self._max_connections)

    # ----- checkout, in turn ---------------------------------------------------------
    def connect(self, reuse_if_open=False):
        if not self.is_closed():
            return super().connect(reuse_if_open)
        if not self.turnstile.enter(self._wait_timeout):
            raise MaxConnectionsExceeded(
                f"no database connection free within {self._wait_timeout:g} s"
            )
        try:
            return super().connect(reuse_if_open)
        except BaseException:
            self.turnstile.leave()
            raise

    def close(self):
        held = not self.is_closed()
        try:
            return super().close()
        finally:
            if held and self.is_closed():
                self.turnstile.leave()

    # ----- holding only while working ----------------------------------------------
    def execute_sql(self, sql, params=None, named_cursor=None):
        """Outside a transaction or an opened connection: check one out for this
        statement only (psycopg's client-side cursor has the whole result by then and
        stays readable; a server-side one needs its connection, as before)."""
        if named_cursor or not self.is_closed():
            if self._pending():
                if not named_cursor:
                    return self._send([*self._take_pending(), (sql, params)])
                self._send(self._take_pending())
            return super().execute_sql(sql, params, named_cursor=named_cursor)
        self.connect()
        try:
            return super().execute_sql(sql, params)
        finally:
            self.close()

    def begin(self, isolation_level=None):
        """A transaction that has to check a connection out hands it back when it ends
        (`commit`, `rollback`). Done here, not in `atomic()`: the models' database is a
        Peewee DatabaseProxy, whose atomic() never reaches this class.

        BEGIN is not sent on its own: it goes with the transaction's first statement, in
        one round trip."""
        borrowed = self.is_closed()
        if borrowed:
            self.connect()
        if isolation_level is None:
            isolation_level = self._isolation_level
        statement = "BEGIN"
        if isolation_level:
            level = self._adapter.isolation_level_str(isolation_level)
            statement = f"BEGIN TRANSACTION ISOLATION LEVEL {level}"
        self._state.pending = [(statement, None)]
        self._state.borrowed = borrowed

    def defer(self, sql: str, params) -> None:
        """A write whose answer nobody reads: in a transaction it goes with the next
        statement or with the COMMIT (one round trip fewer); else at once."""
        if self.in_transaction() and not self.is_closed():
            self._state.pending = [*self._pending(), (sql, params)]
        else:
            self.execute_sql(sql, params)

    def commit(self):
        pending = self._take_pending()
        if not pending:
            super().commit()
        elif pending[1:] or not _never_began(pending):  # else nothing reached the server
            self._send([*pending, ("COMMIT", None)])
        # If it fails, Peewee rolls back: that hands the connection back.
        self._hand_back()

    def rollback(self):
        try:
            if not _never_began(self._take_pending()):
                super().rollback()
        finally:
            self._hand_back()

    def _pending(self) -> list:
        return getattr(self._state, "pending", None) or []

    def _take_pending(self) -> list:
        pending = self._pending()
        self._state.pending = []
        return pending

    def _send(self, statements: list[tuple[str, object]]):
        """Run `statements` in one round trip: one query string, their values bound by
        psycopg on this side (measured: less CPU than psycopg's pipeline mode, which
        cost more than the separate statements). The cursor, at the last one's result;
        a statement that fails stops the ones after it."""
        cursor = psycopg.ClientCursor(self._state.conn)
        with pw.__exception_wrapper__:
            text = "; ".join(
                sql if params is None else cursor.mogrify(sql, params) for sql, params in statements
            )
            try:
                cursor.execute(text)
            except psycopg.errors.DivisionByZero as exc:  # only the version guard divides
                raise Conflict() from exc
            for _ in statements[1:]:
                cursor.nextset()
        return cursor

    def _hand_back(self) -> None:
        # Peewee pops the transaction before it commits or rolls back the outermost one.
        if getattr(self._state, "borrowed", False) and not self.in_transaction():
            self._state.borrowed = False
            self.close()

    # ----- no ping for a connection just handed back ------------------------------------
    def _is_closed(self, conn):
        returned = self._returned.pop(id(conn), None)
        if conn.closed:
            return True
        if returned is not None and time.monotonic() - returned < self.PING_AFTER:
            return False
        return super()._is_closed(conn)

    def _close(self, conn, close_conn=False):
        if not close_conn:
            self._returned[id(conn)] = time.monotonic()
        super()._close(conn, close_conn)


def _never_began(pending: list) -> bool:
    """The transaction's BEGIN is still waiting: the server never saw the transaction."""
    return bool(pending) and pending[0][0].startswith("BEGIN")

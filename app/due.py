"""The `Due` table as every process's scheduler in the multi-process mode (PostgreSQL +
Redis): each table's next automatic step is a row (time, version). Every process polls
for due rows, claims a batch with FOR UPDATE SKIP LOCKED (so processes never wait for
each other) and leases it for LEASE_SECONDS (a process that dies mid-step leaves the row
to another after that); the step itself runs through the change step, which locks the
table row and works out again what is due from the committed state, so a step runs
exactly once whichever processes race for it.

A process polls when a step it wrote falls due, and at least every IDLE_POLL_SECONDS
for the rest (steps whose writer died or is late): every change writes its table's due
row from the process that made it, so the writer knows when to look. Polling every
0.1 s whatever was due cost each idle process about 1% of a core."""

from __future__ import annotations

import heapq
import logging
import threading
import time

import peewee as pw

from .models import Due, db, open_table_codes
from .queries import Prepared

log = logging.getLogger(__name__)

POLL_SECONDS = 0.1  # the shortest wait between polls that found nothing
IDLE_POLL_SECONDS = 1.0  # the longest: steps other processes wrote, leases run out
KNOWN_MAX = 100_000  # due times remembered at most (each until it passes)
LEASE_SECONDS = 10.0  # a claimed step left unfinished this long is claimed again
BATCH = 50  # due steps claimed at once


class DueScheduler:
    """The Due table as the scheduler of every process (same interface as the
    in-process scheduler: start, wake)."""

    def __init__(self, next_automatic, run_automatic, current):
        self._next = next_automatic  # snapshot -> (when, kind, player) | None
        self._run = run_automatic  # code -> bool (something changed)
        self._current = current  # code -> committed snapshot | None
        self._app = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        # Tables whose due row this process deleted and has not written since: a move
        # at a table of people who are all there deletes nothing again (one round trip
        # per move). A row another process wrote meanwhile is claimed when due, found
        # to have nothing to do, and deleted then (_run_one forgets the table here).
        self._cleared: set[str] = set()
        self._known: list[float] = []  # a heap of the due times this process wrote
        self._nudge = threading.Event()  # set when a write is due before the next poll
        self._next_poll = 0.0

    def start(self, app) -> None:
        self._app = app
        # Tables in play when the processes stopped: their due rows may predate a crash.
        for code in open_table_codes():
            self.wake(code)
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="skymo-due", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._nudge.set()

    def wake(self, code: str, snap=None) -> None:
        """Write when this table's next automatic step falls due (or that none does)."""
        # No connection_context: each statement checks a connection out for itself
        # (app.pool), so none is held while the next step is worked out.
        try:
            if snap is None:
                snap = self._current(code)
                if snap is None:
                    return
            due = self._next(snap)
            if due is None and code in self._cleared:
                return
            write_due(code, snap.version, due[0] if due else None)
            self._remember(code, cleared=due is None)
            if due is not None:
                self._expect(due[0])
        except Exception:
            log.exception("scheduling table %s failed", code)

    def _loop(self) -> None:
        while not self._stop.is_set():
            polled = time.time()
            try:
                with self._app.app_context():
                    codes = claim_due(polled)
            except Exception:
                log.exception("claiming due steps failed")
                codes = []
            for code in codes:
                self._run_one(code)
            if not codes:
                self._nudge.wait(self._until_next_poll(polled))
                self._nudge.clear()

    def _expect(self, when: float) -> None:
        """A step this process wrote falls due at `when`: poll then."""
        if len(self._known) >= KNOWN_MAX:
            self._known.clear()  # a step forgotten is found by an idle poll (1 s late)
        heapq.heappush(self._known, when)
        if when < self._next_poll:
            self._nudge.set()

    def _until_next_poll(self, polled: float) -> float:
        """Seconds to wait: until the soonest step this process wrote falls due (those
        due by `polled` were looked for by the poll made then), IDLE_POLL_SECONDS at
        most, POLL_SECONDS at least."""
        known = self._known
        while known and known[0] <= polled:
            heapq.heappop(known)
        now = time.time()
        wait = IDLE_POLL_SECONDS
        if known:
            wait = min(wait, max(POLL_SECONDS, known[0] - now + 0.005))
        self._next_poll = now + wait
        return wait

    def _remember(self, code: str, cleared: bool) -> None:
        if not cleared:
            self._cleared.discard(code)
            return
        if len(self._cleared) >= 100_000:
            self._cleared.clear()  # forgetting only costs a DELETE that finds nothing
        self._cleared.add(code)

    def _run_one(self, code: str) -> None:
        self._cleared.discard(code)  # its row exists: this process just claimed it
        changed = False
        try:
            with self._app.app_context():  # a step holds a connection only to change
                changed = self._run(code)
        except Exception:
            log.exception("automatic step at table %s failed", code)
        if not changed:  # a change writes its own next due time
            self.wake(code)


# Every change writes its table's due row: the SQL is built once (app.queries).
_DUE_DELETE = Prepared(
    lambda code, version: Due.delete().where((Due.table == code) & (Due.version <= version))
)
_DUE_UPSERT = Prepared(
    lambda code, at, version: Due.insert(table=code, at=at, version=version).on_conflict(
        conflict_target=[Due.table],
        update={Due.at: pw.EXCLUDED.at, Due.version: pw.EXCLUDED.version},
        where=(Due.version <= pw.EXCLUDED.version),
    )
)


def write_due(code: str, version: int, when: float | None) -> None:
    """Upsert (or delete) a table's due row, unless a newer version already wrote it: a
    late write from an older snapshot never moves a step back or forward."""
    if when is None:
        _DUE_DELETE.execute(code, version)
    else:
        _DUE_UPSERT.execute(code, float(when), version)


# Claimed in one statement (no transaction to begin and commit: one round trip per
# poll): the subquery locks the due rows nobody else is claiming, the UPDATE leases them.
_CLAIM = Prepared(
    lambda until, now, batch: (
        Due.update(at=until)
        .where(
            Due.table.in_(
                Due.select(Due.table)
                .where(Due.at <= now)
                .order_by(Due.at)
                .limit(batch)
                .for_update(skip_locked=True)
            )
        )
        .returning(Due.table)
    )
)


def claim_due(now: float) -> list[str]:
    """Codes of tables whose step is due, claimed by this process: locked rows (another
    process is claiming them) are skipped, and the claimed ones leased."""
    params = (now + LEASE_SECONDS, now, BATCH)
    cursor = db.execute_sql(_CLAIM.sql(params), params)
    try:
        return [row[0] for row in cursor.fetchall()]
    finally:
        cursor.close()

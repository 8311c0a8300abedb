"""The `Due` table as every process's scheduler in the multi-process mode (PostgreSQL +
Redis): each table's next automatic step is a row (time, version). Every process polls
for due rows, claims a batch with FOR UPDATE SKIP LOCKED (so processes never wait for
each other) and leases it for LEASE_SECONDS (a process that dies mid-step leaves the row
to another after that); the step itself runs through the change step, which locks the
table row and works out again what is due from the committed state, so a step runs
exactly once whichever processes race for it.

Every change writes its table's due row in its own transaction (`within`): a change
that commits has its next step, one that does not has neither (written after the
commit, a step was lost for good when the database went away in between). A process
polls when a step it wrote falls due, and at least every IDLE_POLL_SECONDS for the rest
(steps whose writer died or is late). Polling every 0.1 s whatever was due cost each
idle process about 1% of a core. What could not be written while the database was
away (a presence change's new timer) is written once a poll succeeds again."""

from __future__ import annotations

import heapq
import logging
import threading
import time

import peewee as pw

from app.background import background
from app.storage.models import Due, db, open_table_codes
from app.storage.queries import Prepared

log = logging.getLogger(__name__)

POLL_SECONDS = 0.1  # the shortest wait between polls that found nothing
IDLE_POLL_SECONDS = 1.0  # the longest: steps other processes wrote, leases run out
KNOWN_MAX = 100_000  # due times remembered at most (each until it passes)
LEASE_SECONDS = 10.0  # a claimed step left unfinished this long is claimed again
BATCH = 50  # due steps claimed at once
LOOK_AGAIN_SECONDS = 1.0  # a next step that could not be worked out is looked for then
_WRITTEN = "due"  # Snapshot.extra: (version, due time) written in the change (`within`)


class DueScheduler:
    """The Due table as the scheduler of every process (same interface as the
    in-process scheduler: start, wake, within, prepare)."""

    def __init__(self, next_automatic, run_automatic, current, served=None, warm=None):
        self._next = next_automatic  # snapshot -> (when, kind, player) | None
        self._run = run_automatic  # code -> bool (something changed)
        self._current = current  # code -> committed snapshot | None
        self._served = served or (lambda: [])  # () -> codes of the tables with a socket here
        self._warm = warm  # code -> None: reads what `next_automatic` needs (presence)
        self._app = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        # Tables whose due row this process deleted and has not written since: a move
        # at a table of people who are all there deletes nothing again (no statement
        # per move). A row another process wrote meanwhile is claimed when due, found
        # to have nothing to do, and deleted then (_run_one forgets the table here).
        self._cleared: set[str] = set()
        self._known: list[float] = []  # a heap of the due times this process wrote
        self._nudge = threading.Event()  # set when a write is due before the next poll
        self._next_poll = 0.0
        # Looked at again once a poll succeeds: tables whose due row could not be
        # written (the database away), and, after a poll that failed, every table
        # with a socket here (a presence change meanwhile was not written either).
        self._failed: set[str] = set()
        self._lost = False  # a poll failed: the database was away
        self._failing = threading.Lock()

    def start(self, app) -> None:
        self._app = app
        # Tables in play when the processes stopped: their due rows may predate a crash.
        for code in open_table_codes():
            self.wake(code)
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="skymo-due", daemon=True)
            self._thread.start()

    def schedule(self, snap) -> None:
        """After a committed change: look at the table's next step."""
        self.wake(snap.code, snap)

    def stop(self) -> None:
        self._stop.set()
        self._nudge.set()

    def prepare(self, code: str) -> None:
        """Before a change: presence read now (if this process's read of it is not fresh),
        not while the change's transaction holds the row and a connection (`within`)."""
        if self._warm is not None:
            try:
                self._warm(code)
            except Exception:
                log.exception("reading table %s's presence failed", code)

    def within(self, snap) -> None:
        """In the change's transaction, after its write: the table's due row, sent with
        the COMMIT (no round trip of its own). The change commits with its next step or
        not at all; `wake`, after the commit, only notes when to poll."""
        when = self._when(snap)
        if when is not None or snap.code not in self._cleared:
            write_due(snap.code, snap.version, when, defer=True)
        snap.extra[_WRITTEN] = (snap.version, when)

    def wake(self, code: str, snap=None) -> None:
        """Write when this table's next automatic step falls due (or that none does).
        `snap`, when given, is the state just committed."""
        written = snap.extra.get(_WRITTEN) if snap is not None else None
        if written is not None and written[0] == snap.version:
            self._wrote(code, written[1])  # with the change (`within`)
            return
        # No connection_context: each statement checks a connection out for itself
        # (app.storage.pool), so none is held while the next step is worked out.
        try:
            if snap is None:
                snap = self._current(code)
                if snap is None:
                    return
            when = self._when(snap)
            if when is None and code in self._cleared:
                return
            write_due(code, snap.version, when)
        except Exception as exc:
            # The database away: written once a poll succeeds again (`_look_again`).
            log.warning("scheduling table %s failed, to be done again: %r", code, exc)
            with self._failing:
                self._failed.add(code)
            return
        self._wrote(code, when)

    def _when(self, snap) -> float | None:
        """When the table's next automatic step falls due (None: nothing is due). If
        that cannot be worked out, a look again soon: the step claimed then works it
        out from the committed state (`run_automatic`), and writes it if not due."""
        try:
            due = self._next(snap)
        except Exception:
            log.exception("working out table %s's next step failed", snap.code)
            return time.time() + LOOK_AGAIN_SECONDS
        return due[0] if due else None

    def _wrote(self, code: str, when: float | None) -> None:
        self._remember(code, cleared=when is None)
        if when is not None:
            self._expect(when)

    def _loop(self) -> None:
        while not self._stop.is_set():
            polled = time.time()
            try:
                with self._app.app_context():
                    codes = claim_due(polled)
            except Exception:
                if not self._lost:
                    log.exception("claiming due steps failed")
                self._lost = True
                codes = []
            else:
                if self._lost or self._failed:
                    self._look_again()
            for code in codes:
                self._run_one(code)
            if not codes:
                self._nudge.wait(self._until_next_poll(polled))
                self._nudge.clear()

    def _look_again(self) -> None:
        """The database answers again: write the due rows that could not be written,
        and, if polls failed, look at every table with a socket here again (a presence
        change meanwhile may have moved a timer), in the background."""
        with self._failing:
            codes, self._failed = self._failed, set()
        if self._lost:
            self._lost = False
            try:
                codes |= set(self._served())
            except Exception:
                log.exception("listing this process's tables failed")
            log.warning("the database answers again: looking at %d tables again", len(codes))
        if not codes:
            return

        def wake_all():
            with self._app.app_context():
                for code in codes:
                    self.wake(code)

        background(wake_all, "skymo-due-again")

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


# Every change writes its table's due row: the SQL is built once (app.storage.queries).
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


def write_due(code: str, version: int, when: float | None, defer: bool = False) -> None:
    """Upsert (or delete) a table's due row, unless a newer version already wrote it: a
    late write from an older snapshot never moves a step back or forward. `defer`: in
    a transaction, sent with its next statement or its COMMIT (app.storage.pool)."""
    query, params = (
        (_DUE_DELETE, (code, version))
        if when is None
        else (_DUE_UPSERT, (code, float(when), version))
    )
    if defer:
        query.defer(*params)
    else:
        query.execute(*params)


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

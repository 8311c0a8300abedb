"""The one process's schedulers (app.tables.ports.Scheduler): one thread that runs each
table's next automatic step when it falls due, and, for tests, bots that move at once
inside the request that gave them the turn."""

from __future__ import annotations

import heapq
import logging
import threading
import time

from app.storage.models import db, open_table_codes
from app.storage.table_store import Snapshot, store
from app.tables.automation import next_automatic, run_automatic
from app.tables.ports import Presence
from app.tables.service import Timing

log = logging.getLogger(__name__)

SWEEP_SECONDS = 60.0  # how often old presence entries are forgotten


class Scheduler:
    def __init__(self, presence: Presence, timing: Timing):
        self.presence = presence
        self.timing = timing
        self._heap: list[tuple[float, str]] = []
        self._due: dict[str, float] = {}  # the one live entry per table
        self._cond = threading.Condition()
        self._stepping = threading.Lock()  # held while a step runs (see `clear`)
        self._cleared = 0  # how many times `clear` ran
        self._thread: threading.Thread | None = None
        self._app = None
        self._swept = time.time()

    def start(self, app) -> None:
        self._app = app
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="skymo-scheduler", daemon=True)
            self._thread.start()
        # Resume every table that was in play when the server stopped.
        for code in open_table_codes():
            self.wake(code)

    def wake(self, code: str, snap: Snapshot | None = None) -> None:
        """Look at this table again: schedule its next automatic step (one per table).
        `snap`, when given, is the state just committed."""
        try:
            if snap is None:
                with db.connection_context():
                    snap = store.current(code)
            due = next_automatic(snap, self.presence, self.timing) if snap is not None else None
        except Exception:
            log.exception("scheduling table %s failed", code)
            return
        with self._cond:
            if due is None:
                self._due.pop(code, None)
                return
            self._due[code] = due[0]
            heapq.heappush(self._heap, (due[0], code))
            self._cond.notify()

    def schedule(self, snap: Snapshot) -> None:
        """After a committed change: let bots and timers follow it."""
        self.wake(snap.code, snap)

    def within(self, snap: Snapshot) -> None:
        """In a change's transaction: nothing to write (the next step is kept in memory,
        after the commit)."""

    def prepare(self, code: str) -> None:
        """Before a change: nothing to read."""

    def pending(self) -> int:
        with self._cond:
            return len(self._due)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._heap or self._heap[0][0] > time.time():
                    timeout = self._heap[0][0] - time.time() if self._heap else SWEEP_SECONDS
                    self._cond.wait(min(timeout, SWEEP_SECONDS))
                    self._sweep()
                when, code = heapq.heappop(self._heap)
                if self._due.get(code) != when:
                    continue  # superseded by a later wake
                del self._due[code]
                cleared = self._cleared
            with self._stepping:
                if cleared != self._cleared:
                    continue  # taken just before a `clear`: forgotten too
                changed = False
                try:
                    # As a request: its queries open a connection, closed at the end (a
                    # connection_context would lose track of the one the change step
                    # gives back before it queues for the table: release_connection).
                    with self._app.app_context():
                        changed = run_automatic(code)
                except Exception:
                    log.exception("automatic step at table %s failed", code)
                finally:
                    if not db.is_closed():
                        db.close()
                if not changed:  # a change schedules what follows it itself
                    self.wake(code)

    def clear(self) -> None:
        """Forget every pending step, once a step running now (and what it schedules)
        is done: before the database the steps use is closed (each test's app). A step
        of the old app run on the next one's database, or on a connection being closed
        under it, crashed the test process (SQLite, in C)."""
        with self._cond:
            self._cleared += 1
            self._heap.clear()
            self._due.clear()
        with self._stepping, self._cond:  # the running step's own wakes, if any
            self._heap.clear()
            self._due.clear()

    def _sweep(self) -> None:
        now = time.time()
        if now - self._swept >= SWEEP_SECONDS:
            self._swept = now
            self.presence.sweep(now)


class InlineScheduler:
    """Tests: bots move at once, inside the request that gave them the turn; timers for
    people never fire (no thread)."""

    def __init__(self):
        self._running = threading.local()

    def schedule(self, snap: Snapshot) -> None:
        if getattr(self._running, "on", False):
            return  # the loop below goes on with the next step
        self._running.on = True
        try:
            for _ in range(10_000):
                if not run_automatic(snap.code, ignore_delays=True):
                    break
        finally:
            self._running.on = False

    def wake(self, code: str, snap: Snapshot | None = None) -> None:
        """Nothing runs by itself here."""

    def within(self, snap: Snapshot) -> None:
        """Nothing to write."""

    def prepare(self, code: str) -> None:
        """Nothing to read."""

    def start(self, app) -> None:
        """No thread."""

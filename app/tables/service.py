"""The table service: the one change path every command and timer takes, with the
adapters app/wiring.py gives it (boardgame.io's master: fetch, authorize, stale check,
apply, persist, send each screen its view):

    prepare -> lock -> load -> check the version (where the page matters) -> act
    -> save -> note what follows (in the transaction) -> commit
    -> publish the saved snapshot -> schedule what follows

The app's service is `current()`: commands (lobby.py, playing.py, automation.py) run in
a request or in a scheduler's app context."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import peewee as pw
from flask import current_app
from flask_babel import gettext as _

from app.storage.models import Table
from app.storage.pool import Conflict
from app.storage.table_store import Snapshot, Stale, TableError
from app.tables import step
from app.tables.ports import Presence, Publisher, Scheduler, TableStore
from app.tables.step import ANY_VERSION, Change, Unchanged

EXTENSION = "skymo.tables"  # where the app keeps its service (app.extensions)


@dataclass
class Timing:
    bot_delay: float = 0.8  # seconds a bot waits, so people can follow its moves
    next_round_seconds: float = 20
    inline_bots: bool = False  # tests: bots move inside the request, no scheduler thread


@dataclass(eq=False)
class TableService:
    store: TableStore
    publisher: Publisher
    scheduler: Scheduler
    presence: Presence
    timing: Timing

    def change(
        self, code: str, act: Callable[[Change], object], *, version=ANY_VERSION, missing_ok=False
    ) -> Snapshot | None:
        """Run `act` on the table as one change and return the committed snapshot. `act`
        raises TableError (nothing changes) or Unchanged (None is returned)."""
        code = (code or "").strip().upper()
        self.scheduler.prepare(code)
        done = None
        *first, last = self.store.attempts()
        for optimistic in first:
            # Anything but a plain commit is decided again on the row as locked and
            # read: a table another change reached first (Conflict), and a refusal or
            # nothing to do, which the known snapshot may be too old for.
            try:
                done = self._commit(code, act, version, missing_ok, optimistic)
            except (Conflict, Stale, TableError, Unchanged, pw.InternalError):
                done = None
            if done is not None:
                break
        if done is None:
            try:
                done = self._commit(code, act, version, missing_ok, last)
            except Unchanged:
                return None
        snap, what = done
        if snap is None:
            return None
        self.store.remember(snap)
        if snap.table.status == Table.CLOSED:
            self.store.forget(code)
            self.presence.forget(code)
        self.publisher.publish(snap.code, what, snap)
        self.scheduler.schedule(snap)
        return snap

    def _commit(self, code, act, version, missing_ok, optimistic):
        """Lock, load, act, save and commit: (the committed snapshot or None, what to
        push), or None when an optimistic attempt knows no snapshot of the table."""
        with self.store.locked(code):
            snap = self.store.for_change(code, optimistic)
            if optimistic and snap is None:
                return None
            if snap is None or (snap.table.status == Table.CLOSED and not missing_ok):
                if missing_ok:
                    return None, "table"
                raise TableError(_("There is no table with that code."), 404)
            if version is not ANY_VERSION:
                step.check_version(snap.table, version)
            ch = Change(snap)
            act(ch)
            step.save(ch, self.store)
            self.scheduler.within(snap)
        return snap, ch.what


def current() -> TableService:
    """The current app's table service."""
    return current_app.extensions[EXTENSION]


def change(code: str, act: Callable[[Change], object], **options) -> Snapshot | None:
    """`TableService.change` on the current app's service."""
    return current().change(code, act, **options)

"""The one change path. Every command and every timer goes through `change`:

    lock -> load -> check the version (where the page matters) -> act -> save
    -> note what follows (in the transaction) -> commit
    -> publish the saved snapshot -> schedule what follows

The transport (who receives the published snapshot) and the scheduler are set by
`init_app` behind small functions, so another process layout can replace them."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import peewee as pw
from flask_babel import gettext as _

from app.engine import GAME_OVER, ROUND_OVER, Game, to_record
from app.features import stats
from app.storage.models import GameRecord, Table, on_postgres
from app.storage.pool import Conflict
from app.storage.table_store import Snapshot, Stale, TableError, store

log = logging.getLogger(__name__)

ANY_VERSION = object()  # a command whose outcome does not depend on the page shown


@dataclass
class Change:
    """What an act function works on, under the table's lock."""

    snap: Snapshot
    game_changed: bool = False  # the engine state changed: write it
    seats_changed: bool = False  # seats were added or left: read them again
    what: str = "table"  # what to push: "table" (the whole table) or "lobby"

    @property
    def table(self) -> Table:
        return self.snap.table

    @property
    def game(self) -> Game | None:
        return self.snap.game

    @property
    def seats(self):
        return self.snap.seats

    def set_game(self, game: Game | None) -> None:
        self.snap.game = game
        self.snap.past_rounds = 0
        self.game_changed = True


class Unchanged(Exception):
    """Raised by an act function: nothing to do (nothing is written or pushed)."""


# Set by init_app: publish(snapshot, what) pushes a committed snapshot to its sockets;
# schedule(snapshot) looks at what the table does by itself next; within(snapshot), in
# the change's transaction after its write, writes that next step with it where it is
# stored (the multi-process mode's `due` row: a change that commits always has its
# follow-up); prepare(code), before the transaction, reads what that needs (presence).
_publish: Callable[[Snapshot, str], None] = lambda snap, what: None  # noqa: E731
_schedule: Callable[[Snapshot], None] = lambda snap: None  # noqa: E731
_within: Callable[[Snapshot], None] = lambda snap: None  # noqa: E731
_prepare: Callable[[str], None] = lambda code: None  # noqa: E731


def set_transport(publish: Callable[[Snapshot, str], None]) -> None:
    global _publish
    _publish = publish


def set_scheduler(
    schedule: Callable[[Snapshot], None],
    within: Callable[[Snapshot], None] | None = None,
    prepare: Callable[[str], None] | None = None,
) -> None:
    global _schedule, _within, _prepare
    _schedule = schedule
    _within = within or (lambda snap: None)
    _prepare = prepare or (lambda code: None)


def change(
    code: str, act: Callable[[Change], object], *, version=ANY_VERSION, missing_ok=False
) -> Snapshot | None:
    """Run `act` on the table as one change and return the committed snapshot. `act`
    raises TableError (nothing changes) or Unchanged (None is returned)."""
    code = (code or "").strip().upper()
    _prepare(code)
    done = None
    if on_postgres():
        # First on the newest snapshot this process knows (no row read: one round trip
        # to PostgreSQL instead of two). Anything but a plain commit is decided again on
        # the row as locked and read: a table another change reached first (Conflict),
        # and a refusal or nothing to do, which the known snapshot may be too old for.
        try:
            done = _commit(code, act, version, missing_ok, optimistic=True)
        except (Conflict, Stale, TableError, Unchanged, pw.InternalError):
            done = None
    if done is None:
        try:
            done = _commit(code, act, version, missing_ok)
        except Unchanged:
            return None
    snap, what = done
    if snap is None:
        return None
    store.remember(snap)
    if snap.table.status == Table.CLOSED:
        store.forget(code)
    _publish(snap, what)
    _schedule(snap)
    return snap


def _commit(code, act, version, missing_ok, optimistic=False):
    """Lock, load, act, save and commit: (the committed snapshot or None, what to push),
    or None when an optimistic attempt knows no snapshot of the table."""
    with store.locked(code):
        snap = store.for_change(code, optimistic)
        if optimistic and snap is None:
            return None
        if snap is None or (snap.table.status == Table.CLOSED and not missing_ok):
            if missing_ok:
                return None, "table"
            raise TableError(_("There is no table with that code."), 404)
        if version is not ANY_VERSION:
            check_version(snap.table, version)
        ch = Change(snap)
        act(ch)
        save(ch)
        _within(snap)
    return snap, ch.what


def check_version(table: Table, version) -> None:
    try:
        version = int(version)
    except (TypeError, ValueError):
        raise Stale() from None
    if version != table.version:
        raise Stale()


def save(ch: Change) -> None:
    """Bookkeeping of a changed game (votes at the end of a round; record and results
    at the end of the game), then the write, in the change's transaction."""
    snap = ch.snap
    if ch.game_changed and snap.game is not None:
        settle(snap.table, snap.game)
    if ch.seats_changed:
        from app.storage.table_store import seats_of

        snap.seats = seats_of(snap.table)
    store.write(snap, ch.game_changed)


def settle(table: Table, game: Game) -> None:
    if game.phase == ROUND_OVER and table.votes.get("round") != len(game.rounds):
        table.votes = {"round": len(game.rounds), "round_over_at": time.time(), "next": []}
    if game.phase == GAME_OVER and table.status != Table.FINISHED:
        table.status = Table.FINISHED
        table.votes = {"rematch": []}
        GameRecord.insert(
            table=table, number=table.game_number, record=to_record(game)
        ).on_conflict(
            conflict_target=[GameRecord.table, GameRecord.number],
            preserve=[GameRecord.record, GameRecord.finished_at],
        ).execute()
        stats.record_results(table, game)  # same transaction: results once per game


def save_game(table: Table, game: Game) -> None:
    """Write a game to its table in the caller's transaction (tests, imports): the
    bookkeeping of `save`, without the push."""
    settle(table, game)
    snap = Snapshot(table, [], game, 0)
    store.write(snap, True)
    store.forget(table.code)

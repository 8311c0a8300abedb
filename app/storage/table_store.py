"""Where tables live: Peewee rows, a per-version cache of the loaded game, and locks.

The change step (app.tables.step) is this module's only writer. Everything the rest of
the package needs from storage is here, behind `Store`, so that another store (for
example PostgreSQL claiming rows with FOR UPDATE) can take its place.

A game's finished rounds are written once, when the next round begins (`PastRound`);
the table row keeps only the current round, so a move rewrites a state of bounded size
instead of the whole growing game."""

from __future__ import annotations

import contextlib
import threading
import time
from collections import OrderedDict, defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field

from app.engine import GAME_OVER, Game
from app.engine.game import Round
from app.engine.view import carry_over, carry_over_newer
from app.storage.models import (
    GameRecord,
    PastRound,
    Seat,
    Table,
    db,
    on_postgres,
    utcnow,
)
from app.storage.table_rows import (
    PAST_ROUNDS,
    ROW,
    ROW_TO_CHANGE,
    VERSION_GUARD,
    release_connection,
    row_from,
    row_values,
    save_row,
    seats_of,
    stored_state,
)


class TableError(Exception):
    """A request the table cannot take; `message` is shown to the player."""

    def __init__(self, message: str, status: int = 400, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.field = field


class Stale(Exception):
    """The client acted on an old version: it gets the current table back."""


@dataclass
class Snapshot:
    """A table as committed (or being changed under its lock): the row, its seats in
    lobby order, and its game. A committed snapshot is never changed again: the change
    step works on a fork of its game."""

    table: Table
    seats: list[Seat]
    game: Game | None
    past_rounds: int = 0  # rounds of `game` already stored as PastRound rows
    extra: dict = field(default_factory=dict)
    # False: the row was made from what the cache keeps (`Store._known`), its state left
    # out (the game is kept); `Store.write` makes it again for the other processes.
    state_read: bool = True

    @property
    def code(self) -> str:
        return self.table.code

    @property
    def version(self) -> int:
        return self.table.version

    def seat(self, seat_id: int | None) -> Seat | None:
        return next((s for s in self.seats if s.id == seat_id), None)


@dataclass(frozen=True)
class Cached:
    version: int
    seats: list[Seat]
    game: Game | None
    past_rounds: int
    at: float
    row: dict | None = None  # the committed row's fields but its state


def fork(game: Game | None) -> Game | None:
    """A copy of `game` that may be changed without touching the original: finished
    rounds are shared (nothing changes them), the current round is copied."""
    if game is None:
        return None
    copy = Game.__new__(Game)
    copy.__dict__.update(game.__dict__)
    # Players are shared (nothing changes one: a rename replaces it): fewer new objects
    # per move for the garbage collector to walk.
    copy.players = list(game.players)
    copy.totals = dict(game.totals)
    copy.forfeited = list(game.forfeited)
    copy.game_seating = list(game.game_seating) if game.game_seating is not None else None
    if game.rounds:
        last = game.rounds[-1]
        copy.rounds = [*game.rounds[:-1], Round.from_dict(game.rules, last.to_dict())]
    else:
        copy.rounds = []
    carry_over(game, copy)  # the copy's views reuse what did not change
    return copy


def snapshot_message(snap: Snapshot) -> dict:
    """A committed snapshot as the other processes need it to push it without reading
    it back (app.cluster.fanout): the row as stored (its state holds the current round) and the
    seats (their tokens too: visitors are recognised from the known seats). Only ever
    between the server's processes: each socket still gets its own player's view."""
    return {"t": row_values(snap.table), "s": [row_values(s) for s in snap.seats]}


class Store:
    """Peewee storage (SQLite by default) with an in-process cache of committed
    snapshots, keyed by table version."""

    CACHE_SIZE = 4000  # tables whose loaded game stays in memory
    IDLE_SECONDS = 5 * 60  # a table unchanged this long leaves the cache

    def __init__(self):
        self._locks: dict[str, threading.Lock] = defaultdict(threading.Lock)
        self._users: dict[str, int] = defaultdict(int)  # holders and waiters per lock
        self._guard = threading.Lock()
        self._write_lock = threading.Lock()
        # code -> (version, seats, game, past rounds, when remembered). The version is
        # kept apart: the change step changes its copy of the row, never this entry.
        self._cache: OrderedDict[str, Cached] = OrderedDict()

    # ----- locking -------------------------------------------------------------------
    @contextmanager
    def locked(self, code: str):
        """One change at a time per table, then one write transaction at a time in this
        process. SQLite has a single writer anyway; queueing here wakes the next writer
        at once, where SQLite's busy handler would poll with growing sleeps. The version
        check keeps a change exactly-once across processes too. Locks of tables nobody
        is changing are dropped (memory stays flat as tables come and go)."""
        release_connection()
        with self._guard:
            lock = self._locks[code]
            self._users[code] += 1
        # On PostgreSQL many processes write at once: the table row's lock (for_change)
        # orders changes, and one write at a time per process would only queue them.
        write_lock = contextlib.nullcontext() if on_postgres() else self._write_lock
        try:
            with lock, write_lock, db.atomic():
                yield
        finally:
            with self._guard:
                self._users[code] -= 1
                if self._users[code] <= 0:
                    del self._users[code]
                    self._locks.pop(code, None)

    @contextmanager
    def serialized(self, lock_id: int):
        """A write transaction that runs alone among those asking for `lock_id`, in every
        process: for a decision no table's row can lock (Play now's "join a waiting
        table, or open one"). SQLite has one writer (this process's write lock first, as
        `locked`); PostgreSQL takes an advisory lock until the commit."""
        release_connection()
        write_lock = contextlib.nullcontext() if on_postgres() else self._write_lock
        with write_lock, db.atomic():
            if on_postgres():
                db.execute_sql("SELECT pg_advisory_xact_lock(%s)", (lock_id,))
            yield

    def attempts(self) -> tuple[bool, ...]:
        """How a change tries (app.tables.ports.TableStore): on PostgreSQL first on the
        newest snapshot this process knows, with no row read (one round trip instead of
        two), then on the row as locked and read; elsewhere on the row alone."""
        return (True, False) if on_postgres() else (False,)

    # ----- reading -------------------------------------------------------------------
    def row(self, code: str) -> Table | None:
        return ROW.first(Table, (code or "").strip().upper())

    def current(self, code: str) -> Snapshot | None:
        """The committed snapshot of a table (from the cache when its version is the
        stored one: one small query instead of decoding the game)."""
        table = self.row(code)
        if table is None:
            return None
        return self.snapshot_of(table)

    def snapshot_of(self, table: Table) -> Snapshot:
        with self._guard:
            hit = self._cache.get(table.code)
        if hit is not None and hit.version == table.version:
            return Snapshot(table, hit.seats, hit.game, hit.past_rounds)
        game, past = self._load_game(table)
        snap = Snapshot(table, seats_of(table), game, past)
        self.remember(snap)
        return snap

    def for_change(self, code: str, optimistic: bool = False) -> Snapshot | None:
        """Under the table's lock: the snapshot to change, with a forked game. On
        PostgreSQL the row stays locked (SELECT ... FOR UPDATE) until the change commits:
        a change of the same table in another process waits, then sees this one.

        `optimistic` (PostgreSQL): the newest snapshot this process knows, without a
        query, if it knows one (else None); its version is checked when the change's
        first statement reaches the server, the COMMIT at the latest (app.storage.pool.Conflict
        if another change came first)."""
        code = (code or "").strip().upper()
        if optimistic:
            return self._known(code)
        table = ROW_TO_CHANGE.first(Table, code)
        if table is None:
            return None
        snap = self.snapshot_of(table)
        return Snapshot(snap.table, list(snap.seats), fork(snap.game), snap.past_rounds)

    def _known(self, code: str) -> Snapshot | None:
        with self._guard:
            hit = self._cache.get(code)
        if hit is None or hit.row is None:
            return None
        # Made from the committed fields (assigned, never changed in place): all of them
        # are written back with the change (Peewee counts them as changed).
        table = Table(**hit.row)
        # Locks the row and stops the transaction unless it is still at this version:
        # sent with the change's first statement (BEGIN's round trip), or its COMMIT.
        VERSION_GUARD.defer(hit.version, code)
        return Snapshot(table, list(hit.seats), fork(hit.game), hit.past_rounds, state_read=False)

    def _load_game(self, table: Table) -> tuple[Game | None, int]:
        state = table.state
        if not state:
            return None, 0
        past = state.get("past_rounds", 0)
        if past:
            rows = PAST_ROUNDS.all(PastRound, table.code, table.game_number)
            state = dict(state, rounds=[r.data for r in rows] + state["rounds"])
        return Game.from_dict(state), past

    def from_message(self, message: dict) -> Snapshot | None:
        """The snapshot another process committed and published (`snapshot_message`),
        remembered here, without a query: finished rounds come from this process's own
        copy of the game when it has them all (else they are read, once per round)."""
        table = row_from(Table, message["t"], ("created_at", "updated_at"))
        seats = [row_from(Seat, s, ("joined_at",)) for s in message["s"]]
        state = table.state
        game, past = None, 0
        if state:
            past = state.get("past_rounds", 0)
            game = Game.from_dict(state)
            known = self._known_game(table.code, game)
            if past:
                finished = self._finished_rounds(table, game, past, known)
                if finished is None:  # the game moved on meanwhile: as stored now
                    return self.current(table.code)
                game.rounds = finished + game.rounds
            if known is not None:
                carry_over_newer(known, game)  # its views reuse what did not change
        snap = Snapshot(table, seats, game, past)
        self.remember(snap)
        return snap

    def _known_game(self, code: str, game: Game) -> Game | None:
        """This process's copy of `game` (at an earlier version), if it has one."""
        with self._guard:
            hit = self._cache.get(code)
        known = hit.game if hit is not None else None
        return known if known is not None and known.id == game.id else None

    def _finished_rounds(
        self, table: Table, game: Game, past: int, known: Game | None
    ) -> list[Round] | None:
        # Rounds before a known game's last are finished: nothing changes them again.
        if known is not None and len(known.rounds) > past:
            return known.rounds[:past]
        rows = PAST_ROUNDS.all(PastRound, table.code, table.game_number)
        if len(rows) != past:  # a finished game keeps its rounds in its row instead
            return None
        return [Round.from_dict(game.rules, r.data) for r in rows]

    def load_game(self, table: Table) -> Game | None:
        return self.snapshot_of(table).game

    # ----- writing -------------------------------------------------------------------
    def write(self, snap: Snapshot, game_changed: bool) -> None:
        """Version, time and (if it changed) state, in the caller's transaction."""
        table, game = snap.table, snap.game
        if game_changed:
            snap.past_rounds = self._write_state(table, game, snap.past_rounds)
        elif not snap.state_read:  # a known snapshot's row (`_known`)
            # Unchanged, but the other processes' message carries it (written again).
            table.state = stored_state(game, snap.past_rounds)
        table.version += 1
        table.updated_at = utcnow()
        save_row(table)

    @staticmethod
    def _write_state(table: Table, game: Game | None, past: int) -> int:
        if game is None:
            table.state = None
            return 0
        if game.phase == GAME_OVER:
            # Written once more, whole: a finished game is read as one row.
            PastRound.delete().where(PastRound.table == table.code).execute()
            table.state = stored_state(game, 0)
            return 0
        done = len(game.rounds) - 1
        if done > past:
            PastRound.insert_many(
                [
                    {
                        "table": table.code,
                        "game_number": table.game_number,
                        "number": i + 1,
                        "data": game.rounds[i].to_dict(),
                    }
                    for i in range(past, done)
                ]
            ).on_conflict(
                conflict_target=[PastRound.table, PastRound.game_number, PastRound.number],
                preserve=[PastRound.data],
            ).execute()
            past = done
        table.state = stored_state(game, past)
        return past

    def remember(self, snap: Snapshot) -> None:
        """Keep a committed snapshot (the change step and readers call this)."""
        now = time.monotonic()
        # The row without its state: the game is kept already (one copy of it less for
        # the garbage collector to walk); `write` makes the state again if it is needed.
        row = row_values(snap.table, Table.state)
        entry = Cached(snap.version, snap.seats, snap.game, snap.past_rounds, now, row)
        with self._guard:
            current = self._cache.get(snap.code)
            if current is not None and current.version > entry.version:
                return  # a newer one was remembered meanwhile
            self._cache[snap.code] = entry
            self._cache.move_to_end(snap.code)
            while len(self._cache) > self.CACHE_SIZE:
                self._cache.popitem(last=False)
            oldest = next(iter(self._cache.values()))
            if now - oldest.at > self.IDLE_SECONDS:
                self._drop_idle(now)

    def _drop_idle(self, now: float) -> None:
        for code in [c for c, e in self._cache.items() if now - e.at > self.IDLE_SECONDS]:
            del self._cache[code]

    def forget(self, code: str) -> None:
        with self._guard:
            self._cache.pop(code, None)

    def cached(self) -> int:
        with self._guard:
            return len(self._cache)

    def in_play(self, code: str) -> bool:
        """The newest snapshot this process knows has a game going (True when it knows
        none: the caller then does what a game in play needs)."""
        with self._guard:
            hit = self._cache.get(code)
        return hit is None or (hit.game is not None and hit.game.phase != GAME_OVER)

    def known_seats(self, code: str) -> list[Seat] | None:
        """The seats of the newest snapshot of this table this process knows, if any
        (who a visitor is, without a query: app.features.accounts.find_seat)."""
        with self._guard:
            hit = self._cache.get(code)
        return hit.seats if hit is not None else None

    def game_record(self, code: str, number: int) -> GameRecord | None:
        code = (code or "").strip().upper()
        return GameRecord.get_or_none((GameRecord.table == code) & (GameRecord.number == number))


store = Store()

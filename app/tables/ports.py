"""What the table service needs from the world around it, as typing Protocols: a store
for tables, a publisher for committed changes, a scheduler for what a table does by
itself, and presence. app/wiring.py picks the adapters (one process, or PostgreSQL +
Redis for many); the service never asks which."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Protocol

from app.storage.table_store import Snapshot


class TableStore(Protocol):
    def locked(self, code: str) -> AbstractContextManager: ...

    def for_change(self, code: str, optimistic: bool = False) -> Snapshot | None: ...

    def write(self, snap: Snapshot, game_changed: bool) -> None: ...

    def remember(self, snap: Snapshot) -> None: ...

    def forget(self, code: str) -> None: ...

    def current(self, code: str) -> Snapshot | None: ...

    def attempts(self) -> tuple[bool, ...]:
        """The `optimistic` flags of a change's attempts, in order: (True, False) tries
        the newest known snapshot first where a row read is a round trip away."""
        ...


class Publisher(Protocol):
    def publish(self, code: str, what: str = "table", snapshot: Snapshot | None = None) -> None:
        """Send the committed snapshot to every screen at the table."""
        ...

    def broadcast(self, code: str, name: str, data) -> None:
        """An event at the table (a reaction: not stored) on every screen there."""
        ...


class Scheduler(Protocol):
    def prepare(self, code: str) -> None:
        """Before a change, outside its transaction: read what `within` needs."""

    def within(self, snap: Snapshot) -> None:
        """In a change's transaction, after its write."""

    def schedule(self, snap: Snapshot) -> None:
        """After a committed change: let bots and timers follow it."""

    def wake(self, code: str, snap: Snapshot | None = None) -> None:
        """Look at a table again (someone came or went)."""

    def start(self, app) -> None: ...


class Presence(Protocol):
    def present(self, code: str) -> set[int]: ...

    def arrived(self, code: str, seat_id: int) -> None: ...

    def absent_from(self, code: str, seat_id: int) -> float | None: ...

    def away_since(self, code: str, seat_id: int, now: float) -> float | None: ...

    def forget(self, code: str) -> None: ...

    def on_change(self, listener: Callable[[str, int, bool], None]) -> None: ...

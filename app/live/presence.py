"""Who is at which table: an open socket, or a request in the last minute (a player
without JavaScript has no socket). The scheduler's timers for absent players and the
"away" tags read it.

In-process and indexed by table: a lookup never scans other tables, and a table's
entries go when it closes or once they are old (`sweep`). In the multi-process mode a
shared store (app.cluster.presence.SharedPresence, in Redis) is consulted as well: this process's
own sockets and requests are written to it, and lookups see every process's."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)


class Presence:
    # A request from a seat counts as presence for this long.
    REQUEST_PRESENCE = 60.0
    # Old "last seen" times are forgotten after this long: every timer that reads them
    # (at most the 30-minute rejoin window) has fired by then.
    FORGET_AFTER = 2 * 60 * 60.0

    def __init__(self, shared=None):
        """`shared`: app.cluster.presence.SharedPresence in the multi-process mode (started
        with this presence), None for one process."""
        self._lock = threading.Lock()
        self._sockets: dict[str, dict[int, int]] = {}  # code -> seat id -> open sockets
        self._seen: dict[str, dict[int, float]] = {}  # code -> seat id -> present until
        self._listeners: list[Callable[[str, int, bool], None]] = []
        self._shown: list[Callable[[str, int, bool], None]] = []
        self.started_at = time.time()
        self.shared = shared

    def on_change(self, listener: Callable[[str, int, bool], None]) -> None:
        """listener(code, seat_id, present) runs when a seat's first socket opens or
        its last one closes (the timers of absent players are worked out again).
        Registering the same listener again does nothing."""
        if listener not in self._listeners:
            self._listeners.append(listener)

    def on_shown(self, listener: Callable[[str, int, bool, bool], None]) -> None:
        """listener(code, seat_id, present, here_changed) runs when a seat's first
        socket opens or its last one closes, and when a request brings back a seat that
        was away. `here_changed`: whether the seat's "here"/"away" mark changes for the
        others (a page's socket opening just after its request made the seat present
        changes nothing there; in a game, the countdown for a seat without a socket
        may)."""
        if listener not in self._shown:
            self._shown.append(listener)

    # ----- sockets and requests ----------------------------------------------------
    def opened(self, code: str, seat_id: int | None) -> None:
        if seat_id is None:
            return
        was_present = self._is_present(code, seat_id)
        with self._lock:
            seats = self._sockets.setdefault(code, {})
            seats[seat_id] = seats.get(seat_id, 0) + 1
            first = seats[seat_id] == 1
        if first:
            if self.shared is not None:
                self.shared.opened(code, seat_id)
            self.notify(code, seat_id, True, here_changed=not was_present)

    def closed(self, code: str, seat_id: int | None, lost: bool = False) -> None:
        """A socket of this seat closed; `lost`: without a goodbye (its pings went
        unanswered, or its connection broke), so the seat is away from now on even if
        its page made a request within the last minute."""
        if seat_id is None:
            return
        with self._lock:
            seats = self._sockets.get(code, {})
            left = seats.get(seat_id, 0) - 1
            if left > 0:
                seats[seat_id] = left
                return
            seats.pop(seat_id, None)
            if not seats:
                self._sockets.pop(code, None)
            seen = self._seen.setdefault(code, {})
            now = time.time()
            seen[seat_id] = now if lost else max(seen.get(seat_id, 0.0), now)
        if self.shared is not None:
            self.shared.closed(code, seat_id, lost)
        # Still present (a recent request, another process's socket): the mark stays.
        self.notify(code, seat_id, False, here_changed=not self._is_present(code, seat_id))

    def touch(self, code: str, seat_id: int) -> None:
        """A request from this seat: present for a while even without a socket. When
        the seat was away, the others' pages show it back (`on_shown`)."""
        was_present = self._is_present(code, seat_id)
        self.arrived(code, seat_id)
        if not was_present:
            self.notify(code, seat_id, True, sockets=False)

    def arrived(self, code: str, seat_id: int) -> None:
        """`touch` without telling the listeners: for a seat taken in a change, whose
        push shows it present already."""
        until = time.time() + self.REQUEST_PRESENCE
        with self._lock:
            seen = self._seen.setdefault(code, {})
            seen[seat_id] = max(seen.get(seat_id, 0.0), until)
        if self.shared is not None:
            self.shared.seen(code, seat_id, until)

    def seen(self, code: str, seat_id: int, until: float) -> None:
        """This seat counts as present until `until`, then away from that moment."""
        with self._lock:
            self._seen.setdefault(code, {})[seat_id] = until
        if self.shared is not None:
            self.shared.seen(code, seat_id, until)

    # ----- lookups -----------------------------------------------------------------
    def present(self, code: str) -> set[int]:
        """Seat ids with an open socket at this table, or a recent request."""
        now = time.time()
        with self._lock:
            recent = {s for s, until in self._seen.get(code, {}).items() if until > now}
            mine = set(self._sockets.get(code, ())) | recent
        shared = self.shared.present(code, now) if self.shared is not None else None
        return mine | (shared or set())

    def _is_present(self, code: str, seat_id: int) -> bool:
        """This seat counts as present: this process's knowledge first (no Redis read
        for a seat seen here lately), then every process's."""
        now = time.time()
        with self._lock:
            if seat_id in self._sockets.get(code, ()):
                return True
            if self._seen.get(code, {}).get(seat_id, 0.0) > now:
                return True
        if self.shared is None:
            return False
        shared = self.shared.present(code, now)
        return shared is not None and seat_id in shared

    def absent_from(self, code: str, seat_id: int) -> float | None:
        """From when this seat is away: None while it has an open socket; else the end
        of its request presence (which may still be ahead) or the server's start."""
        with self._lock:
            if seat_id in self._sockets.get(code, ()):
                return None
            mine = self._seen.get(code, {}).get(seat_id)
        if self.shared is not None:
            shared = self.shared.absent_from(code, seat_id, time.time())
            if shared is not None:  # None: Redis did not answer, this process decides
                socket_open, since = shared
                if socket_open:
                    return None
                times = [t for t in (since, mine) if t is not None]
                return max(times) if times else self.started_at
        return self.started_at if mine is None else mine

    def away_since(self, code: str, seat_id: int, now: float | None = None) -> float | None:
        """When this seat stopped being present, or None while it is present."""
        now = time.time() if now is None else now
        since = self.absent_from(code, seat_id)
        return None if since is None or since > now else since

    # ----- memory ------------------------------------------------------------------
    def forget(self, code: str) -> None:
        """A closed table: nothing of it is kept (its sockets close on their own)."""
        with self._lock:
            self._seen.pop(code, None)
        if self.shared is not None:
            self.shared.forget(code)

    def held(self) -> list[tuple[str, int]]:
        """(code, seat id) of every seat with a socket open in this process."""
        with self._lock:
            return [(code, seat) for code, seats in self._sockets.items() for seat in seats]

    def sweep(self, now: float | None = None) -> int:
        """Drop "last seen" times older than FORGET_AFTER; returns how many went."""
        cutoff = (time.time() if now is None else now) - self.FORGET_AFTER
        dropped = 0
        with self._lock:
            for code in list(self._seen):
                seen = self._seen[code]
                for seat_id in [s for s, until in seen.items() if until < cutoff]:
                    del seen[seat_id]
                    dropped += 1
                if not seen:
                    del self._seen[code]
        return dropped

    def size(self) -> tuple[int, int]:
        """(tables with sockets, tables with last-seen times): for soak tests."""
        with self._lock:
            return len(self._sockets), len(self._seen)

    def notify(
        self, code: str, seat_id: int, present: bool, sockets: bool = True, here_changed=True
    ) -> None:
        """Tell the `on_shown` listeners, and the `on_change` ones if a seat's sockets
        changed (`sockets`)."""
        calls = [(f, (code, seat_id, present)) for f in self._listeners] if sockets else []
        calls += [(f, (code, seat_id, present, here_changed)) for f in self._shown]
        for listener, args in calls:
            try:
                listener(*args)
            except Exception:
                log.exception("presence listener failed")

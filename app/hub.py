"""Who is connected to which table, and pushing rendered partials to them.

In-process: one server process holds every socket of its tables. Each connection gets
its own rendering (a player's view differs from the others'), produced by the renderer
the web layer registers, so this module knows nothing about templates."""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Connection:
    code: str
    seat_id: int | None  # None: a spectator
    csrf: str  # the recipient's CSRF token, for the forms in pushed partials
    send: Callable[[str], None]
    base_url: str = "http://localhost/"  # for absolute links (the invite URL)
    name: str = ""  # a signed-in visitor's username, prefilled in the join form
    locale: str = "en"  # the language of the page that opened the socket: pushes use it
    lock: threading.Lock = field(default_factory=threading.Lock)
    sent_version: int = -1  # the table version this socket last received


# renderer(code, conns, what, snapshot) -> (table version, [(connection, html)])
Renderer = Callable[..., list[tuple[Connection, str]]]


class Hub:
    # A request from a seat (a player without JavaScript has no socket) counts as
    # presence for this long.
    REQUEST_PRESENCE = 60.0

    def __init__(self):
        self._lock = threading.Lock()
        self._tables: dict[str, set[Connection]] = defaultdict(set)
        self.started_at = time.time()
        # (code, seat id) -> until when the seat counts as present without a socket.
        self._seen: dict[tuple[str, int], float] = {}
        self._publish_locks: dict[str, threading.Lock] = {}
        self._renderer: Renderer | None = None
        self._listeners: list[Callable[[str, int, bool], None]] = []

    def set_renderer(self, renderer: Renderer) -> None:
        """renderer(code=, conns=, what=, snapshot=) -> (version, [(connection, html)])."""
        self._renderer = renderer

    def on_presence(self, listener: Callable[[str, int, bool], None]) -> None:
        """listener(code, seat_id, present) runs when a seat's first socket opens or its
        last one closes. Registering the same listener again does nothing (every app
        the factory makes registers its own, and tests make many)."""
        if listener not in self._listeners:
            self._listeners.append(listener)

    def add(self, conn: Connection) -> None:
        with self._lock:
            first = conn.seat_id is not None and conn.seat_id not in self._seats(conn.code)
            self._tables[conn.code].add(conn)
        if first:
            self._notify(conn.code, conn.seat_id, True)

    def remove(self, conn: Connection) -> None:
        with self._lock:
            conns = self._tables.get(conn.code)
            if conns is None or conn not in conns:
                return
            conns.discard(conn)
            if not conns:
                del self._tables[conn.code]
            last = conn.seat_id is not None and conn.seat_id not in self._seats(conn.code)
            if last:
                key = (conn.code, conn.seat_id)
                self._seen[key] = max(self._seen.get(key, 0.0), time.time())
        if last:
            self._notify(conn.code, conn.seat_id, False)

    def _seats(self, code: str) -> set[int]:
        return {c.seat_id for c in self._tables.get(code, ()) if c.seat_id is not None}

    def present(self, code: str) -> set[int]:
        """Seat ids with an open socket at this table, or a recent request."""
        now = time.time()
        with self._lock:
            recent = {seat for (c, seat), until in self._seen.items() if c == code and until > now}
            return self._seats(code) | recent

    def touch(self, code: str, seat_id: int) -> None:
        """A request from this seat: present for a while even without a socket."""
        with self._lock:
            key = (code, seat_id)
            self._seen[key] = max(self._seen.get(key, 0.0), time.time() + self.REQUEST_PRESENCE)

    def absent_from(self, code: str, seat_id: int) -> float | None:
        """From when this seat is away: None while it has an open socket; else the end
        of its request presence (which may still be ahead) or the server's start."""
        with self._lock:
            if seat_id in self._seats(code):
                return None
            return self._seen.get((code, seat_id), self.started_at)

    def away_since(self, code: str, seat_id: int, now: float | None = None) -> float | None:
        """When this seat stopped being present, or None while it is present. A seat
        not seen since the server started is away since then."""
        now = time.time() if now is None else now
        with self._lock:
            if seat_id in self._seats(code):
                return None
            since = self._seen.get((code, seat_id), self.started_at)
        return None if since > now else since

    def connections(self, code: str) -> list[Connection]:
        with self._lock:
            return list(self._tables.get(code, ()))

    def count(self) -> int:
        with self._lock:
            return sum(len(c) for c in self._tables.values())

    def publish(self, code: str, what: str = "table", snapshot=None) -> None:
        """Render and send `what` to every connection at the table. `snapshot` is the
        state just committed, if the caller has it (saves loading it again)."""
        self._push(code, None, what, snapshot)

    def send_to(self, conn: Connection, what: str) -> None:
        """Render and send `what` to one connection (a socket that just opened)."""
        self._push(conn.code, conn, what)

    def _push(self, code: str, only: Connection | None, what: str, snapshot=None) -> None:
        if self._renderer is None:
            return
        # One push at a time per table; a socket never gets an older version of the
        # table after a newer one (a push from a snapshot may come late).
        with self._publish_lock(code):
            conns = [only] if only is not None else self.connections(code)
            try:
                version, rendered = self._renderer(
                    code=code, conns=conns, what=what, snapshot=snapshot
                )
            except Exception:  # a broken render must not break the move that caused it
                log.exception("rendering %s for table %s failed", what, code)
                return
            dead = []
            for conn, html in rendered:
                if not html or version < conn.sent_version:
                    continue
                try:
                    with conn.lock:  # one writer at a time per socket
                        conn.send(html)
                        conn.sent_version = version
                except Exception:
                    dead.append(conn)
        for conn in dead:
            log.info("dropping a dead socket at table %s", code)
            self.remove(conn)

    def _publish_lock(self, code: str) -> threading.Lock:
        with self._lock:
            lock = self._publish_locks.get(code)
            if lock is None:
                lock = self._publish_locks[code] = threading.Lock()
            return lock

    def _notify(self, code: str, seat_id: int, present: bool) -> None:
        for listener in self._listeners:
            try:
                listener(code, seat_id, present)
            except Exception:
                log.exception("presence listener failed")


hub = Hub()

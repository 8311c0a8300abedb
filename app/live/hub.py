"""The sockets of each table, and sending them their pushes.

A push is rendered once for all of a table's sockets (the renderer the web layer
registers; this module knows nothing about templates), then each socket's HTML goes into
that socket's own queue. The socket's handler writes it out (`Connection.pump`), so a
slow or stalled reader never delays the player who moved nor anyone else: when its
queue is full it is dropped (the page reconnects and gets the whole table).

`publish` is the one process's publisher (app.tables.ports.Publisher). In the
multi-process mode app.cluster.fanout.Fanout is the publisher: it pushes here with
`push_local` and announces the change to the other processes through Redis, with the
committed snapshot, which they push to their own sockets with `push_local`."""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

QUEUE_SIZE = 32  # pushes waiting for one socket before it counts as stalled
WAKE = object()  # queued by `wake`: the sender looks at its socket again
HEARTBEAT = ""  # an empty message: htmx swaps nothing, the page knows its socket lives


def _gone(html) -> None:
    """A released connection's writer: its socket has closed."""
    raise ConnectionError("the socket has closed")


@dataclass(eq=False)
class Connection:
    code: str
    seat_id: int | None  # None: a spectator
    csrf: str  # the recipient's CSRF token, for the forms in pushed partials
    send: Callable[[str], None]
    base_url: str = "http://localhost/"  # for absolute links (the invite URL)
    name: str = ""  # a signed-in visitor's username, prefilled in the join form
    locale: str = "en"  # the language of the page that opened the socket: pushes use it
    page: str = ""  # the id of the page that opened the socket (`?p=`), if it sent one
    muted: frozenset = frozenset()  # seat ids whose chat messages this viewer hides
    visible: bool = True  # the page is shown, as it last said (alerts wait meanwhile)
    # True: pushes wait in a queue that `pump` sends from (sockets); False: send() is
    # called by whoever publishes (tests that capture pushes).
    queued: bool = False
    close: Callable[[], None] | None = None  # ends the socket when it is dropped
    # write_now(html) -> None if written at once, else the bytes still to send (queued
    # for the sender): the publisher writes what the socket takes without waiting,
    # since a woken sender waits its turn behind every runnable request.
    write_now: Callable[[str], bytes | None] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Held while anything is written to the socket: two frames must never interleave.
    writing: threading.Lock = field(default_factory=threading.Lock)
    sent_version: int = -1  # the newest table version handed to this socket
    _shown: int | None = None  # hash of the HTML last handed to it (None: unknown)
    dead: bool = False
    lost: bool = False  # it closed without a goodbye from the page (a dead connection)
    _queue: queue.Queue | None = None
    _partial: bool = False  # a direct write left part of a frame: its rest is queued

    def start(self) -> None:
        if self.queued and self._queue is None:
            self._queue = queue.Queue(QUEUE_SIZE)

    def offer(self, html: str, version: int, part: bool = False) -> bool:
        """Hand a push to this socket; False if the socket is gone or stalled. A
        socket never receives an older version of its table after a newer one, nor the
        very table it was just handed: sent again, it would reset what the player began
        on the page (an unfolded form, a name half typed), for nothing to see. `part`:
        a piece shown beside the table (a reaction), always sent."""
        shown = None if part else hash(html)
        with self.lock:
            if self.dead:
                return False
            if version < self.sent_version:
                return True
            if not part:
                if version == self.sent_version and shown == self._shown:
                    return True
                self._shown = shown
            self.sent_version = version
            if self._queue is None:
                try:
                    self.send(html)
                except Exception:
                    self.dead = True
                return not self.dead
            item = html
            if (
                self.write_now is not None
                and self._queue.empty()
                and self.writing.acquire(blocking=False)  # else the sender is writing
            ):
                try:
                    item = self.write_now(html)
                except Exception:
                    self.dead = True
                    return False
                finally:
                    self.writing.release()
                if item is None:
                    return True
                self._partial = True
            try:
                self._queue.put_nowait(item)
            except queue.Full:
                self.dead = True
        return not self.dead

    def answered(self, version: int) -> None:
        """The page got `version` as the answer to its own request: not pushed to it, and
        nothing older is sent after it."""
        with self.lock:
            self.sent_version = max(self.sent_version, version)
            self._shown = None  # the page shows its answer, not a push

    def stop(self) -> None:
        with self.lock:
            self.dead = True
        if self._queue is not None:
            # A full queue: the sender notices `dead` after its current send.
            with contextlib.suppress(queue.Full):
                self._queue.put_nowait(None)

    def release(self) -> None:
        """Once its socket has closed: drop what refers back to the socket (its
        writers, its close), so that the socket, its reader and this connection are
        freed at once. Kept, they form a cycle that waits for a full collection, and a
        closed socket's buffers with it (the soak's steady growth: docs/figures.md)."""
        with self.lock:
            self.dead = True
            self.send = _gone
            self.write_now = None
            self.close = None

    def wake(self) -> None:
        """Have the sender look at its socket (it closed, or the client sent something)."""
        if self._queue is not None:
            with contextlib.suppress(queue.Full):  # a full queue: the sender is busy anyway
                self._queue.put_nowait(WAKE)

    def pump(
        self, alive: Callable[[], bool] = lambda: True, woken=None, heartbeat: float | None = None
    ) -> None:
        """Send queued pushes until the connection stops or `alive()` turns false; run
        by the socket's own handler (no extra greenlet per socket). `woken()` runs on
        each `wake`. After `heartbeat` seconds without a push an empty message goes out:
        a page cannot see the protocol's pings, and counts its socket dead when it hears
        nothing for a while."""
        while True:
            try:
                html = self._queue.get(timeout=heartbeat)
            except queue.Empty:
                html = HEARTBEAT
            if html is None or self.dead or not alive():
                return
            if html is WAKE:
                if woken is not None:
                    woken()
                continue
            try:
                with self.writing:
                    self.send(html)  # html, or bytes: a frame's rest, a ping or pong
                    if isinstance(html, bytes):
                        self._partial = False
            except Exception:
                self.dead = self.lost = True
                log.info("dropping a dead socket at table %s", self.code)
                self.shut()
                return

    def write_frame(self, data: bytes, sendall: Callable[[bytes], object]) -> None:
        """Write a frame the socket's reader made (a ping, a pong, the close): at once
        when nothing else is being written, else queued behind it (never inside a push's
        frame, which would corrupt the stream; never waiting on a stalled send)."""
        if not self._partial and self.writing.acquire(blocking=False):
            try:
                sendall(data)
            finally:
                self.writing.release()
            return
        if self._queue is None:
            return  # unqueued: nothing is ever left half written
        try:
            self._queue.put_nowait(data)
        except queue.Full:
            self.dead = True

    def shut(self) -> None:
        """Close the socket (its handler then leaves the hub)."""
        close = self.close  # (released meanwhile: None)
        if close is not None:
            try:
                close()
            except Exception:
                log.debug("closing a dropped socket failed", exc_info=True)


# renderer(code=, conns=, what=, snapshot=) -> (table version, [(connection, html)])
Renderer = Callable[..., tuple[int, list[tuple[Connection, str]]]]


class Hub:
    """This process's sockets, by table. `presence` (None: not kept) hears of each
    socket opening and closing; `renderer` makes each socket's HTML of a push."""

    def __init__(self, presence=None, renderer: Renderer | None = None):
        self._lock = threading.Lock()
        self._tables: dict[str, set[Connection]] = {}
        self._presence = presence
        self._renderer = renderer
        self._events: dict[str, Callable[[str, object], None]] = {}
        # holding(code, held): this process's first socket at a table opened (True) or
        # its last one closed (False); called before the socket gets the table
        self._holding: list[Callable[[str, bool], None]] = []
        self._watchers: list[Callable[[str, int, bool], None]] = []  # `on_looking`

    def on_event(self, name: str, handler: Callable[[str, object], None]) -> None:
        """handler(code, data) shows an event (a reaction) to this process's sockets."""
        self._events[name] = handler

    def on_holding(self, listener: Callable[[str, bool], None]) -> None:
        """listener(code, held): see __init__ (multi-process mode: the other processes
        send this one a table's changes only while it holds a socket there)."""
        self._holding.append(listener)

    def broadcast(self, code: str, name: str, data) -> None:
        """An event at the table (not stored), on this process's sockets: the one
        process's publisher (app.cluster.fanout.Fanout tells the others too)."""
        self.show_event(code, name, data)

    def show_event(self, code: str, name: str, data) -> None:
        """An event, on this process's sockets only (unknown events are ignored)."""
        handler = self._events.get(name)
        if handler is not None:
            handler(code, data)

    def add(self, conn: Connection) -> None:
        conn.start()
        with self._lock:
            first = conn.code not in self._tables
            seen = self._looking(conn.code, conn.seat_id)
            self._tables.setdefault(conn.code, set()).add(conn)
            looks = not seen and self._looking(conn.code, conn.seat_id)
        if looks:
            self._tell_looking(conn, True)
        if first:
            for holding in self._holding:
                holding(conn.code, True)
        if self._presence is not None:
            self._presence.opened(conn.code, conn.seat_id)

    def remove(self, conn: Connection) -> None:
        conn.stop()
        with self._lock:
            conns = self._tables.get(conn.code)
            if conns is None or conn not in conns:
                return
            seen = self._looking(conn.code, conn.seat_id)
            conns.discard(conn)
            unseen = seen and not self._looking(conn.code, conn.seat_id)
            last = not conns
            if last:
                del self._tables[conn.code]
        if unseen:
            self._tell_looking(conn, False)
        if last:
            for holding in self._holding:
                holding(conn.code, False)
        if self._presence is not None:
            self._presence.closed(conn.code, conn.seat_id, conn.lost)

    def looking(self, code: str, seat_id: int) -> bool:
        """Whether a page of this seat at the table, with a socket here, is visible."""
        with self._lock:
            return self._looking(code, seat_id)

    def _looking(self, code: str, seat_id: int | None) -> bool:
        conns = self._tables.get(code, ())
        return any(c.seat_id == seat_id and c.visible for c in conns)

    def on_looking(self, listener: Callable[[str, int, bool], None]) -> None:
        """listener(code, seat_id, looking): this process's first visible page of a seat
        appeared (True) or its last one went (False). Multi-process mode: shared."""
        self._watchers.append(listener)

    def shown(self, conn: Connection, visible: bool) -> None:
        """The page of `conn` said it is visible, or hidden."""
        with self._lock:
            before = self._looking(conn.code, conn.seat_id)
            conn.visible = visible
            after = self._looking(conn.code, conn.seat_id)
        if before != after:
            self._tell_looking(conn, after)

    def looking_seats(self) -> list[tuple[str, int]]:
        """(code, seat id) of every seat with a visible page here."""
        with self._lock:
            return list(
                {
                    (code, c.seat_id)
                    for code, conns in self._tables.items()
                    for c in conns
                    if c.visible and c.seat_id is not None
                }
            )

    def _tell_looking(self, conn: Connection, looking: bool) -> None:
        if conn.seat_id is None:
            return
        for listener in self._watchers:
            try:
                listener(conn.code, conn.seat_id, looking)
            except Exception:
                log.exception("looking listener failed")

    def connections(self, code: str) -> list[Connection]:
        with self._lock:
            return list(self._tables.get(code, ()))

    def count(self) -> int:
        with self._lock:
            return sum(len(c) for c in self._tables.values())

    def tables(self) -> int:
        with self._lock:
            return len(self._tables)

    def codes(self) -> list[str]:
        """The tables with a socket in this process."""
        with self._lock:
            return list(self._tables)

    def publish(self, code: str, what: str = "table", snapshot=None) -> None:
        """Render `what` and hand it to every socket at the table: the one process's
        publisher (app.tables.ports.Publisher; app.cluster.fanout.Fanout reaches every
        process). `snapshot` is the state just committed, if the caller has it (saves
        loading it again)."""
        self.push_local(code, what, snapshot)

    def push_local(self, code: str, what: str = "table", snapshot=None) -> None:
        """`publish`, to this process's sockets only."""
        conns = self.connections(code)
        if conns:
            self._push(code, conns, what, snapshot)

    def send_to(self, conn: Connection, what: str) -> None:
        """Render and send `what` to one connection (a socket that just opened)."""
        self._push(conn.code, [conn], what, None)

    def _push(self, code: str, conns: list[Connection], what: str, snapshot) -> None:
        if self._renderer is None:
            return
        try:
            version, rendered = self._renderer(code=code, conns=conns, what=what, snapshot=snapshot)
        except Exception:  # a broken render must not break the move that caused it
            log.exception("rendering %s for table %s failed", what, code)
            return
        for conn, html in rendered:
            if html and not conn.offer(html, version):
                log.info("dropping a stalled or dead socket at table %s", code)
                conn.shut()
                self.remove(conn)

"""Presence shared by the processes of the multi-process mode: app.live.presence's methods
backed by Redis (app.cluster.broker), with expiry, and this process's reads of it kept until a
change is announced or one of their times runs out."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from app.cluster.broker import HEARTBEAT

log = logging.getLogger(__name__)

SEEN_SLACK = 5.0  # seconds by which a seat's "seen until" may lag in Redis (see `seen`)


class SharedPresence:
    """Presence kept in Redis (app.cluster.broker) for app.live.presence: who has a socket open in
    any process, and when each seat was last seen. Every call falls back to what this
    process knows itself when Redis does not answer."""

    # One read of a table's presence serves its lookups (and travels with its changes)
    # until a process announces a presence change there (every write that can change a
    # mark or a timer is announced to every process: a socket's first opening or last
    # closing, a seat coming back or taken, a reap; see `_write`), or until the
    # first of its times still ahead runs out: a socket's expiry, which a heartbeat
    # elsewhere moves on unannounced, or a "last seen", which a request elsewhere may
    # have moved (so a timer worked out from a read fires after the read is gone).
    # A socket held in this process is not one of those times: this process's own
    # heartbeat moves it on, and its closing is announced. CACHE_SECONDS at most: an
    # announcement lost with the listener's connection (its resync drops every read).
    # It was a fixed 4 s, then 10 s: at 1 s of thought a table moves every few
    # seconds, and ~0.9 Redis reads a move cost 9% of a process's CPU, 10 s still 4%.
    CACHE_SECONDS = 30.0

    def __init__(self, broker):
        self.broker = broker
        # () -> [(code, seat id)] of this process's sockets, and (code, seat id, present)
        # -> None for presence listeners: the process's own presence's, given at `start`
        self._held: Callable[[], list[tuple[str, int]]] = list
        self._notify: Callable[[str, int, bool], None] = lambda code, seat_id, present: None
        # code -> (read at, {seat: socket until}, {seat: last seen}, serves until); the
        # times read and served are monotonic, the presence times wall-clock ones.
        self._cache: dict[str, tuple[float, dict[int, float], dict[int, float], float]] = {}
        self._dropped_all = -1.0  # reads made before this are not taken (resync)
        # code -> when this process last wrote there, or heard of a change without a
        # read: a read made before that may miss it, and is not primed.
        self._changed: dict[str, float] = {}
        self._seen_written: dict[str, dict[int, float]] = {}  # code -> seat -> until
        # Seats with a socket open here: their live field says they are present, so a
        # request's "seen until" waits here (code -> seat -> until) for the last socket
        # to close instead of costing a Redis write per request.
        self._open: dict[str, dict[int, float]] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        # Run by each heartbeat too (app.cluster.fanout.Fanout.refresh: this process's
        # tables registered again): one thread wakes every HEARTBEAT for both.
        self.on_beat: Callable[[], None] | None = None

    def start(self, held, notify, on_beat=None) -> None:
        """Beat for this process: `held()` lists its sockets (app.live.presence's
        `held`), `notify` tells its listeners of a reaped seat, `on_beat()` runs with
        each beat too (app.cluster.fanout.Fanout.refresh)."""
        self._held, self._notify, self.on_beat = held, notify, on_beat
        if self._thread is None:
            self._thread = threading.Thread(target=self._beat, name="skymo-presence", daemon=True)
            self._thread.start()

    # ----- writes (this process's sockets and requests) ------------------------------
    def opened(self, code: str, seat_id: int) -> None:
        with self._lock:
            self._open.setdefault(code, {}).setdefault(seat_id, 0.0)
        self._write(code, lambda: self.broker.socket_held([(code, seat_id)]))

    def closed(self, code: str, seat_id: int, lost: bool = False) -> None:
        """This process's last socket of the seat closed; `lost`: the connection died, so
        the requests made while it was open count for nothing."""
        with self._lock:
            seats = self._open.get(code, {})
            until = 0.0 if lost else seats.pop(seat_id, 0.0)
            seats.pop(seat_id, None)
            if not seats:
                self._open.pop(code, None)
        self._write(code, lambda: self.broker.socket_released(code, seat_id, seen_until=until))

    def seen(self, code: str, seat_id: int, until: float) -> None:
        with self._lock:
            held = self._open.get(code)
            if held is not None and seat_id in held:
                held[seat_id] = max(held[seat_id], until)  # written when the socket closes
                return
        # Every request of a seated player says "seen until a minute from now": Redis
        # keeps the latest time, so a time at most SEEN_SLACK later than the one this
        # process last wrote is not written again (nor the table's presence read again
        # for the push that follows): the seat was already present, and stays so.
        with self._lock:
            written = self._seen_written.get(code, {}).get(seat_id)
            kept = self._present_in_read(code, seat_id)
        if written is not None and until <= written + SEEN_SLACK:
            return
        # A seat present in this process's read stays present: a later "seen until"
        # changes no mark and no timer, so the read is kept with the new time instead of
        # dropped (a request from a player whose socket is in another process would
        # otherwise cost the table's next push a Redis read).
        write = lambda: self.broker.seen(code, seat_id, until)  # noqa: E731
        if self._write(code, write, drop=not kept):
            with self._lock:
                if len(self._seen_written) >= 20_000:
                    self._seen_written.clear()  # forgetting only costs a write
                self._seen_written.setdefault(code, {})[seat_id] = until
                if kept:
                    self._extend_read(code, seat_id, until)

    def _present_in_read(self, code: str, seat_id: int) -> bool:
        """Under the lock: this process's fresh read shows the seat present now."""
        hit = self._cache.get(code)
        if hit is None or time.monotonic() >= hit[3]:
            return False
        now = time.time()
        return hit[1].get(seat_id, 0.0) > now or hit[2].get(seat_id, 0.0) > now

    def _extend_read(self, code: str, seat_id: int, until: float) -> None:
        """Under the lock: the read, if still kept, with the seat seen until `until` (a
        new dict: a caller may be reading the old one)."""
        hit = self._cache.get(code)
        if hit is not None:
            seen = {**hit[2], seat_id: max(hit[2].get(seat_id, 0.0), until)}
            self._cache[code] = (hit[0], hit[1], seen, hit[3])  # a later time: as long

    def forget(self, code: str) -> None:
        with self._lock:
            self._seen_written.pop(code, None)
        self._write(code, lambda: self.broker.forget(code))

    def _write(self, code: str, fn, drop: bool = True) -> bool:
        """`drop`: the write may change a mark or a timer: this process's read of the
        table is dropped, and the others' too (told on the channel every process hears:
        changes of the table itself reach only the processes with a socket there)."""
        if drop:
            self._drop(code)
        if self.broker.down():
            return False  # the heartbeat writes this process's sockets again once it is back
        try:
            fn()
        except Exception as exc:
            self.broker.failed(exc, "presence write")
            return False
        if drop:
            self.broker.publish(code, "presence", None)
        return True

    # ----- reads ------------------------------------------------------------------------
    def table(self, code: str) -> tuple[dict[int, float], dict[int, float]] | None:
        """({seat: socket until}, {seat: last seen}) across processes, or None (Redis
        does not answer)."""
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(code)
        if hit is not None and now < hit[3]:
            return hit[1], hit[2]
        if self.broker.down():
            return None
        try:
            live, seen = self.broker.table_presence(code)
        except Exception as exc:
            self.broker.failed(exc, "presence read")
            return None
        lasts = self._lasts(code, now, time.time(), live, seen)
        with self._lock:
            if self._changed.get(code, -1.0) < now and self._dropped_all < now:
                self._cache[code] = (now, live, seen, lasts)  # else a change came meanwhile
            if len(self._cache) > 10_000:
                self._cache.clear()
        return live, seen

    def recent(self, code: str) -> list | None:
        """[when it was read (wall clock), {seat: socket until}, {seat: last seen}]: this
        process's read of the table's presence if it is still fresh, to send with a
        change, so the other processes render it without reading Redis again (the
        processes' clocks agree: presence times are wall-clock times anyway)."""
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(code)
        if hit is None or now >= hit[3]:
            return None
        return [time.time() - (now - hit[0]), hit[1], hit[2]]

    def prime(self, code: str, recent: list) -> None:
        """Take another process's read (`recent`) if it is still fresh."""
        read, live, seen = recent
        now = time.monotonic()
        age = time.time() - float(read)
        if age < 0:
            return  # read "later" than now: the clocks disagree
        read_at = now - age
        live = {int(seat): float(until) for seat, until in live.items()}
        seen = {int(seat): float(until) for seat, until in seen.items()}
        lasts = self._lasts(code, read_at, float(read), live, seen)
        if now >= lasts:
            return  # too old (CACHE_SECONDS at most), or one of its times ran out since
        with self._lock:
            if self._changed.get(code, -1.0) >= read_at or self._dropped_all >= read_at:
                return  # read before a change this process knows of: it may miss it
            hit = self._cache.get(code)
            if hit is None or hit[0] < read_at:
                self._cache[code] = (read_at, live, seen, lasts)

    def _lasts(self, code: str, read_at: float, read_wall: float, live: dict, seen: dict) -> float:
        """Until when (monotonic) a read made at `read_at` (`read_wall` on the wall
        clock) serves: the first of its times still ahead then (but the expiry of a
        socket held here), CACHE_SECONDS at most."""
        with self._lock:
            mine = self._open.get(code, ())
            expiries = [u for seat, u in live.items() if seat not in mine]
        ahead = [u - read_wall for u in (*expiries, *seen.values()) if u > read_wall]
        return read_at + min([self.CACHE_SECONDS, *ahead])

    def drop_all(self) -> None:
        """Announcements may have been lost (the listener reconnected): read again."""
        with self._lock:
            self._cache.clear()
            self._dropped_all = time.monotonic()

    def heard(self, code: str) -> None:
        """Another process changed the table without sending its read of the presence:
        a seat may have come or gone there, so the next lookup reads Redis again."""
        self._drop(code)

    def _drop(self, code: str) -> None:
        with self._lock:
            self._cache.pop(code, None)
            if len(self._changed) >= 20_000:
                self._changed.clear()  # forgetting may only prime a read a bit older
            self._changed[code] = time.monotonic()

    def present(self, code: str, now: float) -> set[int] | None:
        shared = self.table(code)
        if shared is None:
            return None
        live, seen = shared
        return {s for s, until in live.items() if until > now} | {
            s for s, until in seen.items() if until > now
        }

    def absent_from(self, code: str, seat_id: int, now: float) -> tuple[bool, float | None] | None:
        """(a socket of the seat is open somewhere, the latest of its last-seen time and
        its sockets' expiry), or None when Redis does not answer."""
        shared = self.table(code)
        if shared is None:
            return None
        live, seen = shared
        until = live.get(seat_id)
        if until is not None and until > now:
            return True, None
        times = [t for t in (until, seen.get(seat_id)) if t is not None]
        return False, (max(times) if times else None)

    # ----- heartbeat: refresh ours, reap the dead processes' ----------------------------
    def _beat(self) -> None:
        while True:
            time.sleep(HEARTBEAT)
            if self.on_beat is not None:
                self.on_beat()  # catches its own failures
            try:
                self.broker.socket_held(self._held())
                for code, seat_id, _ in self.broker.reap():
                    self._drop(code)
                    self.broker.publish(code, "presence", None)
                    live, _ = self.broker.table_presence(code)
                    if live.get(seat_id, 0) <= time.time():
                        self._notify(code, seat_id, False)
            except Exception as exc:
                log.warning("presence heartbeat failed (Redis): %s", exc)

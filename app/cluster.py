"""The multi-process mode (PostgreSQL + Redis), plugged into the change step's seams:

- transport: a committed change is pushed to this process's sockets and announced on
  Redis (app.broker) with the committed snapshot; other processes push it to theirs,
  rendering from that snapshot (from PostgreSQL when they resync after lost messages).
- presence: shared in Redis, with expiry (app.broker), behind app.presence's methods.
- scheduler: the `Due` table, claimed by every process (app.due)."""

from __future__ import annotations

import logging
import threading
import time

from flask import request
from flask.testing import EnvironBuilder

from .due import DueScheduler
from .hub import background

log = logging.getLogger(__name__)

SEEN_SLACK = 5.0  # seconds by which a seat's "seen until" may lag in Redis (see `seen`)


class SharedPresence:
    """Presence kept in Redis (app.broker) for app.presence: who has a socket open in
    any process, and when each seat was last seen. Every call falls back to what this
    process knows itself when Redis does not answer."""

    # One read of a table's presence serves its lookups (and travels with its changes)
    # until a process announces a change of the table (any presence change that can
    # change a mark or a timer is: a socket's first opening or last closing, a seat
    # coming back, a reap; this process's own writes drop its read), or until the
    # first of its times still ahead runs out: a socket's expiry, which a heartbeat
    # elsewhere moves on unannounced, or a "last seen", which a request elsewhere may
    # have moved (so a timer worked out from a read fires after the read is gone).
    # CACHE_SECONDS at most: an announcement lost with the listener's connection (its
    # resync drops every read). It was a fixed 4 s: at 1 s of thought a table moves
    # every few seconds, and ~0.9 Redis reads a move cost 9% of a process's CPU.
    CACHE_SECONDS = 10.0

    def __init__(self, broker, held, notify):
        self.broker = broker
        self._held = held  # () -> [(code, seat id)] of this process's sockets
        self._notify = notify  # (code, seat id, present) -> None: presence listeners
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

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._beat, name="skymo-presence", daemon=True)
            self._thread.start()

    # ----- writes (this process's sockets and requests) ------------------------------
    def opened(self, code: str, seat_id: int) -> None:
        with self._lock:
            self._open.setdefault(code, {}).setdefault(seat_id, 0.0)
        self._write(code, lambda: self.broker.socket_held([(code, seat_id)]))

    def closed(self, code: str, seat_id: int) -> None:
        with self._lock:
            seats = self._open.get(code, {})
            until = seats.pop(seat_id, 0.0)
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
        if drop:
            self._drop(code)
        if self.broker.down():
            return False  # the heartbeat writes this process's sockets again once it is back
        try:
            fn()
            return True
        except Exception as exc:
            self.broker.failed(exc, "presence write")
            return False

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
        lasts = self._lasts(now, time.time(), live, seen)
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
        if not 0 <= age < self.CACHE_SECONDS:
            return
        read_at = now - age
        live = {int(seat): float(until) for seat, until in live.items()}
        seen = {int(seat): float(until) for seat, until in seen.items()}
        lasts = self._lasts(read_at, float(read), live, seen)
        if now >= lasts:
            return
        with self._lock:
            if self._changed.get(code, -1.0) >= read_at or self._dropped_all >= read_at:
                return  # read before a change this process knows of: it may miss it
            hit = self._cache.get(code)
            if hit is None or hit[0] < read_at:
                self._cache[code] = (read_at, live, seen, lasts)

    def _lasts(self, read_at: float, read_wall: float, live: dict, seen: dict) -> float:
        """Until when (monotonic) a read made at `read_at` (`read_wall` on the wall
        clock) serves: the first of its times still ahead then, CACHE_SECONDS at most."""
        ahead = [u - read_wall for u in (*live.values(), *seen.values()) if u > read_wall]
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
        from .broker import HEARTBEAT

        while True:
            time.sleep(HEARTBEAT)
            try:
                self.broker.socket_held(self._held())
                for code, seat_id, _ in self.broker.reap():
                    with self._lock:
                        self._cache.pop(code, None)
                    live, _ = self.broker.table_presence(code)
                    if live.get(seat_id, 0) <= time.time():
                        self._notify(code, seat_id, False)
            except Exception as exc:
                log.warning("presence heartbeat failed (Redis): %s", exc)


class Fanout:
    """Pushes between processes: announce our committed changes on Redis, each with its
    snapshot; push the other processes' changes to our sockets (rendered from the
    snapshot they sent, or the table as stored), one push at a time per table,
    coalescing the changes that arrive meanwhile (the newest snapshot wins)."""

    def __init__(self, app, broker, hub, store, shared=None):
        self.app = app
        self.broker = broker
        self.hub = hub
        self.store = store  # app.tables.store.Store: snapshots from messages
        self.shared = shared  # SharedPresence: its fresh reads travel with the changes
        self._lock = threading.Lock()
        # code -> (what to push next ("table" wins), the newest snapshot sent or None)
        self._pending: dict[str, tuple[str, dict | None]] = {}
        self._running: set[str] = set()
        self._environs: dict[str, dict] = {}  # base URL -> the WSGI environ of a request

    def _as_request_from(self, base_url: str):
        """A request context as if from a page at `base_url`: links and form actions come
        out relative, as in the pushes of the process that made the change. Its environ
        is built once per base URL (building one took as long as the push's rendering
        of a small table)."""
        environ = self._environs.get(base_url)
        if environ is None:
            if len(self._environs) >= 100:
                self._environs.clear()
            environ = EnvironBuilder(self.app, base_url=base_url).get_environ()
            self._environs[base_url] = environ
        return self.app.request_context(dict(environ))

    def publish(self, code: str, what: str, snapshot) -> None:
        from .tables.store import snapshot_message
        from .web.render import answered_page

        if snapshot is None:  # a presence change: the others render what they have
            self.broker.publish(code, what, None)
            return
        state = snapshot_message(snapshot)
        recent = self.shared.recent(code) if self.shared is not None else None
        if recent is not None:
            state["pr"] = recent
        answered = answered_page() if what == "table" else None
        if answered is not None:
            state["ap"] = answered  # the mover's page: its socket here is not pushed to
        self.broker.publish(code, what, snapshot.version, state=state)

    def received(
        self, code: str, what: str, version: int | None, state: dict | None = None
    ) -> None:
        if self.shared is not None:  # even without sockets here: timers read presence
            if state is not None and state.get("pr"):
                self.shared.prime(code, state["pr"])
            else:
                self.shared.heard(code)
        conns = self.hub.connections(code)
        if not conns:
            return
        if version is not None and all(c.sent_version >= version for c in conns):
            return  # every socket here already has it
        self._queue(code, what, state)

    def resync(self) -> None:
        """After (re)connecting to Redis: changes may have been missed meanwhile, so every
        table with a socket here is pushed as it is stored now (sockets skip what they
        have), and every read of presence is dropped (a change announced meanwhile was
        lost)."""
        if self.shared is not None:
            self.shared.drop_all()
        for code in self.hub.codes():
            self._queue(code, "table", reload=True)

    def event(self, code: str, name: str, data) -> None:
        """Another process's event (a reaction), shown to our sockets at the table, as a
        request of their page would (it renders their partials)."""
        conns = self.hub.connections(code)
        if conns:
            with self._as_request_from(conns[0].base_url):
                self.hub.show_event(code, name, data)

    def _queue(self, code: str, what: str, state: dict | None = None, reload=False) -> None:
        """`reload`: push the table as stored (messages may have been lost)."""
        with self._lock:
            before, kept = self._pending.get(code, (None, None))
            if state is None or (kept is not None and _version(kept) > _version(state)):
                state = None if reload else kept
            what = "table" if "table" in (before, what) else what
            self._pending[code] = (what, state)
            if code in self._running:
                return
            self._running.add(code)
        background(lambda: self._drain(code), "skymo-fanout")

    def _drain(self, code: str) -> None:
        from .web.render import ANSWERED

        while True:
            with self._lock:
                pending = self._pending.pop(code, None)
                if pending is None:
                    self._running.discard(code)
                    return
            what, state = pending
            conns = self.hub.connections(code)
            if not conns:
                continue
            try:
                with self._as_request_from(conns[0].base_url):
                    snap = None
                    if state is not None:
                        snap = self.store.from_message(state)
                        if state.get("ap"):  # the mover's page had this as its answer
                            request.environ[ANSWERED] = tuple(state["ap"])
                    self.hub.push_local(code, what, snap)
            except Exception:
                log.exception("pushing table %s from another process failed", code)


def _version(state: dict) -> int:
    return state["t"]["version"]


def init_app(app) -> DueScheduler:
    """Turn on the multi-process mode for this process; returns its scheduler (the
    caller starts it)."""
    from .broker import Broker
    from .hub import hub
    from .presence import presence
    from .tables import automation, store

    broker = Broker(app.config["REDIS_URL"], app.config["REDIS_PREFIX"])

    def notify(code: str, seat_id: int, present: bool) -> None:
        with app.app_context():  # listeners push and schedule, from the heartbeat thread
            presence._notify(code, seat_id, present)

    shared = SharedPresence(broker, presence.held, notify)
    fanout = Fanout(app, broker, hub, store, shared)
    hub.set_fanout(fanout.publish)
    presence.share(shared)
    shared.start()
    hub.set_announcer(lambda code, name, data: broker.publish(code, name, None, data))
    broker.on_events(fanout.event)  # events (reactions) from other processes
    broker.listen(fanout.received, fanout.resync)
    app.extensions["skymo_broker"] = broker
    return DueScheduler(automation.next_automatic, automation.run_automatic, store.current)

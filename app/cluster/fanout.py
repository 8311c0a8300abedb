"""Pushes between the processes of the multi-process mode (PostgreSQL + Redis), which
app/wiring.py puts together with the other adapters:

- publisher: a committed change is pushed to this process's sockets and sent through
  Redis (app.cluster.broker) with the committed snapshot to the processes holding a socket at
  the table; they push it to theirs, rendering from that snapshot (from PostgreSQL when
  they resync after lost messages).
- presence: shared in Redis, with expiry (app.cluster.presence), behind app.live.presence's
  methods.
- scheduler: the `Due` table, claimed by every process (app.cluster.due)."""

from __future__ import annotations

import logging
import threading

from flask.testing import EnvironBuilder

from app.background import background
from app.cluster.broker import ALONE_TRUST
from app.storage.table_store import snapshot_message

log = logging.getLogger(__name__)


class Fanout:
    """Pushes between processes: announce our committed changes on Redis, each with its
    snapshot; push the other processes' changes to our sockets (rendered from the
    snapshot they sent, or the table as stored), one push at a time per table,
    coalescing the changes that arrive meanwhile (the newest snapshot wins)."""

    def __init__(self, app, broker, hub, store, shared=None, answered=None, remote=None):
        """`answered()`: the mover's page of the request being answered, if any, and
        `remote(answered)`: marks the request context of a push of another process's
        change (both from the web layer, given by app/wiring.py)."""
        self.app = app
        self.answered = answered or (lambda: None)
        self.remote = remote or (lambda answered: None)
        self.broker = broker
        self.hub = hub
        self.store = store  # app.storage.table_store.Store: snapshots from messages
        self.shared = shared  # SharedPresence: its fresh reads travel with the changes
        self._lock = threading.Lock()
        # code -> (what to push next ("table" wins), the newest snapshot sent or None)
        self._pending: dict[str, tuple[str, dict | None]] = {}
        self._running: set[str] = set()
        self._environs: dict[str, dict] = {}  # base URL -> the WSGI environ of a request
        self._holding_lock = threading.Lock()

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

    def publish(self, code: str, what: str = "table", snapshot=None) -> None:
        """The multi-process publisher (app.tables.ports.Publisher): this process's
        sockets, then the processes holding one at the table."""
        self.hub.push_local(code, what, snapshot)
        if snapshot is None:  # a presence change: the others render what they have
            self.broker.publish(code, what, None)
            return
        state = snapshot_message(snapshot)
        recent = self.shared.recent(code) if self.shared is not None else None
        if recent is not None:
            state["pr"] = recent
        answered = self.answered() if what == "table" else None
        if answered is not None:
            state["ap"] = answered  # the mover's page: its socket here is not pushed to
        self.broker.publish(code, what, snapshot.version, state=state)

    def broadcast(self, code: str, name: str, data) -> None:
        """An event at the table (a reaction), on every process's sockets."""
        self.hub.show_event(code, name, data)
        self.broker.publish(code, name, None, data)

    # ----- holding: which processes hear a table's changes ---------------------------
    def holding(self, code: str, held: bool) -> None:
        """This process's first socket at a table opened, or its last one closed: tell
        Redis (app.cluster.broker's holders), before the socket is sent the table. Done as the
        hub stands when the lock is ours, so a socket opening just as the last one
        closes leaves the process registered. If Redis does not answer, the heartbeat
        registers it and catches the table up."""
        with self._holding_lock:
            held = bool(self.hub.connections(code))
            try:
                if held:
                    self._joined(self.broker.hold([code]))
                else:
                    self.broker.unhold(code)
            except Exception as exc:
                self.broker.failed(exc, "holding a table")

    # Seconds after joining a table that its sockets here are brought up to date: a
    # change its holder made before hearing of us reached nobody (app.cluster.broker, `publish`).
    CATCH_UP_AFTER = (1.0, ALONE_TRUST + 1.0)

    def _joined(self, codes: list[str]) -> None:
        """This process just registered at `codes` (a first socket there, or a lost
        registration renewed): tell the other processes, and catch those tables up
        later."""
        for code in codes:
            self.broker.publish(code, "holding", None)
            for delay in self.CATCH_UP_AFTER:
                timer = threading.Timer(delay, self._catch_up, (code,))
                timer.daemon = True
                timer.start()

    def _catch_up(self, code: str) -> None:
        """Push the table as stored to this process's sockets there if it has moved past
        what one of them has (not otherwise: a push resets what a player began on the
        page, an unfolded form, a name half typed)."""
        conns = self.hub.connections(code)
        if not conns:
            return
        try:
            with self.app.app_context():
                row = self.store.row(code)
        except Exception:
            log.exception("reading table %s to catch up failed", code)
            return
        if row is not None and any(c.sent_version < row.version for c in conns):
            self._queue(code, "table", reload=True)

    def refresh(self) -> None:
        """Each heartbeat (SharedPresence.on_beat): register every table with a socket
        here again (for LIVE_TTL more); a table whose registration had been lost (Redis
        restarted or did not answer) may have missed changes: it is caught up now and
        later (`_joined`)."""
        for code in self._register_all():
            self._catch_up(code)

    def _register_all(self) -> list[str]:
        """Register every table with a socket here again; the ones whose registration
        had been lost are announced and caught up later (`_joined`), and returned."""
        try:
            lost = self.broker.hold(self.hub.codes())
        except Exception as exc:
            log.warning("registering this process's tables failed (Redis): %s", exc)
            return []
        self._joined(lost)
        return lost

    def received(
        self, code: str, what: str, version: int | None, state: dict | None = None
    ) -> None:
        if what == "presence":  # read it again when needed (see SharedPresence._write)
            if self.shared is not None:
                self.shared.heard(code)
            return
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
        table with a socket here is registered again (Redis may have restarted empty),
        then pushed as it is stored now (sockets skip what they have), and every read of
        presence is dropped (a change announced meanwhile was lost)."""
        if self.shared is not None:
            self.shared.drop_all()
        self._register_all()
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
                    # no answer is made here; the mover's page had this as its answer
                    self.remote(state.get("ap") if state is not None else None)
                    self.hub.push_local(code, what, snap)
            except Exception:
                log.exception("pushing table %s from another process failed", code)


def _version(state: dict) -> int:
    return state["t"]["version"]

"""Redis for the multi-process mode: fan-out of table changes and shared presence.

Fan-out: a process that commits a change pushes it to its own sockets and publishes
"table X is at version V", with the committed row and seats, to the processes that
hold a socket at X (the sorted set `at:<code>`: process -> until, refreshed by each
holder's heartbeat), each on its channel `to:<process>`; they render it for their
sockets there without reading it back from PostgreSQL
(app.storage.table_store.Store.from_message). A Lua script reads the holders and publishes in
one round trip, so a process that registers as a holder before it reads the table
either gets the change or reads it. With each table's sockets on one process (the
README's proxy), a move reaches no other process at all, and most cost no round trip
(see `publish`). Messages without a snapshot
(presence, the lobby, events) go to every process on the channel `push`. A lost
message costs only latency: after a reconnect each process registers and pushes all
of its tables again, as stored (a socket never receives an older version than it has).

Presence: app.cluster.presence_keys (its commands are the broker's too).

Redis down: nothing here raises into a move. Publishes are skipped (the listener's
resync repairs the sockets when Redis is back) and presence falls back to what this
process knows itself."""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterable

import orjson
import redis

from app.cluster.presence_keys import LIVE_TTL, SEEN_MAX, RedisPresence

log = logging.getLogger(__name__)

HEARTBEAT = 5.0  # seconds between heartbeats (and reaps)
RETRY_AFTER_FAILURE = 1.0  # seconds publishes are skipped after Redis failed
POOL_SIZE = 64  # Redis connections per process (the listener has its own)

HOLDER_STALE = 60.0  # seconds past its "until" a holder is dropped (clocks may differ)
# Seconds a publish that found no other holder of a table is trusted: the table's next
# changes within it are not sent at all, unless a process announces it joined (see
# `publish`; a process that joins pushes the table again once this has passed).
ALONE_TRUST = 20.0

# Publish ARGV[4] to each holder of the table (KEYS[1]) but ARGV[2] (the publisher), on
# its channel (ARGV[3] .. process), after dropping holders that stopped refreshing;
# returns how many there were.
_TO_HOLDERS = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local others = 0
for _, holder in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if holder ~= ARGV[2] then
    redis.call('PUBLISH', ARGV[3] .. holder, ARGV[4])
    others = others + 1
  end
end
return others
"""


class Broker(RedisPresence):
    def __init__(self, url: str, prefix: str = "skymo:"):
        self.url = url
        self.prefix = prefix
        self.process = f"{socket.gethostname()}.{os.getpid()}.{secrets.token_hex(3)}"
        self.channel = prefix + "push"  # to every process
        self.inbox = prefix + "to:" + self.process  # to this process only
        # How this process's messages begin (orjson keeps the keys' order): half of what
        # the listener hears with two processes, skipped without parsing its snapshot.
        self._own = orjson.dumps({"p": self.process})[:-1] + b","
        # Blocking: under load hundreds of greenlets use Redis at once; a full pool makes
        # them wait their turn (redis-py's default pool raised "Too many connections"
        # past 100, and each failure skipped Redis for a second: pushes were lost).
        pool = redis.BlockingConnectionPool.from_url(
            url,
            max_connections=POOL_SIZE,
            timeout=2,
            socket_timeout=2,
            socket_connect_timeout=1,
            health_check_interval=10,
        )
        self.redis = redis.Redis(connection_pool=pool)
        self._seen_max = self.redis.register_script(SEEN_MAX)  # app.cluster.presence_keys
        self._to_holders = self.redis.register_script(_TO_HOLDERS)
        self._skip_until = 0.0
        # code -> when (monotonic) a publish found no other process holding the table
        self._alone: dict[str, float] = {}
        self._joins: dict[str, float] = {}  # code -> when another process said it joined
        # (code for its holders only, else None; message): waiting for the publish in
        # progress
        self._outbox: list[tuple[str | None, bytes]] = []
        self._outbox_lock = threading.Lock()
        self._sending = False
        self.listening = threading.Event()  # set while the listener is subscribed
        self._on_event: Callable[[str, str, object], None] | None = None
        self._stop = threading.Event()

    def down(self) -> bool:
        """Redis failed a moment ago: callers skip it for RETRY_AFTER_FAILURE seconds
        rather than each waiting for a connection that will not come."""
        return time.monotonic() < self._skip_until

    def failed(self, exc: Exception, what: str) -> None:
        self._skip_until = time.monotonic() + RETRY_AFTER_FAILURE
        log.warning("Redis %s failed: %s", what, exc)

    # ----- fan-out -------------------------------------------------------------------
    def publish(
        self, code: str, what: str, version: int | None, data=None, state: dict | None = None
    ) -> bool:
        """Tell the other processes that `code` changed ("table", "lobby"; `state`: the
        committed snapshot as app.storage.table_store.snapshot_message makes it, sent to the
        table's holders only), that its presence changed ("presence"), or that it had an
        event (another `what`, with its JSON `data`: see `on_events`); False if Redis is
        unreachable (pushes resume when it is back: the listeners resync).

        A change of a table that a publish found no other process holding, less than
        ALONE_TRUST ago, is not sent (with each table's sockets on one process, most
        moves cost no round trip to Redis): a process that registers as a holder
        announces it ("holding", to every process), which ends that trust, and pushes
        the table again after 1 s and after ALONE_TRUST, for a change made before the
        announcement arrived."""
        if self.down():
            return False
        if state is not None and self._trusted_alone(code):
            return True
        message = {"p": self.process, "c": code, "w": what, "v": version}  # "p" first: see _own
        if data is not None:
            message["x"] = data
        if state is not None:
            message["s"] = state
        message = orjson.dumps(message, option=orjson.OPT_NON_STR_KEYS)
        with self._outbox_lock:
            self._outbox.append((code if state is not None else None, message))
            if self._sending:
                return True  # the caller sending now takes it along, in its next round trip
            self._sending = True
        return self._send_outbox()

    def _send_outbox(self, in_request: bool = True) -> bool:
        """Publish what waits in the outbox, a batch per round trip, until none is left.
        Under load many changes are announced while one publish waits for its answer:
        they go together then (a pipeline), not one round trip each. A request sends one
        batch (its own message in it) and leaves the rest to a background sender."""
        sent = True
        try:
            while True:
                with self._outbox_lock:
                    batch, self._outbox = self._outbox, []
                    if not batch:
                        self._sending = False
                        return sent
                sent = self._send(batch) and sent
                if in_request and self._outbox:
                    threading.Thread(
                        target=self._send_outbox, args=(False,), name="skymo-publish", daemon=True
                    ).start()
                    return sent
        except BaseException:
            with self._outbox_lock:
                self._sending = False
            raise

    def _send(self, batch: list[tuple[str | None, bytes]]) -> bool:
        if self.down():
            return False  # skipped: the listeners resync when Redis is back
        try:
            sent_at = time.monotonic()
            if len(batch) == 1:
                answers = [self._send_one(*batch[0], self.redis)]
            else:
                pipe = self.redis.pipeline(transaction=False)
                for code, message in batch:
                    self._send_one(code, message, pipe)
                answers = pipe.execute()
            for (code, _), others in zip(batch, answers, strict=True):
                if code is not None:
                    self._found(code, others, sent_at)
            return True
        except redis.RedisError as exc:
            self.failed(exc, "publish")
            return False

    def _send_one(self, code: str | None, message: bytes, client):
        if code is None:
            return client.publish(self.channel, message)
        stale = time.time() - HOLDER_STALE
        args = [stale, self.process, self.prefix + "to:", message]
        return self._to_holders(keys=[self._holders(code)], args=args, client=client)

    def _found(self, code: str, others: int, sent_at: float) -> None:
        """A publish sent at `sent_at` found `others` other holders of the table (an
        announcement of a process joining, heard since, wins)."""
        if others or self._joins.get(code, -1.0) >= sent_at:
            self._alone.pop(code, None)
            return
        if len(self._alone) >= 20_000:
            self._alone.clear()  # forgetting only costs a publish
        self._alone[code] = sent_at

    def _trusted_alone(self, code: str) -> bool:
        """No other process held the table a moment ago, and none has said it joined
        since (only trusted while the listener, which hears that, is connected)."""
        found = self._alone.get(code)
        if found is None or not self.listening.is_set():
            return False
        return time.monotonic() - found < ALONE_TRUST

    # ----- holders: the processes with a socket at a table -----------------------------
    def _holders(self, code: str) -> str:
        return f"{self.prefix}at:{code}"

    def hold(self, codes: Iterable[str], now: float | None = None) -> list[str]:
        """This process holds a socket at each table of `codes` (for LIVE_TTL more):
        send it their changes. Returns the codes it was not registered at (first
        socket, or the registration was lost: Redis restarted), whose changes it may
        have missed. Raises if Redis does not answer."""
        codes = list(codes)
        if not codes:
            return []
        until = (time.time() if now is None else now) + LIVE_TTL
        pipe = self.redis.pipeline(transaction=False)
        for code in codes:
            pipe.zadd(self._holders(code), {self.process: until})
            pipe.expire(self._holders(code), int(LIVE_TTL + HOLDER_STALE))
        added = pipe.execute()[::2]
        return [code for code, new in zip(codes, added, strict=True) if new]

    def unhold(self, code: str) -> None:
        """This process's last socket at the table closed."""
        self.redis.zrem(self._holders(code), self.process)

    def listen(
        self,
        handle: Callable[[str, str, int | None, dict | None], None],
        resync: Callable[[], None],
    ) -> threading.Thread:
        """Run `handle(code, what, version, state)` for every other process's change
        (`state`: its committed snapshot, or None when it sent none), in a
        thread (a greenlet under gevent) that reconnects by itself; `resync()` after each
        (re)connection, for the messages missed meanwhile."""
        thread = threading.Thread(
            target=self._listen, args=(handle, resync), name="skymo-redis", daemon=True
        )
        thread.start()
        return thread

    def on_events(self, handler: Callable[[str, str, object], None]) -> None:
        """handler(code, what, data) for the other processes' events (not "table" or
        "lobby": those go to `listen`'s handler)."""
        self._on_event = handler

    def stop(self) -> None:
        self._stop.set()

    def _listen(self, handle, resync) -> None:
        delay = 0.1
        while not self._stop.is_set():
            client = redis.Redis.from_url(
                self.url,
                socket_timeout=HEARTBEAT * 2,
                socket_connect_timeout=1,
                health_check_interval=HEARTBEAT,
                client_name=f"{self.prefix}listener.{self.process}",
            )
            pubsub = client.pubsub(ignore_subscribe_messages=True)
            try:
                pubsub.subscribe(self.channel, self.inbox)
                self.listening.set()
                delay = 0.1
                self._skip_until = 0.0
                self._alone.clear()  # a process may have joined while we did not hear
                _safely(resync, "resync after connecting to Redis")
                while not self._stop.is_set():
                    message = pubsub.get_message(timeout=HEARTBEAT)
                    if message is not None and message["type"] == "message":
                        self._dispatch(message["data"], handle)
            except (redis.RedisError, OSError) as exc:
                if self.listening.is_set():
                    log.warning("Redis listener lost its connection: %s", exc)
            finally:
                self.listening.clear()
                _safely(pubsub.close, "closing the Redis listener")
                _safely(client.close, "closing the Redis listener")
            self._stop.wait(delay)
            delay = min(delay * 2, 2.0)

    def _dispatch(self, data: bytes, handle) -> None:
        if data.startswith(self._own):
            return  # ours (already pushed to our own sockets): not even parsed
        try:
            message = orjson.loads(data)
        except orjson.JSONDecodeError:
            log.warning("ignoring a malformed Redis message")
            return
        if message.get("p") == self.process:
            return  # ours: already pushed to our own sockets
        code, what, version = message.get("c"), message.get("w"), message.get("v")
        if not isinstance(code, str):
            return
        if what == "holding":  # another process joined the table: send it our changes
            now = time.monotonic()
            if len(self._joins) >= 20_000:  # only the last minute's can still matter
                self._joins = {c: t for c, t in self._joins.items() if now - t < 60}
            self._joins[code] = now
            self._alone.pop(code, None)
            return
        if what in ("table", "lobby", "presence"):
            state = message.get("s")
            _safely(lambda: handle(code, what, version, state), f"pushing table {code}")
        elif isinstance(what, str) and self._on_event is not None:
            event = self._on_event
            _safely(lambda: event(code, what, message.get("x")), f"{what} at table {code}")


def _safely(fn: Callable[[], object], what: str) -> None:
    try:
        fn()
    except Exception:
        log.exception("%s failed", what)

"""Presence in Redis, the commands app.cluster.broker.Broker offers app.cluster.presence.

A seat with an open socket in some process has a field in the table's hash
`live:<code>` ("<seat>|<process>" -> until), refreshed by that process's heartbeat; a
process that dies stops refreshing, and another one reaps the expired entries (the
sorted set `live` orders them by expiry) and reports those seats away from that moment.
"Last seen" times (a request, a closed socket) are in the hash `seen:<code>`."""

from __future__ import annotations

import time
from collections.abc import Iterable

LIVE_TTL = 15.0  # seconds a socket's presence lasts without a heartbeat
SEEN_KEEP = 2 * 60 * 60  # seconds a table's "last seen" hash is kept after its last write

# seen[seat] = max(seen[seat], until); the hash expires SEEN_KEEP after its last write.
SEEN_MAX = """
local current = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if tonumber(ARGV[2]) > current then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""


class RedisPresence:
    """Mixed into app.cluster.broker.Broker: needs its `redis` client, key `prefix`, `process`
    name and the `_seen_max` script (SEEN_MAX, registered there)."""

    def _live(self, code: str) -> str:
        return f"{self.prefix}live:{code}"

    def _seen(self, code: str) -> str:
        return f"{self.prefix}seen:{code}"

    def socket_held(self, pairs: Iterable[tuple[str, int]], now: float | None = None) -> None:
        """This process holds a socket of each (code, seat): present for LIVE_TTL more.
        One HSET and one EXPIRE per table and one ZADD for all: the heartbeat refreshes
        every socket of the process, and Redis costs the process per command."""
        until = (time.time() if now is None else now) + LIVE_TTL
        fields: dict[str, dict[str, float]] = {}
        for code, seat in pairs:
            fields.setdefault(code, {})[f"{seat}|{self.process}"] = until
        if not fields:
            return
        pipe = self.redis.pipeline(transaction=False)
        expiry: dict[str, float] = {}
        for code, seats in fields.items():
            pipe.hset(self._live(code), mapping=seats)
            pipe.expire(self._live(code), int(LIVE_TTL * 4))
            expiry.update((f"{code}|{field}", until) for field in seats)
        pipe.zadd(self.prefix + "live", expiry)
        pipe.execute()

    def socket_released(
        self, code: str, seat: int, now: float | None = None, seen_until: float = 0.0
    ) -> None:
        """This process's last socket of the seat closed: away from now on, or from
        `seen_until` (the presence of the seat's requests while its socket was open)."""
        now = time.time() if now is None else now
        field = f"{seat}|{self.process}"
        pipe = self.redis.pipeline(transaction=False)
        pipe.hdel(self._live(code), field)
        pipe.zrem(self.prefix + "live", f"{code}|{field}")
        pipe.execute()
        self.seen(code, seat, max(now, seen_until))

    def seen(self, code: str, seat: int, until: float) -> None:
        """The seat counts as present until `until` (a request: a minute ahead)."""
        self._seen_max(keys=[self._seen(code)], args=[seat, until, SEEN_KEEP])

    def table_presence(self, code: str) -> tuple[dict[int, float], dict[int, float]]:
        """({seat: until} of sockets held somewhere, {seat: last seen}) in one round trip.
        A socket's `until` may be past: its process died and nobody reaped it yet."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.hgetall(self._live(code))
        pipe.hgetall(self._seen(code))
        live_raw, seen_raw = pipe.execute()
        live: dict[int, float] = {}
        for field, until in live_raw.items():
            seat = int(field.split(b"|", 1)[0])
            live[seat] = max(live.get(seat, 0.0), float(until))
        seen = {int(seat): float(until) for seat, until in seen_raw.items()}
        return live, seen

    def reap(self, now: float | None = None) -> list[tuple[str, int, float]]:
        """Sockets whose process stopped refreshing them: (code, seat, until) of each,
        claimed by this process only (the one whose ZREM removes it)."""
        now = time.time() if now is None else now
        expired = self.redis.zrangebyscore(self.prefix + "live", "-inf", now, withscores=True)
        reaped = []
        for member, until in expired:
            if not self.redis.zrem(self.prefix + "live", member):
                continue  # another process got it
            code, seat, process = member.decode().split("|", 2)
            self.redis.hdel(self._live(code), f"{seat}|{process}")
            self.seen(code, int(seat), until)
            reaped.append((code, int(seat), until))
        return reaped

    def forget(self, code: str) -> None:
        self.redis.delete(self._live(code), self._seen(code))

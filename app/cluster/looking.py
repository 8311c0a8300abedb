"""Which seats have a visible page, across the processes of the multi-process mode (for
turn alerts, app.features.alerts: none is sent while a page of the player is visible).

One Redis hash per table: a field "<seat id>|<process>" holds until when that process
has a visible page of the seat. A process writes its field when its first visible page
of a seat appears, removes it when its last one goes, and writes its fields again on
each presence heartbeat: a dead process's fields run out within a few beats."""

from __future__ import annotations

import logging
import time

from app.cluster.broker import HEARTBEAT

log = logging.getLogger(__name__)

LASTS = 3 * HEARTBEAT  # seconds a field holds without its process's beat


class SharedLooking:
    def __init__(self, broker):
        self.broker = broker

    def _key(self, code: str) -> str:
        return f"{self.broker.prefix}looking:{code}"

    def _field(self, seat_id: int) -> str:
        return f"{seat_id}|{self.broker.process}"

    def mark(self, code: str, seat_id: int, looking: bool) -> None:
        """This process's visible pages of the seat: some (True) or none (False)."""
        try:
            if looking:
                self.write([(code, seat_id)])
            else:
                self.broker.redis.hdel(self._key(code), self._field(seat_id))
        except Exception as exc:
            log.warning("looking: Redis did not answer: %s", exc)

    def write(self, pairs) -> None:
        """(code, seat id) of every seat with a visible page here, held on."""
        until = time.time() + LASTS
        pipe = self.broker.redis.pipeline(transaction=False)
        for code, seat_id in pairs:
            pipe.hset(self._key(code), self._field(seat_id), until)
            pipe.expire(self._key(code), int(LASTS) + 1)
        pipe.execute()

    def beat(self, pairs) -> None:
        try:
            self.write(pairs)
        except Exception as exc:
            log.warning("looking heartbeat failed (Redis): %s", exc)

    def looking(self, code: str, seat_id: int) -> bool:
        """A page of the seat is visible in some process (unknown, Redis down: no)."""
        try:
            fields = self.broker.redis.hgetall(self._key(code))
        except Exception as exc:
            log.warning("looking: Redis did not answer: %s", exc)
            return False
        now = time.time()
        mine = f"{seat_id}|".encode()
        return any(f.startswith(mine) and float(v) > now for f, v in fields.items())

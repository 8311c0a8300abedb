"""The one change Skymo makes to a library: simple-websocket's writes to its socket.

simple-websocket 1.1 writes each frame with one `socket.send` and ignores how much was
taken: under load (a reader slower than its pushes, a push larger than the socket's free
buffer) the rest of a frame was lost and the stream corrupted (its issue #45, fixed after
1.1.0, which is the newest release here). Its reader also writes pings, pongs and the
close from another greenlet than the pushes. Here the socket it writes to takes whole
frames, one writer at a time, so that a ping never lands inside a push.

pyproject.toml pins simple-websocket below 1.2, and tests/web/test_socket_writes.py
fails when the upstream code this relies on changes (README, "Library patches")."""

from __future__ import annotations

import threading


class WholeWrites:
    """A socket whose `send` writes all it is given (`sendall`), under a lock."""

    def __init__(self, sock):
        self.wrapped = sock
        self.lock = threading.Lock()

    def send(self, data: bytes) -> int:
        with self.lock:
            self.wrapped.sendall(data)
        return len(data)

    def __getattr__(self, name: str):
        return getattr(self.wrapped, name)


def whole_writes(ws) -> None:
    """Have `ws` (a simple_websocket.Server, after its handshake) write whole frames."""
    if not isinstance(ws.sock, WholeWrites):
        ws.sock = WholeWrites(ws.sock)

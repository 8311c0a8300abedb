"""The one library change kept (app.web.socket_writes): simple-websocket's frames are
written whole. These fail when simple-websocket's code changes, so that the change is
looked at again (and dropped once a release writes whole frames itself)."""

from __future__ import annotations

import hashlib
import inspect
import threading

import simple_websocket.ws
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, Request, TextMessage

from app.web.socket_writes import WholeWrites, whole_writes

# simple-websocket 1.1.0's Base and Server classes (every write is `self.sock.send(...)`,
# unchecked; the handshake reads the WSGI environ's HTTP_ headers; the reader sets,
# waits on and clears `event_class`'s event).
UPSTREAM_DIGEST = "d38afa30797165df18582d885d98fb55f9ad44e9fe18a1033a2e300bf940dbff"


def test_simple_websockets_writes_are_the_ones_this_change_was_made_for():
    source = inspect.getsource(simple_websocket.ws.Base) + inspect.getsource(
        simple_websocket.ws.Server
    )
    assert hashlib.sha256(source.encode()).hexdigest() == UPSTREAM_DIGEST, (
        "simple-websocket changed: check whether it now writes whole frames (then drop "
        "app/web/socket_writes.py), and what app/web/ws.py relies on still holds"
    )


class Trickle:
    """A socket that takes at most 3 bytes per send, as a full buffer does."""

    def __init__(self):
        self.out = bytearray()

    def send(self, data: bytes) -> int:
        self.out += data[:3]
        return min(3, len(data))

    def sendall(self, data: bytes) -> None:
        while data:
            data = data[self.send(data) :]


def _frame(html: str) -> bytes:
    server = WSConnection(ConnectionType.SERVER)
    server.receive_data(
        WSConnection(ConnectionType.CLIENT).send(Request(host="localhost", target="/ws"))
    )
    next(server.events())
    server.send(AcceptConnection())
    return server.send(TextMessage(data=html))


def test_a_frame_is_written_whole_however_little_the_socket_takes_at_once():
    frame = _frame("<p>" + "card " * 200 + "</p>")
    cut = Trickle()
    cut.send(frame)  # how simple-websocket 1.1 writes: the rest is lost
    assert bytes(cut.out) != frame
    whole = WholeWrites(Trickle())
    assert whole.send(frame) == len(frame)
    assert bytes(whole.wrapped.out) == frame


def test_two_writers_never_interleave_their_frames():
    """A push from the socket's sender and a pong from its reader, at once: each frame
    reaches the socket whole, one after the other."""
    started = threading.Barrier(2)

    class Slow(Trickle):
        def send(self, data: bytes) -> int:
            threading.Event().wait(0.0005)  # let the other writer run meanwhile
            return super().send(data)

    sock = WholeWrites(Slow())
    push, pong = _frame("<p>" + "push " * 100 + "</p>"), _frame("pong " * 20)

    def write(frame):
        started.wait()
        sock.send(frame)

    threads = [threading.Thread(target=write, args=(f,)) for f in (push, pong)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bytes(sock.wrapped.out) in (push + pong, pong + push)


def test_a_socket_is_wrapped_once_and_keeps_its_other_methods():
    class Ws:
        sock = Trickle()

    ws = Ws()
    whole_writes(ws)
    whole_writes(ws)
    assert isinstance(ws.sock, WholeWrites) and not isinstance(ws.sock.wrapped, WholeWrites)
    assert ws.sock.sendall == ws.sock.wrapped.sendall

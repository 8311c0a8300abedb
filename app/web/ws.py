"""The push socket: /t/<code>/ws. Moves never travel over it; it only receives.

On connect the player gets the current table at once, so a reconnect after a dropped
connection always shows the present state."""

from __future__ import annotations

import struct
import threading
import zlib
from urllib.parse import urlsplit

import simple_websocket.ws
from flask import current_app, request, session
from flask_babel import get_locale
from wsproto.connection import ConnectionState
from wsproto.events import TextMessage
from wsproto.extensions import PerMessageDeflate
from wsproto.frame_protocol import Opcode, RsvBits
from wsproto.utilities import RemoteProtocolError

from app import tables
from app.features import accounts
from app.live.hub import Background, Connection, Hub, gevent_active
from app.storage.models import db
from app.web import services, sock
from app.web.auth import signed_in
from app.web.security import csrf_token

SEND_TIMEOUT = 10  # seconds


def origin_ok() -> bool:
    origin = request.headers.get("Origin")
    if origin is None:
        return True  # not a browser: the session cookie still decides who you are
    return urlsplit(origin).netloc == request.host


def shows_presence(publisher):
    """A presence listener that shows the others when someone goes away or comes back
    (app.live.presence), through `publisher`. A socket opening for a seat already marked
    here (its page's request came just before) needs no push, outside a game: in one,
    the countdown for a player without a socket may start or stop."""

    def show(code: str, seat_id: int, present: bool, here_changed: bool) -> None:
        if here_changed or tables.store.in_play(code):
            publisher.publish(code, "lobby")

    return show


class FreshDeflate(PerMessageDeflate):
    """permessage-deflate (which browsers ask for) without keeping the compressor
    between messages: kept, its zlib state is about 256 KB per socket for the socket's
    life (measured: 480 sockets, 143 -> 259 MiB). A push is a whole partial, so starting
    each one afresh compresses nearly as well.

    At zlib level 3 rather than wsproto's 6: every push is compressed once per socket
    (~8 KB of HTML: ~60 us for 1.6 KB instead of ~100 us for 1.4 KB).

    "Afresh" does not need a new compressor per message: making one (and freeing its
    256 KB) cost more than compressing the push (~120 us against ~45 us for 8 KB).
    Every socket of the process shares one per window size, and each whole message ends
    with a full flush, after which the compressor refers to nothing before it: the
    message reads alone, as `server_no_context_takeover` promises the browser.

    Whole messages are compressed by ISA-L's deflate (`isal`) when installed: for an
    8 KB push 147 K instructions against zlib's 385 K (callgrind), 1,768 bytes against
    1,727; every push is compressed once per socket, so this was the largest single
    cost of a move's push under load."""

    LEVEL = 3

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("server_no_context_takeover", True)
        super().__init__(*args, **kwargs)

    def frame_outbound(self, proto, opcode, rsv, data, fin):
        if fin and self._compressor is None and opcode in (Opcode.TEXT, Opcode.BINARY):
            # A whole message in one frame (how every push is sent).
            bits = self.client_max_window_bits if proto.client else self.server_max_window_bits
            return RsvBits(True, rsv[1], rsv[2]), deflated(bytes(data), int(bits), self.LEVEL)
        if self._compressor is None and opcode in (Opcode.TEXT, Opcode.BINARY):
            # The first frame of a fragmented message: its own compressor, as wsproto's.
            bits = self.client_max_window_bits if proto.client else self.server_max_window_bits
            self._compressor = zlib.compressobj(self.LEVEL, zlib.DEFLATED, -int(bits))
        return super().frame_outbound(proto, opcode, rsv, data, fin)


try:
    from isal import isal_zlib
except ImportError:  # zlib's deflate then: the same messages, at ~2.6x the CPU
    isal_zlib = None

ISAL_LEVEL = 1  # ISA-L's levels are its own: 1 compresses a push about as well as zlib's 3

_compressors: dict[tuple[int, int], object] = {}  # (window bits, level) -> compressor
_compressing = threading.Lock()


def _compressor(bits: int, level: int):
    """A raw deflate stream for `bits` (ISA-L takes windows of 2^9 to 2^15 bytes; a
    browser may ask for 2^8, which zlib raises to 2^9 itself)."""
    if isal_zlib is not None and 9 <= bits <= 15:
        return isal_zlib.compressobj(ISAL_LEVEL, isal_zlib.DEFLATED, -bits)
    return zlib.compressobj(level, zlib.DEFLATED, -bits)


def deflated(data: bytes, bits: int, level: int) -> bytes:
    """`data` as one permessage-deflate message that reads without any earlier one:
    compressed by the shared compressor, then fully flushed (the empty block's
    00 00 ff ff that ends it is left off, as the extension says)."""
    with _compressing:  # a compressor is not shared by two threads at once
        found = _compressors.get((bits, level))
        if found is None:
            found = _compressors[bits, level] = _compressor(bits, level)
        try:
            out = found.compress(data) + found.flush(zlib.Z_FULL_FLUSH)
        except BaseException:
            # Half a message may be left inside: it must never start someone else's.
            del _compressors[bits, level]
            raise
    return out[:-4]


def framed(connection, html: str) -> bytes:
    """`html` as the one text frame wsproto's `connection.send(TextMessage(html))`
    makes (the same bytes: tests/web/test_socket.py), built here for a whole push when
    the socket is open, no message is half sent and its only extension is ours: every
    push is framed once per socket, and wsproto's general path (copies, enums, the
    extensions' loop) cost about a third of compressing it. Anything else: wsproto's."""
    if connection.state is not ConnectionState.OPEN:
        return connection.send(TextMessage(data=html))  # wsproto says why not
    proto = connection.connection._proto
    extensions = proto.extensions
    if (
        proto.client
        or proto._outbound_opcode is not None
        or len(extensions) > 1
        or (extensions and (type(extensions[0]) is not FreshDeflate or extensions[0]._compressor))
    ):
        return connection.send(TextMessage(data=html))
    payload = html.encode()
    head = 0x81  # FIN, text
    if extensions:
        bits = int(extensions[0].server_max_window_bits)
        payload = deflated(payload, bits, FreshDeflate.LEVEL)
        head |= 0x40  # RSV1: compressed
    size = len(payload)
    if size <= 125:
        return bytes((head, size)) + payload
    if size <= 0xFFFF:
        return struct.pack("!BBH", head, 126, size) + payload
    return struct.pack("!BBQ", head, 127, size) + payload


class Frames:
    """The socket as simple-websocket's reader writes to it (its pings, pongs and close
    frame): through the connection, so that no frame of theirs starts inside a push's
    frame that is still being written. Everything else goes to the socket itself."""

    def __init__(self, sock, conn: Connection):
        self.wrapped = sock
        self.conn = conn

    def send(self, data: bytes) -> int:
        self.conn.write_frame(data, self.wrapped.sendall)
        return len(data)

    def __getattr__(self, name: str):
        return getattr(self.wrapped, name)


class Wakeup:
    """Stands in for simple-websocket's event, which its reader sets when a message
    arrives or the socket closes: here that wakes the socket's sender instead (the
    handler, blocked on its queue of pushes), which then looks at the socket."""

    def __init__(self, conn: Connection):
        self.conn = conn

    def set(self) -> None:
        self.conn.wake()

    def clear(self) -> None:
        pass

    def wait(self, timeout=None) -> bool:
        return True


def writer(ws):
    """(send, write_now) for a socket: `send` writes a push (or the bytes a direct write
    left) and may wait; `write_now` writes what the socket takes at once, without ever
    waiting, and returns the rest (None: all written). Direct writes need gevent's
    non-blocking socket; elsewhere (the threaded dev server) pushes go through the queue."""

    sock = ws.sock

    def send(item) -> None:
        sock.sendall(item if isinstance(item, bytes) else framed(ws.ws, item))

    raw = getattr(sock, "_sock", None) if gevent_active() else None
    if raw is None:
        return send, None

    def write_now(html: str) -> bytes | None:
        data = framed(ws.ws, html)
        try:
            sent = raw.send(data)
        except (BlockingIOError, InterruptedError):
            sent = 0
        return data[sent:] or None

    return send, write_now


def serve(ws, conn: Connection, what: str, unchanged=lambda: False, to: Hub | None = None) -> None:
    """Send `what` (unless `unchanged()` says the page already shows it), then every
    push of hub `to`, until the socket closes. One greenlet per socket beside
    simple-websocket's reader: the handler is the sender."""
    to = to or services.hub()
    db.close()  # don't hold a database connection for the socket's lifetime
    # A client that stops reading (a suspended phone) only fills its own queue; a send
    # that cannot finish within SEND_TIMEOUT fails and drops that socket (the page
    # reconnects and gets the whole table). Reads are unaffected: with ping_interval
    # set, simple-websocket selects before reading.
    if current_app.config["SOCK_SERVER_OPTIONS"].get("ping_interval"):
        ws.sock.settimeout(SEND_TIMEOUT)
    ws.event = Wakeup(conn)
    to.add(conn)
    conn.wake()  # in case the socket closed before its event was ours
    try:
        # Asked once registered, so a change made meanwhile is either pushed or seen here.
        if not unchanged():
            to.send_to(conn, what)
        # Clients send nothing we act on: what they send is dropped.
        conn.pump(alive=lambda: ws.connected, woken=ws.input_buffer.clear)
    finally:
        to.remove(conn)
        conn.release()


def page_is_current(code: str) -> bool:
    """The page that opened the socket shows the table's present version (`?v=`): the
    table is not sent again, so nothing the player began there (an unfolded form, a
    name half typed) is reset by a socket that connects late. A reconnecting page asks
    with the version it was loaded at, so it gets the table whenever anything changed."""
    seen = request.args.get("v", type=int)
    if seen is None:
        return False
    from app.storage.models import db

    with db.connection_context():
        row = tables.store.row(code)
    return row is not None and row.version == seen


def page_id(given: str) -> str:
    """The id of the page that opened the socket, as the page made it (else none)."""
    plain = given.replace("-", "").replace("_", "")
    return given if 0 < len(given) <= 32 and plain.isascii() and plain.isalnum() else ""


def init_app(app) -> None:
    # The socket reader as a bare greenlet (app.live.hub.background).
    app.config["SOCK_SERVER_OPTIONS"].setdefault("thread_class", Background)
    # simple-websocket offers no setting for its extension: its handshake takes ours.
    simple_websocket.ws.PerMessageDeflate = FreshDeflate
    wired = app.extensions[services.SERVICES]
    wired.presence.on_shown(shows_presence(wired.publisher))

    @app.errorhandler(RemoteProtocolError)
    def _bad_handshake(exc):
        # A malformed WebSocket handshake is the client's error, not a 500.
        return "Bad WebSocket handshake.", 400

    @sock.route("/t/<code>/ws")
    def table_socket(ws, code):
        code = code.upper()
        if not origin_ok():
            ws.close(reason=1008, message="Cross-origin socket refused")
            return
        try:
            table = tables.get_table(code)
        except tables.TableError:
            ws.close(reason=1008, message="No such table")
            return
        user = signed_in()
        seat = accounts.find_seat(table, session.get("seats", {}).get(code), user)
        conn = Connection(
            code=code,
            seat_id=seat.id if seat else None,
            csrf=csrf_token(),
            send=ws.send,  # replaced below
            base_url=request.host_url,
            name=user.username if user else "",
            locale=str(get_locale()),
            page=page_id(request.args.get("p", "")),
            queued=True,  # sent from its own queue: a slow reader delays nobody
            close=ws.close,
        )
        conn.send, conn.write_now = writer(ws)
        ws.sock = Frames(ws.sock, conn)
        serve(ws, conn, "table", unchanged=lambda: page_is_current(code))

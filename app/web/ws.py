"""The push socket: /t/<code>/ws. Moves never travel over it; it only receives.

On connect the player gets the current table at once, so a reconnect after a dropped
connection always shows the present state."""

from __future__ import annotations

import contextlib
from urllib.parse import urlsplit

from flask import current_app, g, request, session
from flask_babel import get_locale
from flask_babel import gettext as _
from simple_websocket import ConnectionClosed
from wsproto.frame_protocol import CloseReason
from wsproto.utilities import RemoteProtocolError

from app import tables
from app.background import Background
from app.features import accounts
from app.live.hub import Connection, Hub
from app.storage.models import db
from app.web import services, sock
from app.web.auth import signed_in
from app.web.chat import muted_here
from app.web.security import csrf_token
from app.web.socket_writes import whole_writes

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


class Wakeup:
    """simple-websocket's `event_class` (a documented option of its Server): its reader
    sets the event when a message arrives or the socket closes. Here that also wakes the
    socket's sender (the handler, blocked on its queue of pushes: `Connection.pump`),
    which then reads what arrived and looks whether the socket is still open. Made
    inside the socket's request (the Server is made there), it is found on `g`."""

    def __init__(self):
        self.flag = False
        self.woken = None  # the connection's wake, once it exists
        g.socket_wakeup = self

    def set(self) -> None:
        self.flag = True
        if self.woken is not None:
            self.woken()

    def clear(self) -> None:
        self.flag = False

    def wait(self, timeout=None) -> bool:
        # Only ever asked with timeout 0 (`drain`): never blocks.
        return self.flag


VISIBILITY = ("visible", "hidden")  # what a page sends: document.visibilityState


def drain(ws, heard=None) -> None:
    """Read what the client sent, without waiting: its page's visibility goes to
    `heard(visible)` (alerts wait while a page is visible); anything else is dropped."""
    with contextlib.suppress(ConnectionClosed):
        while (said := ws.receive(timeout=0)) is not None:
            if heard is not None and said in VISIBILITY:
                heard(said == "visible")


def uncompressed() -> None:
    """The socket's handshake offers no compression: simple-websocket (1.1) offers no
    setting for its permessage-deflate, whose kept compressor is ~256 KB per socket for
    the socket's life (measured: 480 sockets, 143 -> 259 MiB), and compressing each push
    once per socket was the largest single cost of a move's push. Pushes travel as they
    are (a whole table is ~8 KB of HTML); pages and answers are still compressed."""
    request.environ.pop("HTTP_SEC_WEBSOCKET_EXTENSIONS", None)


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
    whole_writes(ws)
    wakeup = g.get("socket_wakeup")  # ours, unless the socket was made elsewhere (tests)
    if wakeup is not None:
        wakeup.woken = conn.wake
    to.add(conn)
    conn.wake()  # in case the socket closed before its event was ours
    try:
        # Asked once registered, so a change made meanwhile is either pushed or seen here.
        if not unchanged():
            to.send_to(conn, what)
        # Clients send only their page's visibility; anything else is dropped.
        heartbeat = current_app.config.get("SOCKET_HEARTBEAT")
        heard = lambda visible: to.shown(conn, visible)  # noqa: E731
        conn.pump(alive=lambda: ws.connected, woken=lambda: drain(ws, heard), heartbeat=heartbeat)
    finally:
        if wakeup is not None:
            wakeup.woken = None
        # A page that goes says so (a close code); a dead connection (unanswered pings,
        # a broken pipe) closes with none.
        conn.lost = conn.lost or getattr(ws, "close_reason", None) == CloseReason.NO_STATUS_RCVD
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
    app.config["SOCK_SERVER_OPTIONS"].setdefault("event_class", Wakeup)

    @app.before_request
    def _socket_handshake():
        if request.endpoint == "table_socket":  # before flask-sock's Server shakes hands
            uncompressed()

    wired = app.extensions[services.SERVICES]
    wired.presence.on_shown(shows_presence(wired.publisher))

    @app.errorhandler(RemoteProtocolError)
    def _bad_handshake(exc):
        # A malformed WebSocket handshake is the client's error, not a 500.
        return _("Bad WebSocket handshake."), 400

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
            send=ws.send,
            base_url=request.host_url,
            name=user.username if user else "",
            locale=str(get_locale()),
            page=page_id(request.args.get("p", "")),
            muted=muted_here(code),  # chat senders this viewer muted
            queued=True,  # sent from its own queue: a slow reader delays nobody
            close=ws.close,
        )
        serve(ws, conn, "table", unchanged=lambda: page_is_current(code))

"""Each table on one process, with nothing in front of gunicorn: connection steering.

gunicorn's processes share one listening socket, and the kernel hands each connection
to any of them. A table's players then sit on different processes, and every change is
rendered and pushed by each of them (app.cluster.broker): two processes served barely more
moves than one (README, "Figures"). A proxy that sends each table to one process (the
README's nginx `hash`) fixes that, but needs a proxy.

Here the processes do it themselves. Before a worker reads a new connection's first
request, it peeks at its request line (MSG_PEEK: nothing is consumed). A table's URL
(`/t/<code>...`, `/score/<code>...`) names its owner, chosen among the live workers by
rendezvous hashing (a worker that dies moves only its own tables). A connection for
another worker's table is handed to it whole: its file descriptor goes over a Unix
datagram socket (SCM_RIGHTS), and the owner serves it from its first byte, as if it had
accepted it. So is a kept-alive connection between two requests, when the next one is
for another worker's table (a browser's pooled connection, or a proxy's).

Nothing here is needed for correctness: a hand-over that fails (the owner just died,
its socket is gone) serves the connection where it is. No library does this for
gunicorn (a proxy is the usual answer, and stays the answer across machines), so it is
written here, on two hooks of gunicorn's gevent worker (`handle`, `handle_request`).

This module is loaded by gunicorn.conf.py in gunicorn's master, so it imports nothing
of the app package (the app's locks must be created after gevent patches the worker)."""

from __future__ import annotations

import array
import contextlib
import hashlib
import json
import os
import re
import socket
import stat
import tempfile
import time

import gevent
from gunicorn import util
from gunicorn.workers.ggevent import GeventWorker  # imports gevent too (patching is later)

# The table a request line is for: the table's pages, moves and socket, the score
# sheet's. Its code as the URL has it (the app checks it; an unknown code just has an
# owner like any other).
TABLE_PATH = re.compile(rb"^[A-Z]+ /(?:t|score)/([A-Za-z0-9_-]{1,64})(?:[/?# ]|$)")
PEEK_BYTES = 2048  # a request line longer than this is served where it landed
LIST_EVERY = 1.0  # seconds a listing of the live workers is trusted
# An owner's queue holds a few hand-overs (net.unix.max_dgram_qlen, often 10): when it
# is full, a hand-over tries again for this many seconds, then is served where it is.
HAND_OVER_WAIT = 2.0


def table_of(head: bytes) -> str | None:
    """The table code a request starting with `head` is for, if any (None also while
    its request line is not complete)."""
    line, sep, _ = head.partition(b"\r\n")
    if not sep and len(head) < PEEK_BYTES:
        return None
    found = TABLE_PATH.match(line)
    return found.group(1).decode() if found else None


def owner(code: str, workers: list[str]) -> str | None:
    """The worker that serves `code`: rendezvous (highest random weight) hashing, so
    that a worker joining or leaving moves only the tables it takes or had."""
    if not workers:
        return None
    return max(
        workers, key=lambda w: hashlib.blake2b(f"{w}/{code}".encode(), digest_size=8).digest()
    )


def steer_dir(master_pid: int) -> str:
    """Where a gunicorn master's workers keep their hand-over sockets (one per pid)."""
    base = os.environ.get("SKYMO_STEER_DIR") or tempfile.gettempdir()
    return os.path.join(base, f"skymo-steer-{master_pid}")


class Steering:
    """One worker's side: its own hand-over socket, the live workers' names, and the
    hand-over itself. Made in the worker, once gevent has patched `socket` and `time`
    (this module is imported before, in gunicorn's master)."""

    def __init__(self, directory: str, name: str):
        self.directory = directory
        self.name = name
        self.path = os.path.join(directory, name)
        self.inbox = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        for attempt in range(3):  # another worker may remove the directory meanwhile
            os.makedirs(directory, mode=0o700, exist_ok=True)
            _check_private(directory)
            if os.path.exists(self.path):
                os.unlink(self.path)  # a dead worker's of the same pid
            try:
                self.inbox.bind(self.path)
                break
            except FileNotFoundError:
                if attempt == 2:
                    raise
        self.outbox = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._workers: list[str] = []
        self._listed = -LIST_EVERY

    def workers(self) -> list[str]:
        now = time.monotonic()
        if now - self._listed >= LIST_EVERY:
            self._listed = now
            try:
                found = sorted(n for n in os.listdir(self.directory) if n.isdigit())
            except OSError:
                found = []
            self._workers = found if self.name in found else sorted([*found, self.name])
        return self._workers

    def elsewhere(self, code: str | None) -> str | None:
        """The other worker that owns `code`, or None when it is this one's (or no one's)."""
        if code is None:
            return None
        found = owner(code, self.workers())
        return found if found != self.name else None

    def hand_over(self, client: socket.socket, addr, to: str) -> bool:
        """Send the connection to worker `to`; False if it cannot take it (it died, or
        is stuck: it is left out until the next listing)."""
        note = json.dumps(list(addr) if isinstance(addr, tuple) else addr).encode()
        # Not socket.send_fds: it drops the address (CPython 3.11).
        rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [client.fileno()]))]
        path = os.path.join(self.directory, to)
        deadline = time.monotonic() + HAND_OVER_WAIT
        while True:
            try:
                # Never blocking: a full queue is not seen by waiting for the socket to be
                # writable (gevent's sendmsg then reports 0 bytes sent, as if it had).
                self.outbox.sendmsg([note], rights, socket.MSG_DONTWAIT, path)
                return True
            except BlockingIOError:  # the owner's queue is full: it is busy
                if time.monotonic() > deadline:
                    break
                time.sleep(0.002)  # gevent's, in a worker
            except ConnectionRefusedError:  # nobody reads there: a killed worker's
                with contextlib.suppress(OSError):
                    os.unlink(path)
                break
            except OSError:
                break
        self._workers = [w for w in self._workers if w != to]
        return False

    def receive(self) -> tuple[socket.socket, object]:
        """The next connection handed to this worker, with its peer's address."""
        note, fds, _flags, _addr = socket.recv_fds(self.inbox, 1024, 1)
        if len(fds) != 1:
            for fd in fds:
                os.close(fd)
            raise OSError("a hand-over without exactly one connection")
        addr = json.loads(note)
        return socket.socket(fileno=fds[0]), tuple(addr) if isinstance(addr, list) else addr

    def leave(self) -> None:
        """Take no more hand-overs: the others stop listing this worker (within
        LIST_EVERY), and a hand-over sent to it from now on fails and is served there."""
        with contextlib.suppress(OSError):
            os.unlink(self.path)

    def close(self) -> None:
        self.inbox.close()
        self.outbox.close()
        self.leave()
        with contextlib.suppress(OSError):  # the directory goes with the last worker
            os.rmdir(self.directory)


def _check_private(directory: str) -> None:
    """Connections are handed to whatever listens in `directory`: it must be ours alone
    (a folder of that name made by another user, in a shared /tmp, is refused)."""
    found = os.lstat(directory)
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.geteuid() or found.st_mode & 0o077:
        raise PermissionError(f"{directory} is not a folder of this user's alone")


class SteeringWorker(GeventWorker):
    """gunicorn's gevent worker, steering each table's connections to one worker."""

    steering: Steering | None = None

    def run(self):
        if self.cfg.is_ssl:  # the request line is encrypted: nothing to peek at
            return super().run()
        try:
            self.steering = Steering(steer_dir(self.ppid), str(self.pid))
        except OSError as exc:
            self.log.warning("steering off, tables served where they land: %s", exc)
            return super().run()
        receiver = gevent.spawn(self._receive)
        leaving = gevent.spawn(self._leave_when_stopping, receiver)
        try:
            super().run()
        finally:
            leaving.kill()
            receiver.kill()
            self.steering.close()

    def _leave_when_stopping(self, receiver) -> None:
        """Once the worker is told to stop, it leaves the others' listings, and takes
        what they handed it meanwhile before it stops reading (else the connections
        waiting in its queue would be closed unanswered)."""
        while self.alive:
            gevent.sleep(0.5)
        self.steering.leave()
        gevent.sleep(LIST_EVERY + 0.5)
        receiver.kill()

    def _receive(self) -> None:
        listener = self.sockets[0]
        while True:
            try:
                client, addr = self.steering.receive()
            except OSError as exc:
                self.log.warning("connection hand-over failed: %s", exc)
                gevent.sleep(0.1)
                continue
            gevent.spawn(super().handle, listener, client, addr)  # never steered again

    def handle(self, listener, client, addr):
        client.setblocking(1)
        try:
            steered = self.steering is not None and self._steer(client, addr)
        except StopIteration:  # nothing came
            steered = True
        if steered:
            util.close(client)  # our copy: the connection lives on in its owner
            return
        super().handle(listener, client, addr)

    def handle_request(self, listener_name, req, sock, addr):
        """After each answer on a kept-alive connection, the next request may be for
        another worker's table (a browser's or a proxy's pooled connection): it is
        handed over before gunicorn reads it."""
        super().handle_request(listener_name, req, sock, addr)  # StopIteration: closing
        if self.steering is None:
            return
        while req.body.read(8192):  # what the app left unread (the parser would skip it)
            pass
        req.unreader.buf.seek(0, os.SEEK_END)
        if req.unreader.buf.tell():
            return  # the next request is already read in part (pipelined): served here
        if self._steer(sock, addr):
            raise StopIteration()  # gunicorn closes our copy

    def _steer(self, client, addr) -> bool:
        """Hand the connection over if its next request is for another worker's table."""
        head = self._peek(client)
        if head is None:  # kept alive but idle past keepalive: closed, as gunicorn does
            raise StopIteration()
        to = self.steering.elsewhere(table_of(head)) if head else None
        return to is not None and self.steering.hand_over(client, addr, to)

    def _peek(self, client) -> bytes | None:
        """The start of the connection's next request, read without consuming it (b""
        once the client closed it; None if nothing came within keepalive seconds)."""
        with gevent.Timeout(self.cfg.keepalive or 5, False):
            while True:
                head = client.recv(PEEK_BYTES, socket.MSG_PEEK)
                if not head or b"\r\n" in head or len(head) >= PEEK_BYTES:
                    return head
                gevent.sleep(0.005)  # the request line is still arriving
        return None

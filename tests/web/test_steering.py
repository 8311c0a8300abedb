"""Connection steering (app.web.steering): which table a request is for, which worker owns
it, and a connection handed from one worker's socket to another's, whole."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from app.web.steering import PEEK_BYTES, Steering, owner, table_of
from tests.conftest import ROOT


def test_the_table_is_read_off_the_request_line():
    assert table_of(b"GET /t/AB12cd HTTP/1.1\r\nHost: x\r\n") == "AB12cd"
    assert table_of(b"POST /t/AB12cd/move HTTP/1.1\r\n") == "AB12cd"
    assert table_of(b"GET /t/AB12cd/ws?v=3 HTTP/1.1\r\n") == "AB12cd"
    assert table_of(b"GET /score/Zz9/ws HTTP/1.1\r\n") == "Zz9"
    assert table_of(b"GET /t/AB12cd?mode=take HTTP/1.1\r\n") == "AB12cd"
    # Not a table's: the lobby, assets, other pages; a path that only starts alike.
    for line in (
        b"GET / HTTP/1.1\r\n",
        b"GET /static/app.css HTTP/1.1\r\n",
        b"GET /tables HTTP/1.1\r\n",
        b"GET /t/ HTTP/1.1\r\n",
        b"GET /u/ann HTTP/1.1\r\n",
        b"\x16\x03\x01\x02\x00\x01\r\n",
    ):
        assert table_of(line) is None, line


def test_an_unfinished_request_line_names_no_table_until_it_is_complete():
    assert table_of(b"GET /t/AB12") is None  # more may come: the caller waits
    assert table_of(b"GET /t/AB12cd HTTP/1.1\r\n") == "AB12cd"
    assert table_of(b"GET /t/" + b"x" * PEEK_BYTES) is None  # too long: served where it is


def test_each_table_has_one_owner_and_a_worker_leaving_moves_only_its_own():
    workers = ["101", "102", "103"]
    codes = [f"T{i:04d}" for i in range(600)]
    owners = {code: owner(code, workers) for code in codes}
    counts = {w: sum(1 for o in owners.values() if o == w) for w in workers}
    assert all(150 < n < 250 for n in counts.values()), counts  # spread evenly
    assert owners == {code: owner(code, list(reversed(workers))) for code in codes}
    left = {code: owner(code, ["101", "103"]) for code in codes}
    moved = [c for c in codes if left[c] != owners[c]]
    assert moved and all(owners[c] == "102" for c in moved)
    assert owner("T0001", []) is None


def test_a_connection_is_handed_to_the_owner_and_served_there_from_its_first_byte(tmp_path):
    here, there = Steering(str(tmp_path), "101"), Steering(str(tmp_path), "102")
    listener = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(listener.getsockname())
    accepted, addr = listener.accept()
    try:
        client.sendall(b"GET /t/ABC HTTP/1.1\r\n\r\n")
        assert sorted(here.workers()) == ["101", "102"]
        head = accepted.recv(100, socket.MSG_PEEK)  # what the worker peeks: not consumed
        assert table_of(head) == "ABC"
        assert here.hand_over(accepted, addr, "102")
        accepted.close()  # the first worker's copy; the connection lives on
        got, got_addr = there.receive()
        assert got_addr == addr
        assert got.recv(100) == b"GET /t/ABC HTTP/1.1\r\n\r\n"
        got.sendall(b"HTTP/1.1 204 No Content\r\n\r\n")
        assert client.recv(100) == b"HTTP/1.1 204 No Content\r\n\r\n"
        got.close()
    finally:
        client.close()
        listener.close()
        there.close()
        here.close()


def test_a_hand_over_to_a_dead_worker_fails_and_it_is_no_longer_an_owner(tmp_path):
    here, gone = Steering(str(tmp_path), "101"), Steering(str(tmp_path), "102")
    assert here.workers() == ["101", "102"]
    gone.inbox.close()  # killed: its socket file is left behind, nobody reads it
    a, b = socket.socketpair()
    try:
        assert not here.hand_over(a, "", "102")
        assert here.workers() == ["101"]
        assert here.elsewhere("ANY") is None
        assert not (tmp_path / "102").exists()  # its socket file is removed
        here._listed = -10.0  # the next listing does not bring it back
        assert here.workers() == ["101"]
    finally:
        a.close()
        b.close()
        here.close()


def test_a_worker_that_leaves_is_no_longer_handed_connections(tmp_path):
    here, leaving = Steering(str(tmp_path), "101"), Steering(str(tmp_path), "102")
    a, b = socket.socketpair()
    try:
        leaving.leave()
        assert not here.hand_over(a, "", "102")  # served where it is
        here._listed = -10.0
        assert here.workers() == ["101"]
    finally:
        a.close()
        b.close()
        leaving.close()
        here.close()


def test_the_last_worker_to_stop_removes_the_directory(tmp_path):
    directory = tmp_path / "steer"
    one, two = Steering(str(directory), "101"), Steering(str(directory), "102")
    one.close()
    assert sorted(p.name for p in directory.iterdir()) == ["102"]
    two.close()
    assert not directory.exists()


def test_a_hand_over_waits_for_nothing_but_the_owner_reading(tmp_path):
    """Many connections handed at once all arrive (a datagram each, none merged)."""
    here, there = Steering(str(tmp_path), "101"), Steering(str(tmp_path), "102")
    pairs = [socket.socketpair() for _ in range(20)]
    got = []
    reader = threading.Thread(target=lambda: got.extend(there.receive() for _ in pairs))
    reader.start()
    try:
        for a, _ in pairs:
            assert here.hand_over(a, ["127.0.0.1", 5], "102")
        reader.join(5)
        assert len(got) == 20 and all(addr == ("127.0.0.1", 5) for _, addr in got)
        for (_, b), (conn, _) in zip(pairs, got, strict=True):
            conn.sendall(b"x")
            assert b.recv(1) == b"x"  # each is the connection it was
    finally:
        for a, b in pairs:
            a.close()
            b.close()
        for conn, _ in got:
            conn.close()
        here.close()
        there.close()


GEVENT_FULL_QUEUE = """
from gevent import monkey

monkey.patch_all()
import socket, sys, gevent
from app.web.steering import Steering

here, there = Steering(sys.argv[1], "101"), Steering(sys.argv[1], "102")
pairs = [socket.socketpair() for _ in range(int(sys.argv[2]))]
handed = [gevent.spawn(here.hand_over, a, "", "102") for a, _ in pairs]
gevent.sleep(0.3)  # nobody reads yet: the queue fills, the others wait
there.inbox.settimeout(10)
got = []
try:
    for _ in pairs:
        got.append(there.receive()[0])
finally:
    print("received", len(got), "handed", [g.value for g in handed], file=sys.stderr)
assert all(g.get() for g in handed), [g.value for g in handed]
for i, (_, b) in enumerate(pairs):
    b.sendall(bytes([i]))
mine = sorted(conn.recv(1)[0] for conn in got)  # they came in any order
assert mine == list(range(len(pairs))), mine  # each is one of the connections, once
print("all", len(got))
"""


def test_under_gevent_a_full_queue_delays_hand_overs_and_loses_none(tmp_path):
    """More hand-overs than the owner's queue holds (net.unix.max_dgram_qlen) while it
    reads nothing: each waits and then arrives (gevent's sendmsg once said "sent" of one
    that was not, and that connection was closed unanswered)."""
    queue = int(Path("/proc/sys/net/unix/max_dgram_qlen").read_text())
    done = subprocess.run(
        [sys.executable, "-c", GEVENT_FULL_QUEUE, str(tmp_path), str(queue + 10)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["all", str(queue + 10)]


def test_a_folder_others_can_reach_is_refused(tmp_path):
    """Connections go to whatever listens in the folder: one that is not this user's
    alone (made by someone else in a shared /tmp) is not used."""
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    with pytest.raises(PermissionError):
        Steering(str(shared), "101")
    assert not (shared / "101").exists()
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    with pytest.raises(PermissionError):
        Steering(str(link), "101")

"""Broken socket frames, broken HTTP and huge inputs against a live server: never a 5xx,
never a hang; a refused request says why."""

from __future__ import annotations

import random
import re
import socket
import struct
from concurrent.futures import ThreadPoolExecutor

import pytest
import websocket

from tests.conftest import LiveServer
from tests.web.fuzz_helpers import BIG_NUMBER, build
from tests.web.live_helpers import (
    HttpBrowser,
    check_invariants,
    read_table,
)


# ----- broken socket frames and broken HTTP ---------------------------------------------
def raw(server, data: bytes, then: bytes = b"", timeout=3.0) -> bytes:
    """Send `data`; with `then`, wait for the answer's head first, then send `then`
    (frames sent with the handshake would sit in the HTTP server's read buffer)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as s:
        s.sendall(data)
        chunks = []
        if then:
            while b"\r\n\r\n" not in b"".join(chunks):
                chunk = s.recv(65536)
                if not chunk:
                    return b"".join(chunks)
                chunks.append(chunk)
            s.sendall(then)
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        except (TimeoutError, ConnectionResetError):
            pass
        return b"".join(chunks)


def status_of(response: bytes) -> int | None:
    found = re.match(rb"HTTP/1\.[01] (\d{3})", response)
    return int(found.group(1)) if found else None


def frame(opcode, payload=b"", fin=True, mask=True, rsv=0, length=None) -> bytes:
    head = bytes([(0x80 if fin else 0) | (rsv << 4) | opcode])
    n = len(payload) if length is None else length
    bit = 0x80 if mask else 0
    if n < 126:
        head += bytes([bit | n])
    elif n < 65536:
        head += bytes([bit | 126]) + struct.pack("!H", n)
    else:
        head += bytes([bit | 127]) + struct.pack("!Q", n)
    if mask:
        key = b"\x01\x02\x03\x04"
        head += key
        payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
    return head + payload


BROKEN_FRAMES = [
    b"\x00\x01\x02garbage that is not a frame at all\xff\xff",
    frame(0x1, b"hello", mask=False),  # clients must mask
    frame(0x3, b"reserved opcode"),
    frame(0x1, b"rsv bits", rsv=7),
    frame(0x1, b"\xff\xfe invalid utf-8"),
    frame(0x1, b"x" * 10_000),  # over the 4096-byte limit
    frame(0x2, b"\x00" * 5000),
    frame(0x1, b"short", length=2**62),  # claims an enormous payload
    frame(0x0, b"continuation without a start"),
    frame(0x1, b"fragment", fin=False) + frame(0x1, b"new text inside a fragment"),
    frame(0x9, b"p" * 200),  # a ping longer than 125 bytes
    frame(0x8, b"\x03\xe7"),  # close with an invalid code
    frame(0x8, b"\x03"),  # close with a one-byte payload
    frame(0x1, b'{"type": "draw", "version": 1}'),  # moves never travel on the socket
]


def handshake(server, path, cookie="", extra="") -> bytes:
    return (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        f"Sec-WebSocket-Version: 13\r\n{cookie}{extra}\r\n"
    ).encode()


BROKEN_HTTP = [
    b"GARBAGE\r\n\r\n",
    b"GET /\x00/t HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /t/%ff%fe HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /t/\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET / HTTP/9.9\r\nHost: x\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * 70_000 + b"\r\n\r\n",
    b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    b"POST /tables HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\nname=x",
    b"POST /tables HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\nname=x",
    b"POST /tables HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\nname",
    b"POST /tables HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nname=short",
    b"POST /tables HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"zz\r\nname\r\n0\r\n\r\n",
    b"POST /tables HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nname=\r\n",
    b"POST /tables HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data\r\n"
    b"Content-Length: 10\r\n\r\n0123456789",
    b"POST /tables HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"
    b"Content-Length: 30\r\n\r\n--b\r\nbroken part no end\r\n",
    b"POST /tables HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded;"
    b" charset=klingon\r\nContent-Length: 6\r\n\r\nname=x",
    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",  # a TLS hello
]


def test_broken_socket_frames_and_broken_http(tmp_path):
    server = LiveServer(tmp_path, SKYMO_NEXT_ROUND_SECONDS="600").start()
    db = tmp_path / "skymo.db"
    rng = random.Random(9)
    ann, bob = HttpBrowser(server.url), HttpBrowser(server.url)
    try:
        codes = [build(db, slot, ann, bob, rng) for slot in ("lobby", "play")]
        before = {c: read_table(db, c) for c in codes}
        cookie = "Cookie: " + "; ".join(f"{c.name}={c.value}" for c in ann.jar) + "\r\n"
        cases = []  # (what is sent, the statuses it may get)
        for code in codes:
            for i, bad in enumerate(BROKEN_FRAMES):
                # A proper close after the broken frame, so a server that ignored it
                # answers and hangs up.
                who = cookie if i % 2 else ""
                data = handshake(server, f"/t/{code}/ws", who)
                cases.append(((data, bad + frame(0x8, b"\x03\xe8")), {101}))
            # Broken handshakes: a foreign origin, a wrong version, no table, no key.
            for path, extra in (
                (f"/t/{code}/ws", "Origin: http://evil.example\r\n"),
                (f"/t/{code}/ws", "Sec-WebSocket-Version: 7\r\n"),
                ("/t/NOSUCH/ws", ""),
                (f"/t/{code}/ws?" + "a" * 5000, ""),
            ):
                cases.append((handshake(server, path, cookie, extra), None))
            request = f"GET /t/{code}/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n\r\n"
            cases.append((request.encode(), None))
        cases += [(bad, None) for bad in BROKEN_HTTP]
        for _ in range(15):  # random bytes, and random bytes after a good request line
            noise = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400)))
            cases.append((noise, None))
            line = b"POST /t/" + codes[1].encode() + b"/move HTTP/1.1\r\n"
            cases.append((line + noise, None))

        def send(case):
            data, allowed = case
            data, then = data if isinstance(data, tuple) else (data, b"")
            # A handshake ends with a proper close, so the server hangs up at once: a
            # long timeout there costs nothing and a busy machine needs it. The rest may
            # leave the server waiting for more bytes: their answer is what came first.
            answer = raw(server, data, then, timeout=5.0 if allowed else 0.8)
            status = status_of(answer)
            if allowed is not None:
                assert status in allowed, answer[:300]
            # 505: the server's own answer to an HTTP version it does not speak.
            assert (status or 0) < 500 or status == 505, (data[:120], answer[:300])

        with ThreadPoolExecutor(32) as pool:
            list(pool.map(send, cases))

        # The server still serves, sockets still work, and nothing changed.
        status, text = ann.get("/")
        assert status == 200
        cookie_value = "; ".join(f"{c.name}={c.value}" for c in ann.jar)
        ws = websocket.create_connection(
            server.url.replace("http", "ws") + f"/t/{codes[1]}/ws", cookie=cookie_value, timeout=5
        )
        try:
            assert 'id="table"' in ws.recv()
            ws.send("x" * 100)  # text from a client is ignored
            ws.send_binary(b"\x00\x01")
            ws.ping(b"hi")
        finally:
            ws.close()
        for code in codes:
            assert read_table(db, code) == before[code]
            check_invariants(read_table(db, code)["state"])
        assert server.proc.poll() is None
    finally:
        server.stop()
    log = (tmp_path / "server.log").read_text(errors="replace")
    assert not re.search(r'" 5(?!05)\d\d ', log), "a 5xx in the server log"
    assert "Traceback" not in log, log[-4000:]


@pytest.fixture(autouse=True)
def _quiet_websocket_logs():
    websocket.enableTrace(False)
    yield


def test_huge_inputs_are_refused_cleanly(browser):
    """A megabyte-long body gets a 413 page that says so; numbers beyond SQLite's
    integers are 'not found', never a 500."""
    ann = browser()
    code = ann.create("Ann")
    response = ann.post(f"/t/{code}/join", {"name": "x" * 1_000_000})
    assert response.status_code == 413
    assert "That request is too large" in response.data.decode()
    response = ann.post(f"/t/{code}/seats/{BIG_NUMBER}/remove")
    assert response.status_code == 404
    assert ann.get(f"/t/{code}/games/{BIG_NUMBER}/record.json").status_code == 404
    assert ann.get(f"/t/{code}/games/{BIG_NUMBER}").status_code == 404

"""Fuzzing a live server: thousands of random and malformed requests (any route, unknown
ones too, any field, wrong types, huge values, unicode, wrong versions, other people's
seats, unknown tables, missing or wrong CSRF tokens, odd methods and bodies), broken
socket frames and broken HTTP, at tables in every phase. Never a 5xx; a rejected request
changes nothing; the engine's invariants hold throughout."""

from __future__ import annotations

import json
import os
import random
import re
import socket
import sqlite3
import struct
import threading
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

import pytest
import websocket
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from live_helpers import (
    HttpBrowser,
    check_invariants,
    is_network_error,
    move_form,
    read_table,
    read_tables,
    seat_ids,
)

from app.engine import GAME_OVER, PLAY, ROUND_OVER, Game
from tests.conftest import LiveServer

SLOTS = ("lobby", "setup", "play", "drawn", "round_over", "finished")
PASSWORD = "correct horse battery"
HUGE = "<1 MB>"  # stands for a megabyte-long string, made only when sent
BIG_NUMBER = str(10**100)


# ----- tables in every phase -------------------------------------------------------------
def phase_of(row: dict) -> str:
    if row["status"] in ("lobby", "closed"):
        return row["status"]
    game = Game.from_dict(row["state"])
    if row["status"] == "finished" or game.phase == GAME_OVER:
        return "finished"
    if game.phase == PLAY and game.round.drawn is not None:
        return "drawn"
    return game.phase


def family(phase: str) -> str:
    """Moves take a table from phase to phase within a game: a table is replaced only
    when it leaves its family (a lobby starts, a game ends, a rematch starts)."""
    return phase if phase in ("lobby", "finished", "closed") else "game"


def build(db, slot: str, ann: HttpBrowser, bob: HttpBrowser, rng: random.Random) -> str:
    """A table of Ann (host) and Bob, brought to `slot` by legal moves."""
    code = ann.create("Ann")
    bob.join(code, "Bob")
    if slot == "lobby":
        return code
    flips = "3" if slot == "setup" else "1"
    rules = {"rows": "2", "cols": "2", "initial_flips": flips, "grace_seconds": "120"}
    rules |= {"rejoin_seconds": "1800", "end_score": "10" if slot == "finished" else "100"}
    assert ann.post(f"/t/{code}/rules", rules)[0] == 303
    version = read_table(db, code)["version"]
    assert ann.post(f"/t/{code}/start", {"version": str(version)})[0] == 303
    people = {pid: (ann if name == "Ann" else bob) for name, pid in seat_ids(db, code).items()}
    for _ in range(2000):
        row = read_table(db, code)
        if phase_of(row) == slot:
            return code
        game = Game.from_dict(row["state"])
        version = str(row["version"])
        if game.phase == ROUND_OVER:
            for b in people.values():
                b.post(f"/t/{code}/next-round", {"version": version})
                version = str(read_table(db, code)["version"])
            continue
        if slot == "play" and game.phase == PLAY:
            return code
        options = [(pid, a) for pid in people for a in game.legal_actions(pid)]
        pid, action = rng.choice(options)
        if slot == "drawn" and game.phase == PLAY:
            action = next(a for a in game.legal_actions(pid) if type(a).__name__ == "Draw")
        data = {**move_form(action, rng), "version": version}
        status, head, text = people[pid].post(f"/t/{code}/move", data)
        assert status == 303, (status, text[:300])
    raise AssertionError(f"could not bring a table to {slot}")


def hold_presence(server, browser: HttpBrowser, code: str) -> websocket.WebSocket:
    """An open socket: the seat counts as present (no host handover in the lobby)."""
    cookie = "; ".join(f"{c.name}={c.value}" for c in browser.jar)
    ws = websocket.create_connection(
        server.url.replace("http", "ws") + f"/t/{code}/ws", cookie=cookie, timeout=5
    )

    def drain():
        try:
            while ws.connected:
                ws.recv()
        except Exception:
            pass

    threading.Thread(target=drain, daemon=True).start()
    return ws


# ----- what a request may be -----------------------------------------------------------
ROUTES = [
    ("POST", "/t/{code}/move", 20),
    ("POST", "/t/{code}/rules", 3),
    ("POST", "/t/{code}/bots", 2),
    ("POST", "/t/{code}/seats/{seat}/remove", 2),
    ("POST", "/t/{code}/start", 2),
    ("POST", "/t/{code}/join", 2),
    ("POST", "/t/{code}/next-round", 3),
    ("POST", "/t/{code}/leave", 1),
    ("POST", "/t/{code}/rematch", 2),
    ("POST", "/t/{code}/rematch/start", 2),
    ("POST", "/tables", 1),
    ("POST", "/signup", 1),
    ("POST", "/signin", 1),
    ("POST", "/signout", 1),
    ("POST", "/account/password", 1),
    ("POST", "/account/delete", 1),
    ("POST", "/{text}", 1),
    ("POST", "/t/{code}/{text}", 1),
    ("GET", "/t/{code}", 3),
    ("GET", "/t/{code}?mode={text}", 2),
    ("GET", "/", 1),
    ("GET", "/public", 1),
    ("GET", "/rules", 1),
    ("GET", "/join?code={text}", 1),
    ("GET", "/t/{code}/games/{num}/record.json", 1),
    ("GET", "/t/{code}/games/{num}", 1),
    ("GET", "/leaderboard?by={text}&page={num}", 1),
    ("GET", "/me/stats", 1),
    ("GET", "/me/history?page={num}", 1),
    ("GET", "/u/{text}", 1),
    ("GET", "/account?done={text}", 1),
    ("GET", "/signin?next={text}", 1),
    ("GET", "/signup", 1),
    ("GET", "/static/{text}", 1),
    ("GET", "/{text}", 1),
    ("GET", "/t/{code}/{text}", 1),
    ("GET", "/t/{code}/ws", 1),
]
ROUTE_CHOICES = [(m, p) for m, p, weight in ROUTES for _ in range(weight)]
METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]

SPECIAL = [
    "",
    " ",
    "\x00",
    "null",
    "[]",
    "{}",
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "%00",
    "%zz",
    "../../etc/passwd",
    "\u202e\u0301\ufeff",
    "🂡" * 5,
    "Ünïcødé ñame",
    "x" * 5000,
    BIG_NUMBER,
    "-" + BIG_NUMBER,
    "1e9",
    "0x10",
    " 3 ",
    "٣",
    "3.0",
    "True",
    HUGE,
]
NUMBERS = [str(n) for n in range(-3, 13)] + [BIG_NUMBER, "-1", "abc"]
numbers = st.sampled_from(NUMBERS)
CHARS = list("aZ09-_ .,:;éüßİ€😀\u202e\u0301\ufeff\x00\x7f\n\t<>&\"'%/\\?#=+")
special = st.sampled_from(SPECIAL + NUMBERS)
# Mostly the interesting values; sometimes arbitrary text.
junk = st.one_of(special, special, st.text(st.sampled_from(CHARS), max_size=12))
positions = st.builds(lambda r, c: f"{r}-{c}", st.integers(-1, 3), st.integers(-1, 3))
DOMAIN = {
    "type": st.sampled_from(["reveal", "draw", "take_discard", "keep_drawn", "discard_drawn"]),
    "pos": positions,
    "row": st.integers(-1, 3).map(str),
    "col": st.integers(-1, 3).map(str),
    "name": st.sampled_from(["Cy", "Ann", "bob", "Dee Dee", "Zoë"]),
    "bot": st.sampled_from(["random", "greedy", "strong"]),
    "rows": st.sampled_from(["2", "3", "4"]),
    "cols": st.sampled_from(["2", "3", "4", "5"]),
    "initial_flips": st.sampled_from(["0", "1", "2", "5"]),
    "end_score": st.sampled_from(["10", "50", "100", "5000"]),
    "penalty_mode": st.sampled_from(["multiplier", "flat", "both", "none"]),
    "penalty_multiplier": st.sampled_from(["2", "3", "9"]),
    "penalty_flat": st.sampled_from(["1", "10", "99"]),
    "reseat": st.sampled_from(["never", "round", "game", "always"]),
    "grace_seconds": st.sampled_from(["120", "4", "60"]),
    "rejoin_seconds": st.sampled_from(["1800", "29", "600"]),
    "clear_rows": st.sampled_from(["on", "off"]),
    "show_running_score": st.sampled_from(["on", "1"]),
    "public": st.sampled_from(["on", "1"]),
    "username": st.sampled_from(["zed_fuzz", "Ann", "new_user", "a"]),
    "password": st.sampled_from([PASSWORD, "short", "wrong password"]),
    "current_password": st.sampled_from([PASSWORD, "wrong password"]),
    "new_password": st.sampled_from([PASSWORD, "x"]),
    "delete_password": st.sampled_from(["wrong password", PASSWORD]),
    "next": st.sampled_from(["/t/ABC", "//evil.example", "https://evil.example/", "/\\evil"]),
    "remember": st.just("on"),
}
FIELDS = sorted(DOMAIN)


@st.composite
def field_values(draw):
    fields = {}
    for name in draw(st.lists(st.sampled_from(FIELDS), max_size=5, unique=True)):
        fields[name] = draw(st.one_of(DOMAIN[name], DOMAIN[name], junk))
    if draw(st.integers(0, 9)) == 0:
        fields[draw(st.text(max_size=10))] = draw(junk)
    if draw(st.integers(0, 14)) == 0:  # a field sent twice: a list, not a string
        name = draw(st.sampled_from(FIELDS))
        fields[name] = [draw(junk), draw(junk)]
    return fields


MUTATIONS = ["version", "player", "csrf", "field", "table"]
AUTH = ("/signup", "/signin", "/signout", "/account")


@st.composite
def fuzz_requests(draw):
    method, path = draw(st.sampled_from(ROUTE_CHOICES))
    if draw(st.integers(0, 6)) == 0:
        method = draw(st.sampled_from(METHODS))
    return {
        "method": method,
        "path": path,
        "slot": draw(st.sampled_from([*SLOTS, *SLOTS, "unknown", "lower", "junk"])),
        "who": draw(st.sampled_from(["ann", "ann", "bob", "bob", "eve", "anon", "zed"])),
        "csrf": draw(st.sampled_from(["own"] * 5 + ["missing", "wrong", "other", "header"])),
        "version": draw(
            st.sampled_from(["current"] * 5 + ["old", "next", "0", "-1", "big", "junk", "none"])
        ),
        # A move the rules allow now, sent as is or with one thing wrong.
        "legal": draw(st.sampled_from([None, None, "as is", "as is", *MUTATIONS])),
        "fields": draw(field_values()),
        "htmx": draw(st.booleans()),
        "body": draw(st.sampled_from(["form"] * 8 + ["json", "multipart", "bytes"])),
        "seat": draw(st.sampled_from(["host", "guest", "other", "0", BIG_NUMBER, "x"])),
        "text": draw(junk),
        "num": draw(numbers),
    }


# ----- running them --------------------------------------------------------------------
class Lane:
    """One fuzzing lane: its own people, its own tables in every phase, and checks that
    a request it sends changes nothing of its tables unless the request succeeded.
    Lanes run side by side (the server is threaded); account requests all go to lane 0,
    so no lane's request can touch another lane's tables."""

    def __init__(self, server, db, number):
        self.server, self.db, self.number = server, db, number
        self.rng = random.Random(number)
        self.ann, self.bob, self.eve, self.zed = (HttpBrowser(server.url) for _ in range(4))
        self.pool: dict[str, str] = {}
        self.sockets = []
        self.rebuilds = 0
        self.statuses: dict[int, int] = {}
        self.successes = 0
        self.con = sqlite3.connect(
            str(db), timeout=10, isolation_level=None, check_same_thread=False
        )
        self.con.execute("PRAGMA query_only = 1")

    def setup(self):
        for slot in SLOTS:
            self.fill(slot)
        self.eve.get("/")
        if self.number == 0:  # account requests all go to lane 0
            self.zed.get("/signup")
            user = {"username": "zed_fuzz", "password": PASSWORD}
            assert self.zed.post("/signup", user)[0] == 303
            self.zed.get("/")

    def fill(self, slot):
        code = build(self.db, slot, self.ann, self.bob, self.rng)
        self.pool[slot] = code
        if slot == "lobby":
            for b in (self.ann, self.bob):
                self.sockets.append(hold_presence(self.server, b, code))

    def snapshot(self) -> tuple:
        """Everything of this lane's tables a rejected request must leave alone."""
        codes = sorted(self.pool.values())
        marks = ",".join("?" * len(codes))
        tables = self.con.execute(
            f'SELECT * FROM "table" WHERE code IN ({marks}) ORDER BY code', codes
        ).fetchall()
        seats = self.con.execute(
            f"SELECT * FROM seat WHERE table_id IN ({marks}) ORDER BY id", codes
        ).fetchall()
        return tables, seats

    def browser(self, who) -> HttpBrowser:
        known = {"ann": self.ann, "bob": self.bob, "eve": self.eve, "zed": self.zed}
        return known.get(who) or HttpBrowser(self.server.url)

    def legal_move(self, req, code: str) -> tuple[str, dict]:
        """(who, fields) of a move the rules allow at this table now, or of nobody."""
        row = read_table(self.db, code)
        if row["state"] is None:
            return req["who"], {}
        game = Game.from_dict(row["state"])
        names = {pid: name for name, pid in seat_ids(self.db, code).items()}
        options = [
            (names[pid], a) for pid in names for a in game.legal_actions(pid) if pid in names
        ]
        if not options:
            return req["who"], {}
        name, action = self.rng.choice(options)
        return {"Ann": "ann", "Bob": "bob"}.get(name, "eve"), move_form(action, self.rng)

    def resolve(self, req) -> tuple[str, str, bytes | None, dict, HttpBrowser]:
        req = json.loads(json.dumps(req).replace(HUGE, "x" * 1_000_000))
        slot = req["slot"]
        code = self.pool.get(slot) or "ZZZZZZ"
        if slot == "lower":
            code = self.pool["play"].lower()
        elif slot == "junk":
            code = urllib.parse.quote(req["text"], safe="") or "%20"
        fields = dict(req["fields"])
        legal = req["legal"] if req["path"].endswith(("/move", "/next-round")) else None
        if legal and slot in SLOTS:
            if req["path"].endswith("/move"):
                who, move = self.legal_move(req, code)
            else:
                who, move = self.rng.choice(["ann", "bob"]), {}
            req["who"] = {"ann": "bob", "bob": "ann"}.get(who, "eve") if legal == "player" else who
            fields = move
            if legal == "field" and fields:
                key = self.rng.choice(sorted(fields))
                fields[key] = req["text"]
            elif legal == "csrf":
                req["csrf"] = "wrong"
            elif legal == "table":
                code = self.pool[self.rng.choice([s for s in SLOTS if s != slot])]
            if legal != "version":
                req["version"] = "current"
            elif req["version"] == "current":
                req["version"] = "old"
            if legal != "csrf":
                req["csrf"] = "own"
            req["method"], req["body"] = "POST", "form"
        found = self.con.execute(
            'SELECT version FROM "table" WHERE code = ?', (code.upper(),)
        ).fetchone()
        seats = dict(
            self.con.execute(
                'SELECT name, id FROM seat WHERE table_id = ? AND NOT "left"', (code.upper(),)
            ).fetchall()
        )
        seat = {
            "host": str(seats.get("Ann", 0)),
            "guest": str(seats.get("Bob", 0)),
            "other": "1",
        }.get(req["seat"], req["seat"])
        path = req["path"].format(
            code=code,
            seat=urllib.parse.quote(seat, safe=""),
            text=urllib.parse.quote(req["text"], safe=""),
            num=urllib.parse.quote(req["num"], safe=""),
        )
        browser = self.browser(req["who"])
        version = found[0] if found else 0
        choice = {
            "current": version,
            "old": version - 1,
            "next": version + 1,
            "big": BIG_NUMBER,
            "junk": req["text"],
        }.get(req["version"], req["version"])
        if req["version"] != "none" and "version" not in fields:
            fields["version"] = str(choice)
        headers = {"HX-Request": "true"} if req["htmx"] else {}
        token = {
            "own": browser.csrf,
            "wrong": "not-the-token",
            "other": self.bob.csrf if browser is not self.bob else self.ann.csrf,
        }.get(req["csrf"])
        if req["csrf"] == "header":
            headers["X-CSRF-Token"] = browser.csrf or ""
        elif token is not None:
            fields["csrf_token"] = token
        if req["method"] in ("GET", "HEAD", "OPTIONS") and req["body"] == "form":
            return req["method"], path, None, headers, browser
        pairs = []
        for key, value in fields.items():
            for v in value if isinstance(value, list) else [value]:
                pairs.append((key, v))
        if req["body"] == "json":
            body = json.dumps(dict(pairs)).encode()
            headers["Content-Type"] = "application/json"
        elif req["body"] == "multipart":
            boundary = "fuzzboundary"
            parts = [
                f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'
                for k, v in pairs
            ]
            body = ("".join(parts) + f"--{boundary}--\r\n").encode("utf-8", "surrogatepass")
            headers["Content-Type"] = f"multipart/form-data; boundary={boundary}"
        elif req["body"] == "bytes":
            body = urllib.parse.urlencode(pairs).encode() + b"&name=%ff%fe%zz&\xff\xfe=1"
        else:
            body = urllib.parse.urlencode(pairs).encode()
        return req["method"], path, body, headers, browser

    def run(self, req) -> bool:
        """Send one request and check it. True if it succeeded (may change things)."""
        method, path, body, headers, browser = self.resolve(req)
        before = self.snapshot()
        try:
            status, head, text = browser.request(method, path, body=body, headers=headers)
        except Exception as exc:
            # A megabyte-long request line or body: the server may answer (414, 413) and
            # hang up before it has all been sent.
            big = len(path) + len(body or b"") > 60_000
            assert big and is_network_error(exc), f"{exc!r} for {method} {path[:200]}"
            status, text = 0, ""
        self.statuses[status] = self.statuses.get(status, 0) + 1
        where = f"{method} {path[:200]} {req!r:.600}"
        assert status < 500, f"{status} for {where}\n{text[:1500]}"
        # Keep this browser's CSRF token current.
        found = re.search(r'name="csrf_token" value="([^"]+)"', text)
        if found:
            browser.csrf = found.group(1)
        success = method == "POST" and status in (200, 204, 303) and 'role="alert"' not in text
        after = self.snapshot()
        if not success:
            assert after == before, f"a rejected request ({status}) changed state: {where}"
            return False
        self.successes += 1
        if path.startswith(AUTH):
            browser.get("/")  # a renewed session has a new CSRF token
        if after != before:
            for slot, code in list(self.pool.items()):
                row = read_table(self.db, code)
                check_invariants(row["state"])
                if family(phase_of(row)) != family(slot) and self.rebuilds < 30:
                    self.rebuilds += 1
                    self.fill(slot)
        return True


def counts(db) -> tuple:
    con = sqlite3.connect(str(db), timeout=10)
    try:
        return con.execute(
            'SELECT (SELECT count(*) FROM "table"), (SELECT count(*) FROM user), '
            "(SELECT count(*) FROM seat), (SELECT count(*) FROM gamerecord)"
        ).fetchone()
    finally:
        con.close()


def run_batch(lanes: list[Lane], db, batch: list[dict]) -> None:
    """The batch's requests side by side, one thread per lane."""
    work: dict[int, list[dict]] = {}
    for i, req in enumerate(batch):
        lane = 0 if req["path"].startswith(AUTH) else i % len(lanes)
        work.setdefault(lane, []).append(req)
    before = counts(db)
    results, errors = [], []

    def go(lane, reqs):
        try:
            for req in reqs:
                results.append(lanes[lane].run(req))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=go, args=item) for item in work.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    if errors:
        raise errors[0]
    if not any(results):
        assert counts(db) == before, "rejected requests created or removed rows"


LANES = 3


def test_fuzzing_a_live_server(tmp_path):
    server = LiveServer(tmp_path, SKYMO_NEXT_ROUND_SECONDS="600").start()
    db = tmp_path / "skymo.db"
    lanes = [Lane(server, db, n) for n in range(LANES)]
    try:
        with ThreadPoolExecutor(LANES) as pool:
            list(pool.map(Lane.setup, lanes))

        @settings(
            max_examples=int(os.environ.get("SKYMO_FUZZ_EXAMPLES", "700")),
            derandomize=True,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(batch=st.lists(fuzz_requests(), min_size=LANES, max_size=LANES))
        def one(batch):
            run_batch(lanes, db, batch)

        one()
        statuses = {}
        for lane in lanes:
            for status, n in lane.statuses.items():
                statuses[status] = statuses.get(status, 0) + n
        sent = sum(statuses.values())
        successes = sum(lane.successes for lane in lanes)
        assert sent >= 2000 or os.environ.get("SKYMO_FUZZ_EXAMPLES"), statuses
        assert successes > sent // 40, (successes, statuses)
        for row in read_tables(db).values():
            check_invariants(row["state"])
    finally:
        for lane in lanes:
            for ws in lane.sockets:
                ws.close()
        server.stop()
    log = (tmp_path / "server.log").read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]
    assert not re.search(r'" 5(?!05)\d\d ', log), "a 5xx in the server log"


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
            answer = raw(server, data, then, timeout=0.8)
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

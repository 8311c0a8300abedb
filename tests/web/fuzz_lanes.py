"""How the live-server fuzz test runs its requests: lanes side by side, each checking
what it sent (never a 5xx, a rejected request changes nothing, the invariants hold)."""

from __future__ import annotations

import json
import random
import re
import sqlite3
import threading
import urllib.parse

from app.engine import Game
from tests.web.fuzz_helpers import (
    AUTH,
    BIG_NUMBER,
    HUGE,
    PASSWORD,
    SLOTS,
    build,
    family,
    hold_presence,
    phase_of,
)
from tests.web.live_helpers import (
    HttpBrowser,
    check_invariants,
    is_network_error,
    move_form,
    read_table,
    seat_ids,
)


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

"""Skymo web benchmark: tables of simulated people playing through the real pages.

It starts its own server on a free loopback port (by default gunicorn with the project's
gunicorn.conf.py, as the Procfile runs it; `--server dev` runs `python -m app`), seats
--players people at each of --tables tables through the real forms (each person has
their own cookie session, CSRF token, HTTP connection kept alive if the server allows,
and push socket), lets each host start the game (at a random moment within the first
--ramp seconds) and everybody play until --seconds have passed or a player at every
table has made --moves moves (a table stops when one of its players has). The server is
stopped at the end, also on Ctrl+C or on an error.

A player acts when the newest #table it has (pushed over its socket, or the answer to its
own POST, whichever has the higher data-version) offers it something: the setup reveals,
draw then keep or discard-and-turn-over (via ?mode=flip, like the page's link), sometimes
take the discard (via ?mode=take), "Next round", "Play again". Each action waits a think
time drawn uniformly from 0.5-1.5 x --think seconds (like a quick human; --think 0 plays
as fast as possible, a saturation test). Everything is sent as htmx sends it
(HX-Request, X-CSRF-Token, the form's hidden fields), so answers are #table partials.

Printed at the end (a table, or JSON with --json):

* move POST latency: POST /t/<code>/move sent -> response read, for every move;
* push latency: for every accepted move, POST sent -> each *other* player at the table
  has received a pushed #table whose data-version is at least the version the move made
  (the version it was sent with + 1, as every accepted change adds exactly one);
* count, p50, p95, p99 and max of both (nearest-rank percentiles), and of the mode GETs
  and the other POSTs (start, next round, rematch);
* errors, which should all be 0: HTTP answers other than 2xx/3xx and other than the
  expected "the table changed before your action arrived" (stale version) answer,
  failed requests, dropped sockets, pushes that never arrived, stalled tables;
* accepted moves per second, the server's memory at the end (VmRSS and VmHWM of each
  gunicorn worker from /proc/<pid>/status), CPU used by the server (all workers; also
  per accepted move) and by the benchmark, and the machine's load average;
* the table page's weight mid-game, fetched as a player with Accept-Encoding: gzip: the
  HTML, its stylesheet and scripts, raw and gzipped, and the total gzipped against the
  30 KB budget.

Usage, from the repository root with the project's virtualenv:

    .venv/bin/python benchmarks/web_bench.py                    # 100 tables x 4, 60 s
    .venv/bin/python benchmarks/web_bench.py --tables 10 --seconds 20 --server dev
    .venv/bin/python benchmarks/web_bench.py --moves 30 --think 0 --json > bench.json
    .venv/bin/python benchmarks/web_bench.py --end-score 10   # short games: rematches too

Multi-process mode: --postgres URL (a PostgreSQL server; the run gets a fresh database
on it, dropped at the end) with --redis URL (default redis://127.0.0.1:6379/0; the run
gets its own key prefix, removed at the end) and --workers N (gunicorn processes; the
kernel spreads the connections over them, so the players of one table mostly sit on
different processes and their pushes cross through Redis):

    PG=postgresql://postgres@127.0.0.1/postgres
    .venv/bin/python benchmarks/web_bench.py --workers 2 --postgres $PG

Options: --tables (100), --players (4), --seconds (60), --moves (0: no cap), --think
(1.0), --ramp (10), --take (0.2: share of turns that take the discard), --end-score
(the host saves it in the rules form), --no-rematch (stop a table at its game's end),
--server gunicorn|dev, --threads (SKYMO_THREADS), --stall (30: give up when nothing is
accepted for this long), --seed, --keep (keep the temporary folder and the server's
log), --json.

The client runs in this one process (two threads per player: the socket reader and the
player), on the same machine as the server: on a small machine its CPU use shows up in
the latencies, see the CPU figures in the summary.
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import gzip
import http.client
import json
import math
import os
import random
import re
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import websocket

ROOT = Path(__file__).resolve().parent.parent
BUDGET_GZIP = 30 * 1024

VERSION_RE = re.compile(r'data-version="(\d+)"')
CSRF_RE = re.compile(r'name="csrf_token" value="([^"]+)"')
GRID_RE = re.compile(r'class="grid mine act-(\w+)"')
POS_RE = re.compile(r'<button class="card ([\w-]+)" name="pos" value="(\d+-\d+)"')
ROUND_RE = re.compile(r"<span>Round (\d+)</span>")
RECORD_RE = re.compile(r"/games/(\d+)/record\.json")
SEATS_RE = re.compile(r'Seats <span class="muted">(\d+) of')
REMATCH_WITH_RE = re.compile(r"You are in for a rematch with ([^<]*)\.")
ERROR_RE = re.compile(r'<p class="error"[^>]*>(.*?)</p>', re.S)
STYLE_RE = re.compile(r'<link rel="stylesheet" href="([^"]+)"')
SCRIPT_RE = re.compile(r'<script src="([^"]+)"')
STALE_MARK = "changed before your action arrived"
INPUT_RE = re.compile(r"<input\b[^>]*>")
SELECT_RE = re.compile(r'<select\b[^>]*name="([^"]+)"[^>]*>(.*?)</select>', re.S)
ATTR_RE = re.compile(r'(\w+)(?:="([^"]*)")?')


# ----- the server ----------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """The server process under test, on a fresh instance folder."""

    def __init__(self, kind: str, tmp: Path, threads: int | None, env: dict | None = None):
        self.kind = kind
        self.tmp = tmp
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.log_path = tmp / "server.log"
        self.threads = threads
        self.extra_env = env or {}
        self.mode = "SQLite"

    def start(self, timeout: float = 30.0) -> None:
        env = {
            **os.environ,
            "PORT": str(self.port),
            "SKYMO_HOST": "127.0.0.1",
            "SKYMO_INSTANCE_PATH": str(self.tmp / "instance"),
            "SKYMO_SECRET_KEY": "web-bench-" + os.urandom(8).hex(),
            **self.extra_env,
        }
        if self.threads:
            env["SKYMO_THREADS"] = str(self.threads)
        if self.kind == "gunicorn":
            cmd = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "app:create_app()"]
        else:
            cmd = [sys.executable, "-m", "app", "--host", "127.0.0.1", "--port", str(self.port)]
        self.log = open(self.log_path, "ab")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited at start:\n{self.log_tail()}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/")
                if conn.getresponse().status == 200:
                    conn.close()
                    return
                conn.close()
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"the server did not answer within {timeout:.0f} s:\n{self.log_tail()}")

    def worker_pid(self) -> int | None:
        """The process that serves requests: gunicorn's first worker, or the dev server."""
        pids = self.worker_pids()
        return pids[0] if pids else None

    def worker_pids(self) -> list[int]:
        """The processes that serve requests: gunicorn's workers, or the dev server."""
        if self.proc is None or self.proc.poll() is not None:
            return []
        if self.kind != "gunicorn":
            return [self.proc.pid]
        try:
            children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text()
            pids = [int(p) for p in children.split()]
        except OSError:
            pids = []
            for entry in Path("/proc").iterdir():
                if entry.name.isdigit():
                    try:
                        stat = (entry / "stat").read_text()
                    except OSError:
                        continue
                    if int(stat.rsplit(")", 1)[1].split()[1]) == self.proc.pid:
                        pids.append(int(entry.name))
        return sorted(pids)

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(25)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)  # our own child's group
                self.proc.wait(5)
        self.log.close()
        self.proc = None

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def proc_status(pid: int | None) -> dict:
    """VmRSS/VmHWM (kB), threads, and CPU seconds of a process."""
    if pid is None:
        return {}
    out = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0])
            elif key == "Threads":
                out[key] = int(value)
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        tick = os.sysconf("SC_CLK_TCK")
        out["cpu"] = (int(fields[11]) + int(fields[12])) / tick
    except OSError:
        pass
    return out


class Cluster:
    """The multi-process mode's services for one run: a fresh PostgreSQL database and a
    Redis key prefix of its own, both removed afterwards."""

    def __init__(self, postgres: str, redis_url: str, workers: int):
        import psycopg

        self.admin_url = postgres
        self.name = "skymo_bench_" + os.urandom(5).hex()
        with psycopg.connect(postgres, autocommit=True) as con:
            con.execute(f'CREATE DATABASE "{self.name}"')
        self.redis_url = redis_url
        self.prefix = f"skymo-bench-{os.urandom(4).hex()}:"
        self.env = {
            "SKYMO_DATABASE_URL": postgres.rsplit("/", 1)[0] + "/" + self.name,
            "SKYMO_REDIS_URL": redis_url,
            "SKYMO_REDIS_PREFIX": self.prefix,
        }
        if workers:
            self.env["SKYMO_WORKERS"] = str(workers)

    def drop(self) -> None:
        import psycopg
        import redis

        with psycopg.connect(self.admin_url, autocommit=True) as con:
            con.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        client = redis.Redis.from_url(self.redis_url)
        keys = list(client.scan_iter(match=self.prefix + "*", count=1000))
        if keys:
            client.delete(*keys)


def cpu_of(pids: list[int]) -> float:
    return sum(proc_status(pid).get("cpu", 0.0) for pid in pids)


# ----- one person's browser ------------------------------------------------------------
@dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage
    text: str
    wire: int  # body bytes as sent (compressed if gzip)
    raw: int  # body bytes after decompression
    elapsed: float


class Http:
    """A keep-alive connection with a cookie jar, like one browser tab."""

    def __init__(self, port: int):
        self.port = port
        self.conn: http.client.HTTPConnection | None = None
        self.cookies: dict[str, str] = {}
        self.reconnects = 0  # a kept-alive connection the server had closed
        self.opened = 0  # connections opened
        self.requests = 0

    def request(self, method: str, path: str, form=None, headers=None) -> Reply:
        body = urlencode(form).encode() if form is not None else None
        sent = {"Accept-Encoding": "gzip", "Accept": "text/html"}
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if body is not None:
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        sent.update(headers or {})
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                self.opened += 1
            self.requests += 1
            start = time.perf_counter()
            try:
                self.conn.request(method, path, body, sent)
                resp = self.conn.getresponse()
                data = resp.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # The server closed an idle keep-alive connection: send it again on a
                # new one (a POST carries its version, so it cannot apply twice).
                self.close()
                if attempt:
                    raise
                self.reconnects += 1
                continue
            except Exception:
                self.close()
                raise
            elapsed = time.perf_counter() - start
            break
        for cookie in resp.headers.get_all("Set-Cookie") or ():
            name, _, rest = cookie.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]
        wire = len(data)
        if resp.headers.get("Content-Encoding") == "gzip":
            data = gzip.decompress(data)
        if resp.will_close:
            self.close()
        text = data.decode("utf-8", "replace")
        return Reply(resp.status, resp.headers, text, wire, len(data), elapsed)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def version_of(html: str) -> int | None:
    found = VERSION_RE.search(html, 0, 400)
    return int(found.group(1)) if found else None


# ----- the simulation ------------------------------------------------------------------
class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.move_lat: list[float] = []
        self.get_lat: list[float] = []
        self.other_lat: list[float] = []
        self.moves: list[tuple[Player, float, int]] = []  # (mover, sent at, version made)
        self.accepted = 0
        self.others_accepted = 0
        self.stale = 0
        self.http_errors = 0
        self.request_errors = 0
        self.drops = 0
        self.samples: list[str] = []
        self.last_progress = time.monotonic()

    def error(self, kind: str, text: str) -> None:
        with self.lock:
            setattr(self, kind, getattr(self, kind) + 1)
            if len(self.samples) < 10:
                self.samples.append(text)


@dataclass(eq=False)
class Table:
    code: str = ""
    players: list[Player] = field(default_factory=list)
    done: bool = False
    games_finished: int = 0  # the host saw the results of this many games
    rounds: int = 0  # the host saw this many rounds begin
    last_round: str | None = None


class Player:
    def __init__(self, bench: Bench, table: Table, index: int):
        self.bench = bench
        self.table = table
        self.index = index
        self.name = f"P{index + 1}"
        self.http = Http(bench.server.port)
        self.csrf = ""
        self.ws: websocket.WebSocket | None = None
        self.cond = threading.Condition()
        self.html = ""
        self.version = -1
        self.acted = -1
        self.moves = 0
        self.arrivals: list[tuple[int, float]] = []  # (data-version, received at) per push
        self.out_of_order = 0
        self.closing = False
        self.rng = random.Random(bench.rng.random())
        self.reader: threading.Thread | None = None
        self.actor: threading.Thread | None = None

    @property
    def is_host(self) -> bool:
        return self.index == 0

    # -- socket ---------------------------------------------------------------------
    def connect(self) -> None:
        port = self.bench.server.port
        self.ws = websocket.create_connection(
            f"ws://127.0.0.1:{port}/t/{self.table.code}/ws",
            cookie="; ".join(f"{k}={v}" for k, v in self.http.cookies.items()),
            origin=f"http://127.0.0.1:{port}",
            timeout=30,
            skip_utf8_validation=True,
        )
        self.ws.settimeout(None)
        self.reader = threading.Thread(target=self.read, name=f"ws-{self.table.code}-{self.name}")
        self.reader.daemon = True
        self.reader.start()

    def read(self) -> None:
        ws = self.ws
        top = -1
        try:
            while True:
                message = ws.recv()
                now = time.perf_counter()
                if not isinstance(message, str) or not message:
                    break  # a close frame
                version = version_of(message)
                if version is None:
                    continue  # a lobby push without the table
                if version < top:
                    self.out_of_order += 1  # this socket went back in time
                top = max(top, version)
                self.arrivals.append((version, now))
                with self.cond:
                    if version > self.version:
                        self.html, self.version = message, version
                        self.cond.notify()
        except Exception as exc:
            if not self.closing:
                self.bench.stats.error("drops", f"socket {self.table.code}/{self.name}: {exc!r}")
            return
        if not self.closing:
            self.bench.stats.error("drops", f"socket {self.table.code}/{self.name} closed")

    def close(self) -> None:
        self.closing = True
        if self.ws is not None:
            with contextlib.suppress(Exception):
                self.ws.send_close()

    def shutdown(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                self.ws.shutdown()
        self.http.close()

    # -- acting ---------------------------------------------------------------------
    def take(self, html: str) -> None:
        """A page or answer htmx would swap in: keep it if it is the newest."""
        version = version_of(html)
        if version is None:
            return
        with self.cond:
            if version > self.version:
                self.html, self.version = html, version

    def stopped(self) -> bool:
        return self.bench.stop.is_set() or self.table.done

    def run(self) -> None:
        bench = self.bench
        bench.go.wait()
        # Tables do not all start in the same instant: each host starts within --ramp.
        ramp = bench.args.ramp if self.is_host else 0
        if ramp > 0 and bench.stop.wait(self.rng.uniform(0, ramp)):
            return
        try:
            while not self.stopped():
                with self.cond:
                    while self.version <= self.acted and not self.stopped():
                        self.cond.wait(0.25)
                    if self.stopped():
                        return
                    html, version = self.html, self.version
                    self.acted = version
                step = self.decide(html)
                if step is None:
                    continue
                if bench.args.think > 0:
                    pause = bench.args.think * self.rng.uniform(0.5, 1.5)
                    if bench.stop.wait(pause) or self.table.done:
                        return
                    with self.cond:
                        if self.version > version:
                            # The table changed while we thought: act on what is shown now.
                            html, version = self.html, self.version
                            self.acted = version
                            step = self.decide(html)
                    if step is None:
                        continue
                self.perform(step, version)
        except Exception as exc:  # a bug here must not hang the run silently
            self.bench.stats.error("request_errors", f"{self.table.code}/{self.name}: {exc!r}")

    def decide(self, html: str):
        """What this person would press on this #table, or None."""
        head = html[:300]
        if self.is_host:
            self.count(html)
        if "is-lobby" in head:
            seats = SEATS_RE.search(html)
            # The host starts once everybody sits.
            full = seats is not None and int(seats.group(1)) >= len(self.table.players)
            if self.is_host and "/start" in html and full:
                return ("start", None)
            return None
        if "is-finished" in head:
            if not self.bench.args.rematch:
                self.table.done = True
                return None
            if "/rematch/start" in html:
                names = REMATCH_WITH_RE.search(html)
                count = len(names.group(1).split(", ")) if names else 0
                if self.is_host and count >= len(self.table.players):
                    return ("rematch/start", None)
                return None
            if "/rematch" in html:
                return ("rematch", None)
            return None
        if "/next-round" in html:
            return ("next-round", None)
        grid = GRID_RE.search(html)
        kind = grid.group(1) if grid else None
        if kind == "reveal":
            return ("move", {"type": "reveal", "pos": self.pick(html, grid, down=True)})
        if 'value="draw"' in html:
            if "?mode=take" in html and self.rng.random() < self.bench.args.take:
                return ("mode", "take")
            return ("move", {"type": "draw"})
        if kind == "keep_drawn":
            if self.rng.random() < 0.4:
                if "?mode=flip" in html:
                    return ("mode", "flip")
                if 'value="discard_drawn"><button>' in html:
                    return ("move", {"type": "discard_drawn"})
            return ("move", {"type": "keep_drawn", "pos": self.pick(html, grid)})
        if kind in ("discard_drawn", "take_discard"):
            return ("move", {"type": kind, "pos": self.pick(html, grid)})
        return None

    def count(self, html: str) -> None:
        """Rounds begun and games finished, as the host sees them."""
        table = self.table
        record = RECORD_RE.search(html)
        if record:
            table.games_finished = max(table.games_finished, int(record.group(1)))
            table.last_round = None
            return
        found = ROUND_RE.search(html)
        if found and found.group(1) != table.last_round:
            table.rounds += 1
            table.last_round = found.group(1)

    def pick(self, html: str, grid, down: bool = False) -> str:
        cells = POS_RE.findall(html, grid.end())
        if down:
            cells = [c for c in cells if c[0] == "back"] or cells
        return self.rng.choice(cells)[1]

    def perform(self, step, version: int) -> None:
        what, arg = step
        code = self.table.code
        htmx = {"HX-Request": "true", "X-CSRF-Token": self.csrf}
        stats = self.bench.stats
        if what == "mode":
            try:
                reply = self.http.request("GET", f"/t/{code}?mode={arg}", headers=htmx)
            except Exception as exc:
                stats.error("request_errors", f"GET ?mode={arg}: {exc!r}")
                return
            with stats.lock:
                stats.get_lat.append(reply.elapsed)
            if reply.status != 200:
                stats.error("http_errors", f"GET ?mode={arg} -> {reply.status}")
                return
            self.take(reply.text)
            version = version_of(reply.text)
            step = self.decide(reply.text)
            if step is None or step[0] == "mode":
                return
            what, arg = step
        form = {"csrf_token": self.csrf, "version": str(version)}
        if what == "move":
            form.update(arg)
        start = time.perf_counter()
        try:
            reply = self.http.request("POST", f"/t/{code}/{what}", form, htmx)
        except Exception as exc:
            stats.error("request_errors", f"POST {what} {form.get('type', '')}: {exc!r}")
            return
        ok = 200 <= reply.status < 400
        stale = ok and STALE_MARK in reply.text
        with stats.lock:
            (stats.move_lat if what == "move" else stats.other_lat).append(reply.elapsed)
            if stale:
                stats.stale += 1
            elif ok:
                stats.last_progress = time.monotonic()
                if what == "move":
                    stats.accepted += 1
                    stats.moves.append((self, start, version + 1))
                else:
                    stats.others_accepted += 1
        if not ok:
            found = ERROR_RE.search(reply.text)
            message = " ".join(found.group(1).split()) if found else reply.text[:120]
            stats.error(
                "http_errors", f"POST {what} {form.get('type', '')} -> {reply.status}: {message}"
            )
        self.take(reply.text)
        if ok and not stale and what == "move":
            self.moves += 1
            if self.bench.args.moves and self.moves >= self.bench.args.moves:
                self.table.done = True
                for p in self.table.players:
                    with p.cond:
                        p.cond.notify()


class Bench:
    def __init__(self, args, server: Server):
        self.args = args
        self.server = server
        self.stats = Stats()
        self.go = threading.Event()
        self.stop = threading.Event()
        self.rng = random.Random(args.seed)
        self.tables: list[Table] = []

    def players(self):
        return [p for t in self.tables for p in t.players]

    def seat(self, table: Table) -> None:
        """Create the table and seat everybody through the forms, then open the sockets."""
        host, *guests = table.players
        page = host.http.request("GET", "/")
        host.csrf = CSRF_RE.search(page.text).group(1)
        reply = host.http.request("POST", "/tables", {"name": host.name, "csrf_token": host.csrf})
        if reply.status != 303:
            raise RuntimeError(f"creating a table answered {reply.status}")
        table.code = reply.headers["Location"].rstrip("/").rsplit("/", 1)[1]
        if self.args.end_score:
            self.set_rules(host, {"end_score": str(self.args.end_score)})
        for guest in guests:
            page = guest.http.request("GET", f"/t/{table.code}")
            guest.csrf = CSRF_RE.search(page.text).group(1)
            form = {"name": guest.name, "csrf_token": guest.csrf}
            reply = guest.http.request("POST", f"/t/{table.code}/join", form)
            if reply.status != 303:
                raise RuntimeError(f"joining {table.code} answered {reply.status}")
        for player in table.players:
            player.connect()

    def set_rules(self, host: Player, changes: dict) -> None:
        """Submit the lobby's rules form as it is, with `changes`."""
        page = host.http.request("GET", f"/t/{host.table.code}").text
        start = page.index(f'action="/t/{host.table.code}/rules"')
        form_html = page[start : page.index("</form>", start)]
        form = {}
        for tag in INPUT_RE.findall(form_html):
            attrs = {k: v for k, v in ATTR_RE.findall(tag[6:])}
            if "name" not in attrs:
                continue
            if attrs.get("type") == "checkbox":
                if "checked" in attrs:
                    form[attrs["name"]] = "on"
            else:
                form[attrs["name"]] = attrs.get("value", "")
        for name, options in SELECT_RE.findall(form_html):
            chosen = re.search(r'<option value="([^"]*)" selected', options)
            form[name] = chosen.group(1) if chosen else ""
        form.update(changes)
        reply = host.http.request("POST", f"/t/{host.table.code}/rules", form)
        if reply.status != 303:
            raise RuntimeError(f"saving the rules of {host.table.code} answered {reply.status}")

    def run(self) -> dict:
        args = self.args
        log(f"seating {args.tables} tables x {args.players} players ...")
        for _ in range(args.tables):
            table = Table()
            table.players = [Player(self, table, i) for i in range(args.players)]
            self.tables.append(table)
        t0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=8) as pool:
            for future in [pool.submit(self.seat, t) for t in self.tables]:
                future.result()
        log(f"seated in {time.perf_counter() - t0:.1f} s; {len(self.players())} sockets open")
        for player in self.players():
            player.actor = threading.Thread(target=player.run, name=f"player-{player.name}")
            player.actor.daemon = True
            player.actor.start()
        time.sleep(0.5)  # let the sockets' first pushes (and presence pushes) arrive

        pids = self.server.worker_pids()
        cpu0, client0 = cpu_of(pids), sum(os.times()[:2])
        started = time.perf_counter()
        self.stats.last_progress = time.monotonic()
        self.go.set()
        log(f"playing for up to {args.seconds:g} s ...")
        deadline = started + args.seconds
        next_report = started + 10
        stalled = False
        while True:
            now = time.perf_counter()
            if now >= deadline or all(t.done for t in self.tables):
                break
            if time.monotonic() - self.stats.last_progress > args.stall:
                stalled = True
                self.stats.error("request_errors", f"no progress for {args.stall:g} s")
                break
            if now >= next_report:
                log(f"  {now - started:5.0f} s: {self.stats.accepted} moves accepted")
                next_report += 10
            time.sleep(0.1)
        self.stop.set()
        for player in self.players():
            player.actor.join(30)
        elapsed = time.perf_counter() - started
        cpu1, client1 = cpu_of(pids), sum(os.times()[:2])

        # Let the last pushes arrive: wait until no socket has received anything for 1 s.
        drain_until = time.perf_counter() + 10
        last = -1
        while time.perf_counter() < drain_until:
            count = sum(len(p.arrivals) for p in self.players())
            if count == last:
                break
            last = count
            time.sleep(1.0)

        memory = [proc_status(pid) for pid in pids]
        weight = self.page_weight()
        for player in self.players():
            player.close()
        for player in self.players():
            if player.reader is not None:
                player.reader.join(2)
            player.shutdown()
        return self.report(elapsed, stalled, cpu1 - cpu0, client1 - client0, memory, weight)

    def page_weight(self) -> dict:
        """The table page as a player sees it mid-game, and the assets it links."""
        players = self.players()
        chosen = next((p for p in players if "phase-play" in p.html), None)
        chosen = chosen or next((p for p in players if "is-playing" in p.html[:300]), players[0])
        http_ = chosen.http
        page = http_.request("GET", f"/t/{chosen.table.code}")
        items = [("HTML", f"/t/{chosen.table.code}", page)]
        for kind, regex in (("CSS", STYLE_RE), ("JS", SCRIPT_RE)):
            for href in regex.findall(page.text):
                items.append((kind, href, http_.request("GET", href)))
        rows = []
        for kind, url, reply in items:
            served_gzip = reply.headers.get("Content-Encoding") == "gzip"
            gz = reply.wire if served_gzip else len(gzip.compress(reply.text.encode(), 6))
            rows.append(
                {
                    "kind": kind,
                    "url": url,
                    "status": reply.status,
                    "raw": reply.raw,
                    "served": reply.wire,
                    "served_gzip": served_gzip,
                    "gzip": gz,
                }
            )
        totals = {}
        for kind in ("HTML", "CSS", "JS"):
            of_kind = [r for r in rows if r["kind"] == kind]
            totals[kind] = {
                "raw": sum(r["raw"] for r in of_kind),
                "gzip": sum(r["gzip"] for r in of_kind),
            }
        total = sum(r["gzip"] for r in rows)
        return {
            "phase": "play" if "phase-play" in page.text else "other",
            "files": rows,
            "by_kind": totals,
            "total_raw": sum(r["raw"] for r in rows),
            "total_gzip": total,
            "budget_gzip": BUDGET_GZIP,
            "within_budget": total <= BUDGET_GZIP,
        }

    def push_latencies(self) -> tuple[list[float], int]:
        """For every accepted move, the delay until each other player had its version."""
        index = {}
        for player in self.players():
            maxima, times, top = [], [], -1
            for version, at in player.arrivals:
                if version > top:
                    top = version
                    maxima.append(version)
                    times.append(at)
            index[player] = (maxima, times)
        latencies, missing = [], 0
        for mover, sent, made in self.stats.moves:
            for other in mover.table.players:
                if other is mover:
                    continue
                maxima, times = index[other]
                i = bisect.bisect_left(maxima, made)
                if i == len(maxima):
                    missing += 1
                else:
                    latencies.append(times[i] - sent)
        return latencies, missing

    def report(self, elapsed, stalled, server_cpu, client_cpu, memory, weight) -> dict:
        stats = self.stats
        args = self.args
        pushes, missing = self.push_latencies()
        players = self.players()
        errors = {
            "http": stats.http_errors,
            "requests": stats.request_errors,
            "socket_drops": stats.drops,
            "missing_pushes": missing,
        }
        return {
            "config": {
                "server": self.server.kind,
                "tables": args.tables,
                "players": args.players,
                "seconds": args.seconds,
                "moves_per_player": args.moves,
                "think": args.think,
                "ramp": args.ramp,
                "take": args.take,
                "rematch": args.rematch,
                "end_score": args.end_score or None,
                "seed": args.seed,
                "cpus": os.cpu_count(),
            },
            "elapsed": elapsed,
            "stalled": stalled,
            "moves_accepted": stats.accepted,
            "moves_per_second": stats.accepted / elapsed if elapsed else 0.0,
            "other_actions_accepted": stats.others_accepted,
            "stale_answers": stats.stale,
            "latency_ms": {
                "move_post": summary(stats.move_lat),
                "push": summary(pushes),
                "mode_get": summary(stats.get_lat),
                "other_post": summary(stats.other_lat),
            },
            "errors": errors,
            "error_total": sum(errors.values()),
            "error_samples": stats.samples,
            "out_of_order_pushes": sum(p.out_of_order for p in players),
            "pushes_received": sum(len(p.arrivals) for p in players),
            "http_reconnects": sum(p.http.reconnects for p in players),
            "http_requests": sum(p.http.requests for p in players),
            "http_connections": sum(p.http.opened for p in players),
            "rounds_begun": sum(t.rounds for t in self.tables),
            "games_finished": sum(t.games_finished for t in self.tables),
            "server": {
                "mode": self.server.mode,
                "workers": len(memory),
                "pid": self.server.worker_pid(),
                "rss_kb": memory[0].get("VmRSS") if memory else None,
                "peak_rss_kb": memory[0].get("VmHWM") if memory else None,
                "rss_kb_per_worker": [m.get("VmRSS") for m in memory],
                "peak_rss_kb_per_worker": [m.get("VmHWM") for m in memory],
                "threads": memory[0].get("Threads") if memory else None,
                "cpu_seconds": server_cpu,
                "cpu_share": server_cpu / elapsed if elapsed else 0.0,
                "cpu_ms_per_move": 1000 * server_cpu / stats.accepted if stats.accepted else None,
                "load_average": os.getloadavg(),
            },
            "client_cpu_seconds": client_cpu,
            "client_cpu_share": client_cpu / elapsed if elapsed else 0.0,
            "page_weight": weight,
        }


# ----- figures -------------------------------------------------------------------------
def percentile(ordered: list[float], p: float) -> float:
    """Nearest-rank percentile of a sorted list."""
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def summary(values: list[float]) -> dict:
    if not values:
        return {"count": 0, "p50": None, "p95": None, "p99": None, "max": None}
    ordered = sorted(values)
    return {
        "count": len(ordered),
        "p50": percentile(ordered, 50) * 1000,
        "p95": percentile(ordered, 95) * 1000,
        "p99": percentile(ordered, 99) * 1000,
        "max": ordered[-1] * 1000,
    }


def render(result: dict) -> str:
    c = result["config"]
    out = []
    moves = f"{c['moves_per_player']} moves a player" if c["moves_per_player"] else "no move cap"
    out.append(
        f"Skymo web benchmark: {c['server']} server, {c['tables']} tables x {c['players']} "
        f"players, think {c['think']:g} s, starts within {c['ramp']:g} s, "
        f"{c['seconds']:g} s budget ({moves}), "
        f"{c['cpus']} CPUs"
    )
    out.append("")
    out.append(f"{'latency (ms)':<28}{'count':>8}{'p50':>9}{'p95':>9}{'p99':>9}{'max':>9}")
    labels = {
        "move_post": "move POST",
        "push": "push to the other players",
        "mode_get": "mode GET (?mode=take|flip)",
        "other_post": "other POSTs (start, next)",
    }
    for key, label in labels.items():
        s = result["latency_ms"][key]
        if s["count"]:
            figures = "".join(f"{s[k]:9.1f}" for k in ("p50", "p95", "p99", "max"))
        else:
            figures = f"{'-':>9}" * 4
        out.append(f"{label:<28}{s['count']:>8}{figures}")
    out.append("")
    out.append(
        f"moves accepted: {result['moves_accepted']} in {result['elapsed']:.1f} s = "
        f"{result['moves_per_second']:.1f} moves/s; other actions: "
        f"{result['other_actions_accepted']}; stale-version answers (expected): "
        f"{result['stale_answers']}"
    )
    out.append(
        f"rounds begun: {result['rounds_begun']}, games finished: "
        f"{result['games_finished']}, pushes received: {result['pushes_received']}, "
        f"out-of-order pushes: {result['out_of_order_pushes']}, "
        f"HTTP requests: {result['http_requests']} on {result['http_connections']} "
        f"connections ({result['http_reconnects']} resent)"
    )
    e = result["errors"]
    out.append(
        f"errors: {result['error_total']} (HTTP {e['http']}, failed requests {e['requests']}, "
        f"socket drops {e['socket_drops']}, missing pushes {e['missing_pushes']})"
        + ("  STALLED" if result["stalled"] else "")
    )
    for sample in result["error_samples"]:
        out.append(f"  e.g. {sample}")
    s = result["server"]
    mb = [f"{kb / 1024:.1f}" if kb else "?" for kb in s["rss_kb_per_worker"]]
    peak = [f"{kb / 1024:.1f}" if kb else "?" for kb in s["peak_rss_kb_per_worker"]]
    per_move = f"{s['cpu_ms_per_move']:.1f} ms" if s["cpu_ms_per_move"] else "?"
    out.append(
        f"server ({s['mode']}, {s['workers']} worker(s)): RSS {' / '.join(mb)} MB at the end "
        f"(peak {' / '.join(peak)} MB); CPU {s['cpu_seconds']:.1f} s = {s['cpu_share']:.0%} "
        f"of a core, {per_move} per accepted move; benchmark client CPU "
        f"{result['client_cpu_share']:.0%} of a core; load average at the end "
        + " ".join(f"{x:.1f}" for x in s["load_average"])
    )
    w = result["page_weight"]
    out.append("")
    out.append(f"page weight (table page as a player, {w['phase']} phase), bytes:")
    width = max([34] + [len(r["url"]) + 1 for r in w["files"]])
    out.append(f"{'':<6}{'file':<{width}}{'raw':>9}{'gzipped':>9}  served")
    for r in w["files"]:
        served = "gzip" if r["served_gzip"] else "uncompressed"
        out.append(f"{r['kind']:<6}{r['url']:<{width}}{r['raw']:>9}{r['gzip']:>9}  {served}")
    for kind, t in w["by_kind"].items():
        out.append(f"{kind + ' total':<{width + 6}}{t['raw']:>9}{t['gzip']:>9}")
    verdict = "within" if w["within_budget"] else "OVER"
    out.append(
        f"{'total':<{width + 6}}{w['total_raw']:>9}{w['total_gzip']:>9}  "
        f"({w['total_gzip'] / 1024:.1f} KB gzipped: {verdict} the 30 KB budget)"
    )
    return "\n".join(out)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--players", type=int, default=4, help="people per table (2-8)")
    parser.add_argument("--seconds", type=float, default=60, help="time budget of the play")
    parser.add_argument(
        "--moves", type=int, default=0, help="stop a table when a player made this many moves"
    )
    parser.add_argument("--think", type=float, default=1.0, help="mean think time, seconds")
    parser.add_argument(
        "--ramp", type=float, default=10, help="hosts start their games within this many seconds"
    )
    parser.add_argument(
        "--take", type=float, default=0.2, help="share of turns that take the discard"
    )
    parser.add_argument(
        "--end-score", type=int, default=0, help="the host sets this end score (10-1000)"
    )
    parser.add_argument("--no-rematch", dest="rematch", action="store_false")
    parser.add_argument("--server", choices=("gunicorn", "dev"), default="gunicorn")
    parser.add_argument("--threads", type=int, help="SKYMO_THREADS for gunicorn")
    parser.add_argument(
        "--postgres",
        metavar="URL",
        help="multi-process mode: a PostgreSQL server (e.g. postgresql://postgres@127.0.0.1/"
        "postgres); a fresh database is created on it for the run and dropped after",
    )
    parser.add_argument(
        "--redis", metavar="URL", default="redis://127.0.0.1:6379/0", help="with --postgres"
    )
    parser.add_argument("--workers", type=int, default=0, help="SKYMO_WORKERS (with --postgres)")
    parser.add_argument("--stall", type=float, default=30, help="give up after this idle time")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    if not 2 <= args.players <= 8:
        parser.error("--players must be from 2 to 8")

    # Two sockets per player here, and as many in the server (which inherits the limit).
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, args.tables * args.players * 4 + 256))
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    threading.stack_size(512 * 1024)

    def terminate(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminate)
    tmp = Path(tempfile.mkdtemp(prefix="skymo-bench-"))
    cluster = Cluster(args.postgres, args.redis, args.workers) if args.postgres else None
    server = Server(args.server, tmp, args.threads, cluster.env if cluster else None)
    server.mode = "PostgreSQL + Redis" if cluster else "SQLite"
    bench = None
    try:
        log(f"starting the {args.server} server on {server.url} (log: {server.log_path})")
        server.start()
        bench = Bench(args, server)
        result = bench.run()
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    except Exception:
        log(f"the benchmark failed; the server's log ends with:\n{server.log_tail()}")
        raise
    finally:
        if bench is not None:
            bench.stop.set()
            bench.go.set()
            for player in bench.players():
                player.closing = True
                player.shutdown()
        server.stop()
        if cluster is not None:
            cluster.drop()
        if not args.keep:
            for path in sorted(tmp.rglob("*"), reverse=True):
                path.rmdir() if path.is_dir() else path.unlink()
            tmp.rmdir()
    print(json.dumps(result, indent=2) if args.json else render(result))
    return 1 if result["error_total"] else 0


if __name__ == "__main__":
    sys.exit(main())

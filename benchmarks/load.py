"""Skymo load generator: thousands of people playing through the real pages, from one
asyncio process (aiohttp), one cookie session, pool of HTTP connections (as a browser
keeps its own; `--pool shared`: one pool for everyone) and push socket per person.

It starts gunicorn with the project's gunicorn.conf.py on a free loopback port (or
drives --url), seats --players people at each of --tables tables through the real forms
(the host creates the table and starts the game when everyone is seated; the others
join by the link), and everybody plays until --seconds have passed. A person acts on the
newest #table they have (pushed over their socket, or the answer to their own POST):
the setup reveals, draw then keep or discard-and-turn-over, sometimes take the discard,
"Next round", "Play again". Before each action they think for an exponentially
distributed time of mean --think seconds (--think 0: as fast as possible). Requests are
sent as htmx sends them (HX-Request, X-CSRF-Token, the form's fields).

Printed at the end (or JSON with --json), of the moves sent while measuring: accepted
moves per second; move POST latency (sent -> answer read) and push latency (a move's
POST sent -> each other player at the table has a pushed #table with that move's version
or newer), p50/p95/p99/max, and the worst 5 s window; errors
(HTTP answers other than 2xx/3xx and the expected "the table changed" answer, failed
requests, dropped sockets, tables that could not be seated; when the run ends, requests
in flight are let finish before the sessions close, so none is cut off by the client
itself); the server's RSS (VmRSS and
VmHWM) and its CPU per accepted move (every request a browser makes counted); the
machine's load average before and after (the machine may be shared: figures are only
comparable at similar load). To explain a latency burst: the workers' collections over
50 ms and held loops over 200 ms (from their logs), the machine's TCP counters while
measuring, the run's slowest moves and the client's own stalls, with their times.

Usage (from the repository root, with `pip install -e '.[bench]'`):

    .venv/bin/python benchmarks/load.py --tables 100 --think 10 --seconds 90
    .venv/bin/python benchmarks/load.py --tables 500 --think 10 --ramp 60 --seconds 120
    .venv/bin/python benchmarks/load.py --tables 100 --think 1 --seconds 60   # saturation
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import aiohttp
from players import VERSION, Person, Stats, Table  # benchmarks/ is the script's folder

ROOT = Path(__file__).resolve().parent.parent
HELD = re.compile(r"loop was held: a timer fired (\d+) ms late \((\S+) UTC\)")
GC_PAUSE = re.compile(r"collection of generation (\d) held the worker (\d+) ms \((\d+) ms of CPU")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentiles(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    ordered = sorted(values)

    def rank(p):
        return ordered[min(len(ordered) - 1, max(0, int(p * len(ordered) + 0.999999) - 1))]

    return {
        "n": len(ordered),
        "p50": rank(0.50) * 1000,
        "p95": rank(0.95) * 1000,
        "p99": rank(0.99) * 1000,
        "max": ordered[-1] * 1000,
    }


class Run:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.stats = Stats()
        self.stopping = False
        self.measuring = False
        self.measured_from = 0.0  # (monotonic) moves sent before it are not counted
        self.url = args.url
        self.urls = [args.url] if args.url else []
        self.servers: list[subprocess.Popen] = []
        self.logs: list = []
        self.tmp = None
        self.started = time.monotonic()
        self.playing: list[asyncio.Task] = []

    # ----- the server ----------------------------------------------------------------
    def start_server(self) -> None:
        """--servers gunicorn servers, each on a free port of its own (one is the usual)."""
        self.tmp = tempfile.mkdtemp(prefix="skymo-load-")
        self.logs = []
        for i in range(self.args.servers):
            port = free_port()
            env = {
                **os.environ,
                "SKYMO_INSTANCE_PATH": self.tmp,
                "SKYMO_SECRET_KEY": "load",
                "PORT": str(port),
                "SKYMO_HOST": "127.0.0.1",
            }
            log = open(Path(self.tmp) / f"server{i}.log", "wb")  # noqa: SIM115
            self.logs.append(log)
            self.servers.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "gunicorn",
                        "-c",
                        "gunicorn.conf.py",
                        "app:create_app()",
                    ],
                    cwd=ROOT,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
            self.urls.append(f"http://127.0.0.1:{port}")
        self.url = self.urls[0]
        self.started = time.monotonic()

    def counts(self, sent: float) -> bool:
        """Whether a request sent at `sent` (monotonic) is measured: sent while
        measuring, not merely answered then (one sent before would carry into the
        figures whatever delayed it before measuring began)."""
        return self.measuring and sent >= self.measured_from

    def url_for(self, code: str) -> str:
        """Where a table's requests and sockets go: with several servers, always the same
        one for a table (by its code), as a proxy hashing on the table code sends them
        (README, "Many processes"); its creation goes to the first."""
        if len(self.urls) < 2 or not code:
            return self.url
        return self.urls[zlib.crc32(code.encode()) % len(self.urls)]

    def worker_pids(self) -> list[int]:
        """Every worker of every server started (or --pid)."""
        if not self.servers:
            return [self.args.pid] if self.args.pid else []
        pids = []
        for server in self.servers:
            with contextlib.suppress(OSError):
                out = subprocess.run(
                    ["pgrep", "-P", str(server.pid)], capture_output=True, text=True
                ).stdout
                pids.extend(sorted(int(p) for p in out.split()))
        return pids

    def worker_pid(self) -> int | None:
        pids = self.worker_pids()
        return pids[0] if pids else None

    def stop_server(self) -> None:
        for server in self.servers:
            if server.poll() is None:
                os.killpg(server.pid, signal.SIGTERM)
        for server in self.servers:
            try:
                server.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
        if self.tmp and not self.args.keep:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def server_logs(self) -> list[str]:
        """What the servers this run started have logged so far."""
        texts = []
        for i, log in enumerate(self.logs):
            log.flush()
            texts.append((Path(self.tmp) / f"server{i}.log").read_text(errors="replace"))
        return texts

    async def wait_ready(self, session) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(Exception):
                async with session.get(self.url + "/") as r:
                    if r.status == 200:
                        return
            await asyncio.sleep(0.2)
        raise SystemExit("the server did not start")

    async def drain(self, timeout: float = 15.0) -> None:
        """Let the requests in flight be answered before the sessions close. Closing
        the connection pool under them cut them off: at saturation ~90 "errors" per
        run (POST: ServerDisconnectedError, GET: aiohttp's AssertionError on a closed
        session) that were this client's own doing, and broken pipes on the server."""
        pending = [t for t in self.playing if not t.done()]
        if pending:
            _, late = await asyncio.wait(pending, timeout=timeout)
            for task in late:
                task.cancel()

    # ----- seating ---------------------------------------------------------------------
    def pool(self, shared):
        """A person's HTTP connections: their own (None), as a browser's, or the pool all
        share (`--pool shared`: a proxy's upstream pool, fewer connections)."""
        return shared if self.args.pool == "shared" else None

    async def seat(self, table: Table, connector, delay: float) -> bool:
        await asyncio.sleep(delay)
        people = [
            Person(self, table, f"P{i}-{self.rng.randrange(10**6)}", self.pool(connector))
            for i in range(self.args.players)
        ]
        table.people = people
        host, *others = people
        try:
            await host.get("/")
            status, _, headers = await host.post("/tables", {"name": host.name}, htmx=False)
            if status != 303:
                raise RuntimeError(f"create: {status}")
            table.code = headers["Location"].rstrip("/").rsplit("/", 1)[1]
            if self.args.end_score:
                await host.get(f"/t/{table.code}")
                await host.post(f"/t/{table.code}/rules", {"end_score": self.args.end_score})
            for p in others:
                await p.get(f"/t/{table.code}")
                status, text, _ = await p.post(f"/t/{table.code}/join", {"name": p.name})
                if status not in (204, 303):
                    raise RuntimeError(f"join: {status} {text[:100]}")
            for p in people:
                p.take(await p.get(f"/t/{table.code}"))
                asyncio.create_task(p.listen())
            while any(p.ws is None for p in people):
                await asyncio.sleep(0.05)
            page = await host.get(f"/t/{table.code}")
            version = VERSION.search(page).group(1)
            status, text, _ = await host.post(f"/t/{table.code}/start", {"version": version})
            if status != 200 or 'role="alert"' in text:
                raise RuntimeError(f"start: {status} {text[:100]}")
            host.take(text)
        except Exception as exc:
            self.stats.failed_tables += 1
            self.stats.error("seating", repr(exc))
            return False
        self.stats.seated_tables += 1
        self.playing = [t for t in self.playing if not t.done()]  # soak runs seat for hours
        for p in people:
            self.playing.append(asyncio.create_task(p.play()))
        return True

    async def main(self) -> dict:
        args = self.args
        if self.url is None:
            self.start_server()
        connector = aiohttp.TCPConnector(limit=args.connections, force_close=False)
        tables = [Table() for _ in range(args.tables)]
        load_before = os.getloadavg()
        async with aiohttp.ClientSession(connector=connector, connector_owner=False) as s:
            await self.wait_ready(s)
        pids = self.worker_pids()
        # The client's stalls before measuring are watched too (seating, warmup): one
        # delays every request in flight, and those that end after it began count.
        warm = ClientStalls()
        warm_watch = asyncio.create_task(warm.watch())
        seat_tasks = [
            asyncio.create_task(self.seat(t, connector, args.ramp * i / max(1, args.tables)))
            for i, t in enumerate(tables)
        ]
        await asyncio.gather(*seat_tasks)
        # The client's own pauses would count as the server's latency: what it made while
        # seating is frozen and its collector is off from here on (with it on, its
        # collections of 50-126 ms showed as the server's worst 5 s windows; its full ones
        # reach 0.4-0.7 s by the end of seating at 1,000 tables, and one just before
        # measuring would show as the 1 s stall of the first window two runs had); its
        # stalls are watched and reported.
        gc.freeze()
        gc.disable()
        # Measure once everyone is seated and playing: only moves sent from then on.
        await asyncio.sleep(args.warmup)
        warm_watch.cancel()
        warm.stop()
        stalls = ClientStalls()
        watch = asyncio.create_task(stalls.watch())
        cpu0, t0, tcp0 = cpu_seconds(pids), time.monotonic(), tcp_counters()
        self.measured_from = t0
        self.measuring = True
        rss_peak = 0
        end = t0 + args.seconds
        while time.monotonic() < end:
            await asyncio.sleep(min(5, end - time.monotonic()))
            rss_peak = max(rss_peak, max(memory(p)[0] for p in pids or [None]))
        self.measuring = False
        watch.cancel()
        stalls.stop()
        gc.enable()
        elapsed = time.monotonic() - t0
        cpu = cpu_seconds(pids) - cpu0
        tcp = {k: v - tcp0.get(k, 0) for k, v in tcp_counters().items()}
        per_worker = [memory(p) for p in pids or [None]]
        rss, hwm = max(m[0] for m in per_worker), max(m[1] for m in per_worker)
        self.stopping = True
        sockets = sum(1 for t in tables for p in t.people if p.ws is not None and not p.ws.closed)
        await self.drain()
        await asyncio.gather(*(p.close() for t in tables for p in t.people))
        await connector.close()
        st = self.stats
        logs = self.server_logs()
        return {
            "tables": args.tables,
            "players": args.players,
            "think_s": args.think,
            "seconds": round(elapsed, 1),
            "seated_tables": st.seated_tables,
            "failed_tables": st.failed_tables,
            "open_sockets_at_end": sockets,
            "moves": st.moves,
            "moves_per_s": round(st.moves / elapsed, 1),
            "post_ms": percentiles(st.post),
            "push_ms": percentiles(st.push),
            "push_p99_by_5s_ms": windows(st.push_at, st.push, 5.0),
            "slowest_push": (
                {
                    "ms": round(st.slowest_push[0] * 1000, 1),
                    "table": st.slowest_push[1],
                    "version": st.slowest_push[2],
                    "person": st.slowest_push[3],
                }
                if st.slowest_push
                else None
            ),
            "started_at": wall(self.started),
            "measured_from": wall(t0),
            "slowest_moves": [
                [round(spent * 1000), wall(sent), code]
                for spent, sent, code in sorted(st.slow_posts, reverse=True)
            ],
            "other_ms": percentiles(st.other),
            "stale_answers": st.stale,
            "errors": st.errors,
            "error_count": sum(st.errors.values()),
            "server_cpu_ms_per_move": round(cpu * 1000 / st.moves, 2) if st.moves else None,
            "server_gc_pauses_ms": gc_pauses(logs),
            "server_loop_held": held_loops(logs),
            "client_stalls_ms": stalls.of("late"),
            "client_gc_pauses_ms": stalls.of("gc"),
            "client_stalls_before": [[kind, ms, wall(at)] for at, kind, ms in warm.events],
            "server_cpu_share": round(cpu / elapsed, 2),
            "tcp_while_measuring": tcp,
            "workers": len(pids),
            "rss_mib": round(rss / 1024, 1),
            "rss_mib_per_worker": [round(m[0] / 1024, 1) for m in per_worker],
            "rss_peak_mib": round(max(rss_peak, rss) / 1024, 1),
            "hwm_mib": round(hwm / 1024, 1),
            "load_average_before": load_before,
            "load_average_after": os.getloadavg(),
        }


def gc_pauses(logs: list[str]) -> list[list[int]]:
    """[generation, ms held, ms of CPU] of each garbage collection that held a server
    worker longer than 50 ms (its log: app.web.serving.PauseLog)."""
    return [[int(g), int(ms), int(cpu)] for text in logs for g, ms, cpu in GC_PAUSE.findall(text)]


def held_loops(logs: list[str]) -> list[list]:
    """[ms late, UTC time] of each time a server worker's loop was held longer than
    app.web.serving.LATE (a timer firing late, its log)."""
    return [[int(ms), at] for text in logs for ms, at in HELD.findall(text)]


class ClientStalls:
    """The load client's own stalls over 50 ms while it is watched (measuring, or
    before): its event loop late (any cause) and its garbage collections, each with
    when it ended (time.monotonic()). Latencies measured across a stall include it,
    though the server did nothing slow."""

    OVER = 0.05

    def __init__(self):
        self.events: list[tuple[float, str, int]] = []  # (ended, kind, ms)
        self._started = 0.0
        gc.callbacks.append(self._collection)

    def _collection(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.monotonic()
        else:
            self._stalled("gc", time.monotonic() - self._started)

    def _stalled(self, kind: str, seconds: float) -> None:
        if seconds > self.OVER:
            self.events.append((time.monotonic(), kind, round(seconds * 1000)))

    def of(self, kind: str) -> list[int]:
        """The ms of each stall of `kind` ("late" or "gc")."""
        return [ms for _, k, ms in self.events if k == kind]

    async def watch(self, every: float = 0.02) -> None:
        while True:
            asked = time.monotonic()
            await asyncio.sleep(every)
            self._stalled("late", time.monotonic() - asked - every)

    def stop(self) -> None:
        gc.callbacks.remove(self._collection)


def wall(monotonic: float) -> str:
    """A time.monotonic() reading on the wall clock (UTC, to the millisecond)."""
    at = time.time() - time.monotonic() + monotonic
    return time.strftime("%H:%M:%S", time.gmtime(at)) + f".{int(at % 1 * 1000):03d}"


def windows(times: list[float], values: list[float], width: float) -> dict:
    """The p99 of `values` in each `width`-second window of `times`: how even latency
    was over the run (a periodic pause shows as a few windows far above the rest)."""
    buckets: dict[int, list[float]] = {}
    for t, v in zip(times, values, strict=True):
        buckets.setdefault(int(t // width), []).append(v)
    p99s = sorted((percentiles(b)["p99"], key) for key, b in buckets.items() if len(b) >= 20)
    if not p99s:
        return {"n": 0}
    return {
        "n": len(p99s),
        "min": p99s[0][0],
        "median": p99s[len(p99s) // 2][0],
        "max": p99s[-1][0],
        # when the worst began (UTC): to find it in the servers' and PostgreSQL's logs
        "max_at": wall(p99s[-1][1] * width),
    }


# The machine's TCP counters (every connection, the client's and the servers'): a full
# listen queue drops a SYN, which the client sends again 1 s later, so a move's answer
# or push comes ~1 s late with no sign of it in the server; a retransmission timeout
# costs at least 200 ms.
TCP_COUNTERS = (
    "ListenOverflows",
    "ListenDrops",
    "TCPSynRetrans",
    "TCPTimeouts",
    "TCPLossProbes",
    "RetransSegs",
)


def tcp_counters() -> dict:
    counters = {}
    for path in ("/proc/net/netstat", "/proc/net/snmp"):
        with contextlib.suppress(OSError), open(path) as f:
            lines = f.read().splitlines()
        for names, values in zip(lines[::2], lines[1::2], strict=False):
            pairs = zip(names.split()[1:], values.split()[1:], strict=False)
            counters.update((k, int(v)) for k, v in pairs if k in TCP_COUNTERS)
    return counters


def cpu_seconds(pids: list[int]) -> float:
    """The CPU time of all `pids` (every server worker)."""
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            parts = f.read().rsplit(")", 1)[1].split()
        total += int(parts[11]) + int(parts[12])
    return total / os.sysconf("SC_CLK_TCK")


def memory(pid: int | None) -> tuple[int, int]:
    """(VmRSS, VmHWM) in KiB."""
    if pid is None:
        return 0, 0
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS", "VmHWM")):
                key, value = line.split(":")
                values[key] = int(value.split()[0])
    return values.get("VmRSS", 0), values.get("VmHWM", 0)


def show(r: dict) -> None:
    def line(name, p):
        if not p.get("n"):
            return f"{name:<22} -"
        return (
            f"{name:<22} {p['p50']:.1f} / {p['p95']:.1f} / {p['p99']:.1f} ms"
            f" (max {p['max']:.0f}, n={p['n']})"
        )

    print(
        f"tables x players       {r['tables']} x {r['players']}, think {r['think_s']} s, "
        f"{r['seconds']} s measured"
    )
    print(f"seated                 {r['seated_tables']} (failed {r['failed_tables']})")
    print(f"moves/s                {r['moves_per_s']} ({r['moves']} moves)")
    print(line("move POST p50/95/99", r["post_ms"]))
    print(line("push p50/95/99", r["push_ms"]))
    w = r["push_p99_by_5s_ms"]
    if w.get("n"):
        print(
            f"push p99 per 5 s       min {w['min']:.0f} / median {w['median']:.0f} / "
            f"max {w['max']:.0f} ms ({w['n']} windows; the worst from {w['max_at']} UTC)"
        )
    slowest = r.get("slowest_push")
    if slowest:
        print(
            f"slowest push           {slowest['ms']:.0f} ms: table {slowest['table']} "
            f"version {slowest['version']}, to {slowest['person']}"
        )
    slow = r.get("slowest_moves") or []
    if slow and slow[0][0] > 200:
        print(
            f"slowest moves          of the whole run (server started {r['started_at']}, "
            f"measured from {r['measured_from']}): [ms, sent at (UTC), table] {slow[:10]}"
        )
    print(line("other requests", r["other_ms"]))
    print(f"errors                 {r['error_count']} {r['errors'] or ''}")
    print(f"stale answers          {r['stale_answers']}")
    print(f"server CPU per move    {r['server_cpu_ms_per_move']} ms ({r['server_cpu_share']} core)")
    pauses = r.get("server_gc_pauses_ms") or []
    longest = max((ms for _, ms, _ in pauses), default=0)
    print(f"server GC pauses       {len(pauses)} over 50 ms (longest {longest} ms)")
    if pauses:
        print(f"  [generation, held ms, CPU ms] {pauses[:12]}")
    print(
        f"server RSS             {r['rss_mib']} MiB (peak {r['rss_peak_mib']}, HWM {r['hwm_mib']})"
    )
    held = r.get("server_loop_held") or []
    print(f"server loop held       {len(held)} times over 200 ms {held[:8] or ''}")
    if r.get("workers", 1) > 1:
        print(f"RSS per worker         {' / '.join(map(str, r['rss_mib_per_worker']))} MiB")
    lags, collections = r.get("client_stalls_ms", []), r.get("client_gc_pauses_ms", [])
    print(
        f"client stalls          {len(lags)} over 50 ms (longest {max(lags, default=0)} ms); "
        f"its GC {len(collections)} over 50 ms (longest {max(collections, default=0)} ms)"
    )
    before = r.get("client_stalls_before") or []
    longest = sorted(before, key=lambda e: -e[1])[:6]
    print(
        f"client before measuring {len(before)} stalls over 50 ms; the longest "
        f"[kind, ms, ended at (UTC)] {longest}"
    )
    print(f"sockets open at end    {r['open_sockets_at_end']}")
    tcp = r.get("tcp_while_measuring") or {}
    print("TCP while measuring    " + ", ".join(f"{k} {tcp.get(k, 0)}" for k in TCP_COUNTERS))
    before = " ".join(f"{x:.1f}" for x in r["load_average_before"])
    after = " ".join(f"{x:.1f}" for x in r["load_average_after"])
    print(f"load average           before {before}, after {after} (2 cores, shared)")


def player_options(parser, *, think: float, end_score: str, seed: int) -> None:
    """The options of the people and the server, shared by load.py and soak.py."""
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--think", type=float, default=think, help="mean think time, seconds")
    parser.add_argument("--take", type=float, default=0.2, help="share of takes")
    parser.add_argument("--end-score", default=end_score, help="the rules' end score")
    parser.add_argument(
        "--no-deflate",
        dest="deflate",
        action="store_false",
        help="sockets without permessage-deflate (browsers ask for it)",
    )
    parser.add_argument(
        "--pool",
        choices=("person", "shared"),
        default="person",
        help="HTTP connections: each person's own, as browsers keep them (default), or one "
        "pool shared by everyone",
    )
    parser.add_argument("--url", help="drive this server instead of starting gunicorn")
    parser.add_argument("--pid", type=int, help="with --url: the worker's pid, for CPU/RSS")
    parser.add_argument(
        "--servers",
        type=int,
        default=1,
        help="gunicorn servers on ports of their own; each table's traffic goes to one",
    )
    parser.add_argument("--seed", type=int, default=seed)
    parser.add_argument("--keep", action="store_true", help="keep the server's folder")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=60.0, help="measured play")
    parser.add_argument("--ramp", type=float, default=30.0, help="seating spread over")
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=0, help="HTTP pool, 0: no cap")
    parser.add_argument("--json", action="store_true")
    player_options(parser, think=10.0, end_score="", seed=1)
    args = parser.parse_args(argv)
    # A `timeout` around the run still stops the server it started (finally, below).
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    run = Run(args)
    try:
        result = asyncio.run(run.main())
    finally:
        run.stop_server()
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        show(result)


if __name__ == "__main__":
    main()

"""Socket soak test: thousands of connects and disconnects against one server process,
checking that threads and memory do not grow and that idle sockets stay healthy.

    .venv/bin/python benchmarks/socket_soak.py [--cycles 3000] [--idle 200] [--idle-seconds 60]

It starts gunicorn with the project's gunicorn.conf.py on a free loopback port (a
temporary instance folder), creates one table with two players, then:
1. opens and closes `--cycles` sockets (a player's socket: cookie + Origin), each
   receiving the table's first push, in batches, sampling the worker's threads and RSS;
2. holds `--idle` sockets open for `--idle-seconds` with the server's pings on, then
   makes a move and checks every idle socket still receives the push.
It stops the server at the end, whatever happens. Only loopback is used."""

from __future__ import annotations

import argparse
import contextlib
import http.cookiejar
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

import websocket

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Player:
    def __init__(self, base: str):
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.csrf = None

    def get(self, path: str) -> str:
        html = self.opener.open(self.base + path, timeout=10).read().decode()
        found = re.search(r'name="csrf_token" value="([^"]+)"', html)
        if found:
            self.csrf = found.group(1)
        return html

    def post(self, path: str, **fields) -> str:
        if self.csrf is None:
            self.get("/")
        data = urllib.parse.urlencode({"csrf_token": self.csrf, **fields}).encode()
        response = self.opener.open(self.base + path, data=data, timeout=10)
        return response.geturl()

    def cookie(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.jar)


def worker_pid(master: int) -> int:
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return int(children[0]) if children else master


def sample(pid: int) -> tuple[int, int]:
    status = Path(f"/proc/{pid}/status").read_text()
    threads = int(re.search(r"Threads:\s+(\d+)", status).group(1))
    rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))
    return threads, rss


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=3000)
    parser.add_argument("--idle", type=int, default=200)
    parser.add_argument("--idle-seconds", type=float, default=60)
    args = parser.parse_args(argv)

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    tmp = tempfile.mkdtemp(prefix="skymo-soak-")
    env = {
        **os.environ,
        "PORT": str(port),
        "SKYMO_HOST": "127.0.0.1",
        "SKYMO_INSTANCE_PATH": tmp,
        "SKYMO_SECRET_KEY": "soak",
    }
    log = open(Path(tmp) / "server.log", "wb")  # noqa: SIM115
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "app:create_app()"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.time() + 30
        while True:
            try:
                urllib.request.urlopen(base + "/", timeout=1).read()
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)
        pid = worker_pid(server.pid)
        ann, bob = Player(base), Player(base)
        code = ann.post("/tables", name="Ann").rsplit("/", 1)[1]
        bob.post(f"/t/{code}/join", name="Bob")
        ws_url = f"ws://127.0.0.1:{port}/t/{code}/ws"
        headers = {"Cookie": ann.cookie()}

        def connect():
            ws = websocket.create_connection(ws_url, header=headers, origin=base, timeout=10)
            first = ws.recv()
            assert 'id="seats"' in first or 'id="table"' in first
            return ws

        print(f"server worker pid {pid}; start: threads, RSS KiB = {sample(pid)}")
        start_threads, start_rss = sample(pid)
        errors = 0
        t0 = time.time()
        rows = []
        for i in range(1, args.cycles + 1):
            try:
                connect().close()
            except Exception:
                errors += 1
            if i % max(1, args.cycles // 10) == 0:
                time.sleep(0.5)  # let closed sockets' threads finish
                threads, rss = sample(pid)
                rows.append((i, threads, rss))
                mib = rss / 1024
                print(f"  {i:>6} connect/close cycles: threads {threads:>4}, RSS {mib:7.1f} MiB")
        cycle_rate = args.cycles / (time.time() - t0)
        time.sleep(2)
        end_threads, end_rss = sample(pid)

        print(f"holding {args.idle} idle sockets for {args.idle_seconds:.0f} s ...")
        idle = [connect() for _ in range(args.idle)]
        held_threads, held_rss = sample(pid)
        # Idle, like a browser tab: nothing to send, but the client answers the
        # server's pings (websocket-client does so while reading).
        idle_until = time.time() + args.idle_seconds
        while time.time() < idle_until:
            for ws in idle:
                ws.settimeout(0.001)
                with contextlib.suppress(websocket.WebSocketTimeoutException):
                    ws.recv()
            time.sleep(min(2.0, max(0.0, idle_until - time.time())))
        ann.post(f"/t/{code}/bots", bot="greedy")  # a change: every socket gets a push
        delivered = 0
        for ws in idle:
            try:
                ws.settimeout(10)
                while True:
                    message = ws.recv()
                    if "Gobbler" in message or "bot" in message:
                        delivered += 1
                        break
            except Exception:
                pass
        for ws in idle:
            ws.close()
        time.sleep(2)
        final_threads, final_rss = sample(pid)
        print()
        print(f"connect/close cycles     {args.cycles} ({cycle_rate:.0f}/s), errors {errors}")
        print(f"threads start/end        {start_threads} -> {end_threads}")
        print(f"RSS start/end            {start_rss / 1024:.1f} -> {end_rss / 1024:.1f} MiB")
        print(
            f"idle sockets held        {args.idle} for {args.idle_seconds:.0f} s: "
            f"threads {held_threads}, RSS {held_rss / 1024:.1f} MiB"
        )
        print(f"pushes after idling      {delivered}/{args.idle} delivered")
        print(f"after closing them       threads {final_threads}, RSS {final_rss / 1024:.1f} MiB")
        ok = errors == 0 and delivered == args.idle and end_threads <= start_threads + 5
        print("RESULT", "ok" if ok else "PROBLEM")
        return 0 if ok else 1
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


if __name__ == "__main__":
    sys.exit(main())

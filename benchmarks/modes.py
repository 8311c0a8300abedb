"""One process on SQLite or several on PostgreSQL + Redis, under the load generator.

Runs benchmarks/load.py (same options, same figures) against gunicorn started in the
chosen mode. With --postgres URL the run gets a fresh database on that server and its
own Redis key prefix (both removed afterwards) and --workers servers of one process each,
on ports of their own, behind Debian's haproxy run from the shipped deploy/haproxy.cfg
(benchmarks/proxy.py; this script starts and stops it): the load client talks to haproxy
alone, which sends every request and socket of a table to one process by its code. Server
CPU is summed over every worker (haproxy's own is printed after); RSS is given per worker.

    .venv/bin/python benchmarks/modes.py --tables 1000 --think 10 --ramp 120 --seconds 90
    PG=postgresql://postgres@127.0.0.1:5432/postgres
    .venv/bin/python benchmarks/modes.py --postgres $PG --workers 2 --tables 1000 --think 10

--by-table: the same servers without a proxy; the load client sends each table to one of
them by its code itself. --spread: one gunicorn of --workers workers sharing its socket,
so the players of one table sit on different processes and their pushes cross through
Redis.

--cpu-cap SHARE puts each worker in a cgroup of its own, limited to SHARE of one core
(Linux, as root): on a machine whose cores the load client, haproxy, PostgreSQL and Redis
share with the server, this is how one process and two can each be saturated, to compare
what a second process adds.

    SATURATE="--cpu-cap 0.4 --tables 500 --think 1 --ramp 30 --warmup 15 --seconds 40"
    .venv/bin/python benchmarks/modes.py $SATURATE
    .venv/bin/python benchmarks/modes.py --postgres $PG --workers 2 $SATURATE
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import secrets
import sys
import time
from pathlib import Path

from proxy import HAProxy, wait_answering  # benchmarks/ is the script's folder

HERE = Path(__file__).resolve().parent


def load_generator():
    spec = importlib.util.spec_from_file_location("skymo_load", HERE / "load.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def cap_workers(pids: list[int], share: float) -> list[Path]:
    """Each worker in a cgroup of its own, limited to `share` of one core (cgroup v2's
    cpu.max, or v1's cpu controller). Returns the groups, removed by `uncap`."""
    period = 100_000
    v2 = Path("/sys/fs/cgroup/cgroup.controllers").exists()
    base = Path("/sys/fs/cgroup") if v2 else Path("/sys/fs/cgroup/cpu")
    groups = []
    for i, pid in enumerate(pids):
        group = base / f"skymo-bench-{os.getpid()}-{i}"
        group.mkdir(exist_ok=True)
        if v2:
            (group / "cpu.max").write_text(f"{int(share * period)} {period}")
        else:
            (group / "cpu.cfs_period_us").write_text(str(period))
            (group / "cpu.cfs_quota_us").write_text(str(int(share * period)))
        (group / "cgroup.procs").write_text(str(pid))
        groups.append(group)
    return groups


def uncap(groups: list[Path]) -> None:
    """Remove the groups once their workers have ended (a group must be empty)."""
    for group in groups:
        for _ in range(50):
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.2)


def cpu_seconds(pid: int) -> float:
    """User and system CPU a live process has used (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def behind_haproxy(load) -> None:
    """The load generator's servers, once started, behind haproxy: the client is given
    haproxy's address alone; haproxy stops with them."""
    start, stop = load.Run.start_server, load.Run.stop_server

    def start_server(self) -> None:
        start(self)
        servers = [url.removeprefix("http://") for url in self.urls]
        wait_answering(servers)
        self.proxy = HAProxy(servers, Path(self.tmp)).start()
        self.urls = [self.proxy.url]
        self.url = self.proxy.url
        print(f"haproxy at {self.proxy.url} in front of {', '.join(servers)}", flush=True)

    def stop_server(self) -> None:
        proxy = getattr(self, "proxy", None)
        if proxy is not None:
            if proxy.proc.poll() is None:
                print(f"haproxy CPU over the run: {cpu_seconds(proxy.proc.pid):.1f} s")
            proxy.stop()
        stop(self)

    load.Run.start_server = start_server
    load.Run.stop_server = stop_server


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", metavar="URL", help="PostgreSQL + Redis mode")
    parser.add_argument("--redis", metavar="URL", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cpu-cap", type=float, metavar="SHARE", help="cores per worker")
    parser.add_argument(
        "--by-table",
        action="store_true",
        help="no proxy: the load client sends every request and socket of a table to one "
        "of the --workers servers itself (by its code)",
    )
    parser.add_argument(
        "--spread",
        action="store_true",
        help="no proxy: one gunicorn of --workers workers, a table's connections on any",
    )
    args, rest = parser.parse_known_args(argv)
    load = load_generator()
    groups: list[Path] = []
    if args.cpu_cap:
        ready = load.Run.wait_ready

        async def wait_ready_capped(self, session) -> None:
            await ready(self, session)
            groups.extend(cap_workers(self.worker_pids(), args.cpu_cap))
            print(f"each of {len(groups)} workers capped at {args.cpu_cap:g} core", flush=True)

        load.Run.wait_ready = wait_ready_capped
    name = None
    if args.postgres:
        import psycopg

        name = "skymo_bench_" + secrets.token_hex(5)
        with psycopg.connect(args.postgres, autocommit=True) as con:
            con.execute(f'CREATE DATABASE "{name}"')
        prefix = f"skymo-bench-{secrets.token_hex(4)}:"
        os.environ.update(
            SKYMO_DATABASE_URL=args.postgres.rsplit("/", 1)[0] + "/" + name,
            SKYMO_REDIS_URL=args.redis,
            SKYMO_REDIS_PREFIX=prefix,
            SKYMO_WORKERS=str(args.workers) if args.spread else "1",
        )
        if not args.spread:
            rest += ["--servers", str(args.workers)]
        if not (args.spread or args.by_table):
            os.environ["SKYMO_PROXY_HOPS"] = "1"  # haproxy's X-Forwarded-For
            behind_haproxy(load)
        routed = (
            ", each table on one by the load client (no proxy)"
            if args.by_table
            else ", tables spread over one gunicorn's workers (no proxy)"
            if args.spread
            else ", each table on one by haproxy (deploy/haproxy.cfg)"
        )
        print(f"mode: PostgreSQL + Redis, {args.workers} processes{routed}", flush=True)
    else:
        print("mode: SQLite, 1 process", flush=True)
    try:
        load.main(rest)
    finally:
        uncap(groups)
        if name is not None:
            import psycopg
            import redis

            with psycopg.connect(args.postgres, autocommit=True) as con:
                con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            client = redis.Redis.from_url(args.redis)
            from app.web.ratelimit import redis_key_patterns

            keys = [  # the sign-in limit's keys too
                key
                for match in redis_key_patterns(prefix)
                for key in client.scan_iter(match=match, count=1000)
            ]
            if keys:
                client.delete(*keys)


if __name__ == "__main__":
    sys.exit(main())

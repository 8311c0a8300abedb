"""One process on SQLite or several on PostgreSQL + Redis, under the load generator.

Runs benchmarks/load.py (same options, same figures) against gunicorn started in the
chosen mode. With --postgres URL the run gets a fresh database on that server and its
own Redis key prefix (both removed afterwards) and SKYMO_WORKERS=--workers processes of
one gunicorn: the kernel hands each connection to any of them, and they hand it on to
the worker that owns its table (app/steering.py). With --spread they do not
(SKYMO_STEER=0): the players of one table sit on different processes and their pushes
cross through Redis. Server CPU is summed over every worker; RSS is given per worker.

    .venv/bin/python benchmarks/modes.py --tables 1000 --think 10 --ramp 120 --seconds 90
    PG=postgresql://postgres@127.0.0.1:5432/postgres
    .venv/bin/python benchmarks/modes.py --postgres $PG --workers 2 --tables 1000 --think 10

--by-table runs --workers servers of one process each, on ports of their own, and the
load client sends every request and socket of a table to one of them, by its code (as
the README's nginx `hash` on the table code does): a change is then pushed by the
process that made it, and the others only hear of it.

--cpu-cap SHARE puts each worker in a cgroup of its own, limited to SHARE of one core
(Linux, as root): on a machine whose cores the load client, PostgreSQL and Redis share
with the server, this is how one process and two can each be saturated, to compare
what a second process adds.

    SATURATE="--cpu-cap 0.4 --tables 500 --think 1 --ramp 30 --warmup 15 --seconds 40"
    .venv/bin/python benchmarks/modes.py $SATURATE
    .venv/bin/python benchmarks/modes.py --postgres $PG --workers 2 --by-table $SATURATE
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import secrets
import sys
import time
from pathlib import Path

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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", metavar="URL", help="PostgreSQL + Redis mode")
    parser.add_argument("--redis", metavar="URL", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cpu-cap", type=float, metavar="SHARE", help="cores per worker")
    parser.add_argument(
        "--by-table",
        action="store_true",
        help="--workers servers of one process each, on ports of their own; every request "
        "and socket of a table goes to one of them (by its code), as a proxy hashing on "
        'the table code sends them (README, "Many processes")',
    )
    parser.add_argument(
        "--spread",
        action="store_true",
        help="no steering (SKYMO_STEER=0): a table's connections on any of the workers",
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
            SKYMO_WORKERS="1" if args.by_table else str(args.workers),
            SKYMO_STEER="0" if args.spread else "1",
        )
        if args.by_table:
            rest += ["--servers", str(args.workers)]
        routed = (
            ", each table on one (by its code)"
            if args.by_table
            else ", tables spread over them (no steering)"
            if args.spread
            else ", each table steered to one"
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

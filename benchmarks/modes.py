"""One process on SQLite or several on PostgreSQL + Redis, under the load generator.

Runs benchmarks/load.py (same options, same figures) against gunicorn started in the
chosen mode. With --postgres URL the run gets a fresh database on that server and its
own Redis key prefix (both removed afterwards) and SKYMO_WORKERS=--workers processes;
the kernel hands each connection to any of them, so the players of one table sit on
different processes and their pushes cross through Redis. Server CPU is summed over
every worker; RSS is given per worker.

    .venv/bin/python benchmarks/modes.py --tables 1000 --think 10 --ramp 120 --seconds 90
    PG=postgresql://postgres@127.0.0.1:5432/postgres
    .venv/bin/python benchmarks/modes.py --postgres $PG --workers 2 --tables 1000 --think 10
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import secrets
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load_generator():
    spec = importlib.util.spec_from_file_location("skymo_load", HERE / "load.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def workers_of(pid: int | None) -> list[int]:
    """Every gunicorn worker beside `pid` (the children of its parent)."""
    if pid is None:
        return []
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return [pid]
    parent = stat.rsplit(")", 1)[1].split()[1]
    out = subprocess.run(["pgrep", "-P", parent], capture_output=True, text=True).stdout
    return sorted(int(p) for p in out.split()) or [pid]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", metavar="URL", help="PostgreSQL + Redis mode")
    parser.add_argument("--redis", metavar="URL", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--workers", type=int, default=2)
    args, rest = parser.parse_known_args(argv)
    load = load_generator()
    per_worker: dict[int, tuple[int, int]] = {}
    cpu_one, memory_one = load.cpu_seconds, load.memory

    def cpu_all(pid):
        return sum(cpu_one(p) for p in workers_of(pid))

    def memory_max(pid):
        for p in workers_of(pid):
            per_worker[p] = memory_one(p)
        values = list(per_worker.values()) or [(0, 0)]
        return max(v[0] for v in values), max(v[1] for v in values)

    load.cpu_seconds, load.memory = cpu_all, memory_max
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
            SKYMO_WORKERS=str(args.workers),
        )
        print(f"mode: PostgreSQL + Redis, {args.workers} processes", flush=True)
    else:
        print("mode: SQLite, 1 process", flush=True)
    try:
        load.main(rest)
    finally:
        if per_worker:
            rss = " / ".join(f"{v[0] / 1024:.1f}" for _, v in sorted(per_worker.items()))
            print(f"RSS per worker         {rss} MiB", flush=True)
        if name is not None:
            import psycopg
            import redis

            with psycopg.connect(args.postgres, autocommit=True) as con:
                con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            client = redis.Redis.from_url(args.redis)
            keys = [  # the sign-in limit's storage puts "LIMITS:LIMITER/" first
                key
                for match in (prefix, f"LIMITS:LIMITER/{prefix}")
                for key in client.scan_iter(match=match + "*", count=1000)
            ]
            if keys:
                client.delete(*keys)


if __name__ == "__main__":
    sys.exit(main())

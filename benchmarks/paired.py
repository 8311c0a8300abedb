"""Two runs of benchmarks/modes.py at once, so that both see the same machine.

On this 2-core machine, consecutive runs of one setup differed by up to 50% (its speed
drifts from minute to minute), which hid any change smaller than that. Run side by side,
two setups share whatever state the machine is in: compare their CPU per move at a load
neither saturates, or their moves/s with each worker capped (`--cpu-cap`), then swap
the sides and run again.

    PG=postgresql://postgres@127.0.0.1:5432/postgres
    # one SQLite process against two on PostgreSQL + Redis behind haproxy, each table on
    # one of them
    .venv/bin/python benchmarks/paired.py --b "--postgres $PG --workers 2" \\
        -- --cpu-cap 0.3 --tables 300 --think 1 --ramp 30 --warmup 15 --seconds 60
    # two commits (git worktree add ../old <commit>), same mode, no cap
    .venv/bin/python benchmarks/paired.py --a-dir ../old --a "--postgres $PG --workers 2 \\
        --by-table" --b "--postgres $PG --workers 2 --by-table" \\
        -- --tables 150 --think 2 --ramp 20 --warmup 15 --seconds 60

Each side gets its own database and Redis prefix (modes.py). SKYMO_DB_POOL defaults to
20 here: four processes with the usual 32 each would pass PostgreSQL's 100 connections.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHOWN = ("mode", "seated", "moves/s", "move POST", "push p50", "errors", "server CPU", "RSS")


def side(directory: str, mode: str, load: list[str]) -> subprocess.Popen:
    script = Path(directory).resolve() / "benchmarks" / "modes.py"
    return subprocess.Popen(
        [sys.executable, str(script), *shlex.split(mode), *load],
        cwd=script.parent.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def moves_per_s(out: str) -> float | None:
    found = re.search(r"^moves/s\s+([\d.]+)", out, re.M)
    return float(found.group(1)) if found else None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", default="", help="modes.py options of side A (default: SQLite)")
    parser.add_argument("--b", default="", help="modes.py options of side B")
    parser.add_argument("--a-dir", default=str(ROOT), help="checkout that runs side A")
    parser.add_argument("--b-dir", default=str(ROOT), help="checkout that runs side B")
    parser.add_argument("load", nargs=argparse.REMAINDER, help="-- then load.py options")
    args = parser.parse_args(argv)
    load = args.load[1:] if args.load[:1] == ["--"] else args.load
    os.environ.setdefault("SKYMO_DB_POOL", "20")
    sides = {"A": (args.a_dir, args.a), "B": (args.b_dir, args.b)}
    runs = {name: side(directory, mode, load) for name, (directory, mode) in sides.items()}
    outs = {name: run.communicate()[0] for name, run in runs.items()}
    for name, out in outs.items():
        directory, mode = sides[name]
        print(f"== side {name}: {mode or '(SQLite)'} in {directory}")
        for line in out.splitlines():
            if line.startswith(SHOWN):
                print("  " + line)
    a, b = moves_per_s(outs["A"]), moves_per_s(outs["B"])
    if a and b:
        print(f"B / A moves/s: {b / a:.2f}")
    return max(run.returncode for run in runs.values())


if __name__ == "__main__":
    sys.exit(main())

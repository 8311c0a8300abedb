"""Paired screens of expert variants by points as well as wins (a script, not a test).

    python benchmarks/expert_points.py --against strong --seed fresh --games 1000 \
        --base on=0 on=0,end_edge=1.5 on=0,end_edge=3.0

Plays the same games as expert_screen.py (`--seed`-0, -1, ...; the expert in seat p1),
once with the `--base` settings and once with each variant (comma-separated
`name=value`s of EXPERT or LOOK), in turn in one process, and prints every 250 games
each variant's wins (with the sign test over the games only one of the two won) and
its point margin (p1's final total less its opponents' mean) against the base's, with
a paired z over all games. A variant changes few games' winner but most games' points,
so the margin sees a 1-point change in far fewer games than the wins do. Nothing is
written to disk: a stopped run starts again from its first game.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from contextlib import nullcontext
from functools import cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.bots import (
    columns,  # noqa: E402
    expert,  # noqa: E402
)
from app.cli.sim import play_game  # noqa: E402
from app.engine import RuleSet  # noqa: E402
from benchmarks.expert_screen import apply_settings  # noqa: E402


def play(bots: list[str], seed: str, i: int, settings: str) -> tuple[int, float]:
    """(1 if p1 won game `i` else 0, p1's total less its opponents' mean) with the
    constants `settings` (`table=FILE`: column values from FILE instead of the shipped
    ones, e.g. a table benchmarks/self_play.py wrote); the shipped ones are back after."""
    shipped = dict(expert.EXPERT), dict(expert.LOOK)
    parts = [s for s in settings.split(",") if s]
    files = [s.removeprefix("table=") for s in parts if s.startswith("table=")]
    apply_settings([s for s in parts if not s.startswith("table=")])
    try:
        with columns.using(_table(files[-1])) if files else nullcontext():
            game = play_game(RuleSet(), bots, f"{seed}-{i}", f"screen-{seed}-{i}")
    finally:
        expert.EXPERT.update(shipped[0])
        expert.LOOK.update(shipped[1])
    won = int(any(e["rank"] == 1 and e["player"] == "p1" for e in game.ranking()))
    others = [t for p, t in game.totals.items() if p != "p1"]
    return won, game.totals["p1"] - sum(others) / len(others)


@cache
def _table(path: str) -> dict:
    return columns.from_json(Path(path).read_text())


def compare(base: list[tuple[int, float]], variant: list[tuple[int, float]]) -> str:
    """The variant against the base over the same games: wins and points."""
    n = len(base)
    gained = sum(1 for b, v in zip(base, variant, strict=True) if v[0] > b[0])
    lost = sum(1 for b, v in zip(base, variant, strict=True) if v[0] < b[0])
    z_wins = (gained - lost) / math.sqrt(gained + lost) if gained + lost else 0.0
    # points a game the variant's margin was lower (better) than the base's
    better = [b[1] - v[1] for b, v in zip(base, variant, strict=True)]
    mean = sum(better) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in better) / max(1, n - 1))
    z_points = mean / (sd / math.sqrt(n)) if sd else 0.0
    wins = sum(v[0] for v in variant) / n
    return (
        f"{wins:.1%} (won only by it {gained}, only by the base {lost}, z {z_wins:+.2f}); "
        f"{mean:+.2f} points a game better (z {z_points:+.2f})"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="+", help="name=value,name=value ...")
    parser.add_argument("--base", default="", help="settings of the base (default: shipped)")
    parser.add_argument("--against", default="greedy")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--first", type=int, default=0, help="index of the first game")
    parser.add_argument("--seed", default="tune")
    args = parser.parse_args(argv)
    bots = ["expert"] + [args.against] * (args.players - 1)
    runs = [args.base, *args.variants]
    results: dict[int, list[tuple[int, float]]] = {k: [] for k in range(len(runs))}
    start = time.process_time()
    for n, i in enumerate(range(args.first, args.first + args.games), 1):
        for k, settings in enumerate(runs):
            results[k].append(play(bots, args.seed, i, settings))
        if n % 250 == 0 or n == args.games:
            base = results[0]
            print(
                f"-- {n} games, {time.process_time() - start:.0f} s CPU; base {args.base!r}: "
                f"{sum(b[0] for b in base) / n:.1%}, margin {sum(b[1] for b in base) / n:+.2f}"
            )
            for k, settings in enumerate(args.variants, 1):
                print(f"   {settings}: {compare(base, results[k])}", flush=True)


if __name__ == "__main__":
    main()

"""Bot decision time (a script, not a test): `python benchmarks/bot_bench.py`.

Plays seeded games with the named bot in seat p1 against the others and times every
decision of p1 by CPU time (time.process_time: one core, whatever else the machine
runs). Prints p50 / p95 / p99 / max per decision; the target for `expert` is a p99 of
at most 50 ms (bots run on the game server, between people's moves).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.bots.registry import BOTS  # noqa: E402
from app.cli.sim import seat_players  # noqa: E402
from app.engine import GAME_OVER, ROUND_OVER, SETUP, Game, RuleSet, view  # noqa: E402


def deciders(game: Game, limit: int = 20_000):
    """Who decides next, decision after decision, until the game is over (rounds are
    started as they end; at most `limit` decisions). The caller applies each move."""
    for _ in range(limit):
        if game.phase == ROUND_OVER:
            game.start_next_round()
        if game.phase == GAME_OVER:
            return
        rnd = game.round
        if game.phase == SETUP:
            yield next(p for p in rnd.seating if rnd.setup_left.get(p, 0) > 0)
        else:
            yield rnd.turn


def timed_game(bots: list[str], seed: str, times: list[float]) -> None:
    """One whole game; the CPU time of each of p1's decisions is added to `times`."""
    game = Game(seat_players(bots), RuleSet(), seed=seed)
    rng = random.Random(f"{seed}:bots")
    policy = {f"p{k}": BOTS[b] for k, b in enumerate(bots, 1)}
    for pid in deciders(game):
        data = view(game, pid)
        started = time.process_time()
        action = policy[pid](data, rng)
        if pid == "p1":
            times.append(time.process_time() - started)
        game.apply(pid, action)


def percentile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bot", default="expert", choices=sorted(BOTS))
    parser.add_argument("--against", default="greedy,greedy,greedy")
    parser.add_argument("--games", type=int, default=100)
    args = parser.parse_args(argv)
    bots = [args.bot, *args.against.split(",")]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Python {sys.version.split()[0]}, one process; load average before: {load}")
    times: list[float] = []
    for i in range(args.games):
        timed_game(bots, f"bot-bench-{i}", times)
    times.sort()
    ms = [t * 1000 for t in times]
    print(
        f"{args.bot} vs {', '.join(bots[1:])}: {len(ms)} decisions in {args.games} games; "
        f"CPU ms per decision p50 {percentile(ms, 0.5):.2f}, p95 {percentile(ms, 0.95):.2f}, "
        f"p99 {percentile(ms, 0.99):.2f}, max {ms[-1]:.2f}"
    )


if __name__ == "__main__":
    main()

"""Engine and bot benchmark (a script, not a test): `python benchmarks/engine_bench.py`.

Prints
- speed: full 4-player games of greedy bots per second on one core, by CPU time (the
  machine is shared: wall time depends on the others' load) (target: >= 300);
- win rates over seeded games: greedy vs random (2 players) and strong vs three greedy
  (4 players; chance is 25%, target >= 40%).

A win is rank 1 in the final ranking; players sharing the lowest total each count a win.
Every game is seeded, so the win rates are the same on every run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.cli.sim import play_game  # noqa: E402
from app.engine import RuleSet  # noqa: E402


def speed(games: int) -> None:
    if games <= 0:
        return
    rules = RuleSet()
    bots = ["greedy"] * 4
    play_game(rules, bots, "warm-up")
    wall, cpu = time.perf_counter(), time.process_time()
    turns = 0
    for i in range(games):
        game = play_game(rules, bots, f"speed-{i}")
        turns += sum(len(r.moves) for r in game.rounds)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(
        f"speed: {games / cpu:.1f} full 4-player greedy games/s by CPU time "
        f"({games} games in {cpu:.2f} s CPU, {wall:.2f} s wall; "
        f"{turns / games:.0f} recorded moves per game)"
    )


def win_rate(bots: list[str], games: int, label: str) -> None:
    if games <= 0:
        return
    rules = RuleSet()
    wins = 0
    started = time.perf_counter()
    for i in range(games):
        ranking = play_game(rules, bots, f"bench-{i}").ranking()
        wins += any(e["player"] == "p1" and e["rank"] == 1 for e in ranking)
    elapsed = time.perf_counter() - started
    print(
        f"{label}: {bots[0]} (seat p1) wins {wins}/{games} = {wins / games:.1%} "
        f"of {len(bots)}-player games vs {', '.join(bots[1:])} ({elapsed:.0f} s)"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speed-games", type=int, default=300)
    parser.add_argument("--two-player-games", type=int, default=1000)
    parser.add_argument("--four-player-games", type=int, default=2000)
    args = parser.parse_args(argv)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Python {sys.version.split()[0]}, one process; load average before: {load}")
    speed(args.speed_games)
    win_rate(["greedy", "random"], args.two_player_games, "greedy vs random")
    win_rate(["strong", "greedy", "greedy", "greedy"], args.four_player_games, "strong vs greedy")
    print("wins: rank 1 in the final ranking; a shared first place is a win for each")


if __name__ == "__main__":
    main()

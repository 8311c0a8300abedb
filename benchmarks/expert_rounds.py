"""Where the expert's points come from, seat by seat (a script, not a test).

    python benchmarks/expert_rounds.py --against strong --games 300 --seed dg --set on=0

Plays the expert in seat p1 against `--against` bots (the games `--seed`-0, -1, ...,
as the simulation and the screens play them) and prints for each seat: games won, the
mean round score, the rounds it ended and how often it was penalised for it, and the
points its column (and row) clears removed a round. Then, for p1: its round margin (its
score less its opponents' mean) in the rounds it ended and in the others.

It answers questions a win rate cannot: on 2026-12-04 it showed that the
seat after the expert (p2) clears about 12 points a round against three strong bots,
where every other seat clears about 8.7 (the expert leaves on the discard pile the
cards that complete p2's columns; docs/figures.md, "Engine and bots").
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.cli.sim import play_game  # noqa: E402
from app.engine import RuleSet  # noqa: E402
from benchmarks.expert_screen import apply_settings  # noqa: E402


class Seats:
    """Per seat: wins, round scores, rounds ended, penalties, cleared points."""

    def __init__(self):
        self.wins = defaultdict(int)
        self.scores = defaultdict(list)
        self.ended = defaultdict(int)
        self.penalised = defaultdict(int)
        self.cleared = defaultdict(list)
        self.margins: dict[bool, list[float]] = {True: [], False: []}

    def add(self, game) -> None:
        for entry in game.ranking():
            self.wins[entry["player"]] += entry["rank"] == 1
        for rnd in game.rounds:
            if rnd.result is None:
                continue
            scores, ender = rnd.result["scores"], rnd.result["ender"]
            for p, score in scores.items():
                self.scores[p].append(score)
                grid = rnd.grids[p]
                # After scoring every card is face up: what no longer counts was cleared.
                self.cleared[p].append(sum(grid.values) - grid.score())
            if ender is not None:
                self.ended[ender] += 1
                self.penalised[ender] += game.penalised(rnd)
            others = [s for p, s in scores.items() if p != "p1"]
            self.margins[ender == "p1"].append(scores["p1"] - statistics.mean(others))

    def report(self, games: int) -> str:
        lines = ["seat  wins   round score  ended  penalised  cleared a round"]
        for p in sorted(self.scores):
            ended = self.ended[p]
            lines.append(
                f"{p:4}  {self.wins[p] / games:5.1%}  {statistics.mean(self.scores[p]):11.2f}"
                f"  {ended:5d}  {self.penalised[p] / max(1, ended):9.1%}"
                f"  {statistics.mean(self.cleared[p]):15.2f}"
            )
        for mine, label in ((True, "p1 ended"), (False, "another ended")):
            found = self.margins[mine]
            if found:
                lines.append(
                    f"p1's margin when {label}: {statistics.mean(found):+.2f} ({len(found)} rounds)"
                )
        return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default="strong")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--seed", default="rounds")
    parser.add_argument("--set", action="append", default=[], help="name=value (EXPERT, LOOK)")
    parser.add_argument("--bot", default="expert", help="the bot in seat p1")
    args = parser.parse_args(argv)
    apply_settings(args.set)
    seats = Seats()
    bots = [args.bot] + [args.against] * (args.players - 1)
    for i in range(args.games):
        seats.add(play_game(RuleSet(), bots, f"{args.seed}-{i}", f"rounds-{args.seed}-{i}"))
    print(seats.report(args.games))


if __name__ == "__main__":
    main()

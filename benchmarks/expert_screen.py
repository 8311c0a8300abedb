"""Paired screens of expert variants (a script, not a test).

    python benchmarks/expert_screen.py --set potential=1.0 --out pot.txt --games 400
    python benchmarks/expert_screen.py --compare base.txt pot.txt
    python benchmarks/expert_screen.py --set potential=1.0 --out pot.txt --base base.txt

With `--base`, the shipped expert and the variant play each game in turn (in one
process, one CPU), so both files hold the same games whenever the run is stopped, and a
run started again plays only the games a file does not hold yet.

Plays the expert in seat p1 against `--against` bots on the games `--seed`-0, -1, ...
(the same games `python -m app.cli.sim --seed` plays), with some of its constants changed
(EXPERT's mind or LOOK's look-ahead, by name), and writes one line per game: its index
and 1 if p1 won (rank 1, shared or not), else 0, as each game ends (a run stopped early
keeps what it played). `--compare` pairs two such files game by game: a variant changes
only some games' outcomes, so the games won by one and lost by the other say more than
two win rates (docs/figures.md, "Engine and bots": a 400-game win rate has about ±2.4 points of
noise). Screen on seeds other than the evaluation's (`eval`).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.bots import expert  # noqa: E402
from app.cli.sim import play_game  # noqa: E402
from app.engine import RuleSet  # noqa: E402


def apply_settings(settings: list[str]) -> None:
    """`name=value` for a constant of the expert's mind (EXPERT) or look-ahead (LOOK)."""
    for item in settings:
        name, _, text = item.partition("=")
        for table in (expert.EXPERT, expert.LOOK):
            if name in table:
                table[name] = _value(table[name], text)
                break
        else:
            raise SystemExit(f"--set {item}: no constant {name!r} in EXPERT or LOOK")


def _value(old, text: str):
    """`text` read as the kind of value the constant holds."""
    if isinstance(old, bool):
        return text.lower() in ("1", "true", "yes")
    return int(text) if isinstance(old, int) else float(text)


def outcomes(path: Path) -> dict[int, int]:
    """Game index -> 1 if p1 won, from a screen's file."""
    found = {}
    for line in path.read_text().splitlines():
        index, won = line.split()
        found[int(index)] = int(won)
    return found


def paired(base: dict[int, int], variant: dict[int, int]) -> dict:
    """Both files' win rates over the games both played, and the games only one won."""
    games = sorted(base.keys() & variant.keys())
    gained = sum(1 for i in games if variant[i] > base[i])
    lost = sum(1 for i in games if variant[i] < base[i])
    return {
        "games": len(games),
        "base": sum(base[i] for i in games),
        "variant": sum(variant[i] for i in games),
        "gained": gained,
        "lost": lost,
        # a sign test: standard errors by which the variant won more of the split games
        "z": (gained - lost) / math.sqrt(gained + lost) if gained + lost else 0.0,
    }


def won(bots: list[str], seed: str, i: int) -> int:
    """1 if p1 wins game `i` (rank 1, shared or not), else 0."""
    game = play_game(RuleSet(), bots, f"{seed}-{i}", f"screen-{seed}-{i}")
    return int(any(e["rank"] == 1 and e["player"] == "p1" for e in game.ranking()))


def screen(bots: list[str], seed: str, first: int, games: int, out: Path) -> int:
    """Wins over the games first..first+games-1; a game `out` already holds is not
    played again (a stopped run, started again, goes on where it stopped)."""
    done = outcomes(out) if out.exists() else {}
    wins = 0
    with out.open("a") as f:
        for i in range(first, first + games):
            if i not in done:
                done[i] = won(bots, seed, i)
                f.write(f"{i} {done[i]}\n")
                f.flush()
            wins += done[i]
    return wins


def screen_pairs(
    bots: list[str], seed: str, games: range, base: Path, out: Path, settings: list[str]
) -> None:
    """The shipped expert (into `base`) and the variant (`settings`, into `out`) on each
    game in turn; a game a file already holds is not played again."""
    shipped = dict(expert.EXPERT), dict(expert.LOOK)
    done = {path: outcomes(path) if path.exists() else {} for path in (base, out)}
    for i in games:
        for path in (base, out):
            if i in done[path]:
                continue
            if path is out:
                apply_settings(settings)
            try:
                result = won(bots, seed, i)
            finally:  # the next game starts from the shipped constants
                expert.EXPERT.update(shipped[0])
                expert.LOOK.update(shipped[1])
            with path.open("a") as f:
                f.write(f"{i} {result}\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", default=[], help="name=value (repeatable)")
    parser.add_argument("--against", default="greedy")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--first", type=int, default=0, help="index of the first game")
    parser.add_argument("--seed", default="screen")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--base", type=Path, help="also play the shipped expert, in turn")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BASE", "VARIANT"))
    args = parser.parse_args(argv)
    if args.compare:
        r = paired(*(outcomes(p) for p in args.compare))
        n = max(1, r["games"])
        print(
            f"{r['games']} games: {r['base'] / n:.1%} -> {r['variant'] / n:.1%} "
            f"(won only by the variant {r['gained']}, only by the base {r['lost']}, "
            f"z {r['z']:+.2f})"
        )
        return
    if args.out is None:
        parser.error("--out is needed to screen")
    bots = ["expert"] + [args.against] * (args.players - 1)
    if args.base is not None:
        games = range(args.first, args.first + args.games)
        screen_pairs(bots, args.seed, games, args.base, args.out, args.set)
        main(["--compare", str(args.base), str(args.out)])
        return
    apply_settings(args.set)
    wins = screen(bots, args.seed, args.first, args.games, args.out)
    print(f"expert vs {', '.join(bots[1:])}: {wins} of {args.games} games won")


if __name__ == "__main__":
    main()

"""Sweep the engine: `python -m app.cli.sweep --games 10000`.

Plays bot games over random rule sets (every option, 2 to 8 players, SWEEP_BOTS), half
the rounds dealt from decks stacked so that lines clear often, with players
forfeiting at random moments: during setup, holding a drawn card, out of turn,
between rounds. Every game must finish without an exception, every card must stay in
play, and every game's record must be well formed (a round's `starter` played its
first turn; read in order by a reader that knows no optional key, nobody who left is
seated or scored after leaving) and replay to the identical record. Game `i` of seed
`s` is the same game on every run, so `--seed s --first i --games 1` replays a failure
alone.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field

from app.bots.registry import BOTS
from app.engine import (
    DECK,
    GAME_OVER,
    GONE,
    ROUND_OVER,
    SETUP,
    Forfeit,
    Game,
    Penalty,
    Player,
    RuleSet,
    replay,
    to_record,
    view,
)

# The bots seated at random: a fixed list, so that the sweep plays the same games when a
# bot is added to BOTS (its tests rely on the games the CI seed plays).
SWEEP_BOTS = ("random", "greedy", "strong")

MAX_STEPS = 50_000  # per game; a long bot game takes a few thousand
PROGRESS_SECONDS = 5.0
TURN_MOVES = ("take_discard", "draw")


class SweepFailure(AssertionError):
    """A game broke a rule of the sweep (not an exception of the engine itself)."""


def random_rules(rng: random.Random) -> RuleSet:
    """Any rule set the host could choose; short games are likelier, to sweep more."""
    rows, cols = rng.choice([2, 3]), rng.choice([2, 3, 4])
    end_score = rng.choice([10, 20, 30, 50, 100]) if rng.random() < 0.9 else rng.randint(10, 300)
    if rng.random() < 0.01:
        end_score = 1000
    return RuleSet(
        rows=rows,
        cols=cols,
        initial_flips=rng.randint(0, min(4, rows * cols - 1)),
        end_score=end_score,
        clear_rows=rng.random() < 0.5,
        penalty=Penalty(
            rng.choice(["multiplier", "flat", "both"]), rng.randint(2, 5), rng.randint(1, 50)
        ),
        show_running_score=rng.random() < 0.5,
        reseat=rng.choice(["never", "round", "game"]),
    )


def random_table(rng: random.Random) -> tuple[RuleSet, list[Player], float]:
    """Rules, seats (each a bot) and how often someone forfeits, per step."""
    rules = random_rules(rng)
    n = rng.randint(2, 8)
    seats = [Player(f"p{k}", f"P{k}", rng.choice(SWEEP_BOTS)) for k in range(1, n + 1)]
    forfeit_rate = rng.choice([0.0, 0.0, 0.001, 0.005, 0.02, 0.1])
    return rules, seats, forfeit_rate


def stacked_deck(rng: random.Random) -> list[int] | None:
    """Half the rounds: the engine's own shuffle (None). The other half: a shuffle that
    keeps equal cards near each other, so grids get many equal cards and lines clear
    often, several at once (rare with a fair shuffle, and where defects hid)."""
    if rng.random() < 0.5:
        return None
    rank = {v: rng.random() * 13 for v in set(DECK)}
    spread = rng.choice([0.3, 1.0, 3.0])
    return sorted(DECK, key=lambda v: rank[v] + rng.gauss(0, spread))


def cards_in_play(game: Game) -> Counter:
    rnd = game.round
    cards = Counter(rnd.discard) + Counter(rnd.draw_pile)
    if rnd.drawn is not None:
        cards[rnd.drawn] += 1
    for grid in rnd.grids.values():
        cards.update(v for v, s in zip(grid.values, grid.state, strict=True) if s != GONE)
    return cards


FULL_DECK = Counter(DECK)


def features(rules: RuleSet, seats: list[Player]) -> list[str]:
    """What a game exercises, for the sweep's coverage counts."""
    return [
        f"{len(seats)} players",
        f"grid {rules.rows}x{rules.cols}",
        f"{rules.initial_flips} initial flips",
        f"penalty {rules.penalty.mode}",
        f"reseat {rules.reseat}",
        f"clear_rows {'on' if rules.clear_rows else 'off'}",
        f"running score {'shown' if rules.show_running_score else 'hidden'}",
        *{f"bot {p.bot}" for p in seats},
    ]


def moment(game: Game, player: str) -> str:
    """When a forfeit happens, in the game's words."""
    rnd = game.round
    if game.phase == SETUP:
        return "forfeit during setup"
    if game.phase == ROUND_OVER:
        return "forfeit between rounds"
    if rnd.turn != player:
        return "forfeit out of turn"
    if rnd.drawn is not None:
        return "forfeit holding a drawn card"
    if rnd.first_turn is None:
        return "forfeit before the round's first turn"
    return "forfeit on their turn"


def play(index: int, seed: str, seen: Counter | None = None) -> Game:
    """Play sweep game `index` of `seed` to its end, checking it as it goes; `seen`
    counts the features and forfeit moments it exercised."""
    rng = random.Random(f"sweep:{seed}:{index}")
    rules, seats, forfeit_rate = random_table(rng)
    seen = Counter() if seen is None else seen
    seen.update(features(rules, seats))
    game = Game(seats, rules, seed=f"{seed}-{index}", game_id=f"sweep-{seed}-{index}", deal=False)
    game.start_next_round(deck=stacked_deck(rng))
    bots = {p.id: BOTS[p.bot] for p in seats}
    for _ in range(MAX_STEPS):
        if game.phase == GAME_OVER:
            return game
        if rng.random() < forfeit_rate:
            who = rng.choice(game.active())
            seen[moment(game, who)] += 1
            game.apply(who, Forfeit())
        elif game.phase == ROUND_OVER:
            game.start_next_round(deck=stacked_deck(rng))
        else:
            if game.phase == SETUP:  # reveals interleave in any order
                left = game.round.setup_left
                pid = rng.choice([p for p in game.active() if left.get(p, 0) > 0])
            else:
                pid = game.round.turn
            game.apply(pid, bots[pid](view(game, pid), rng))
        if cards_in_play(game) != FULL_DECK:
            raise SweepFailure(f"round {game.round.number}: cards lost or duplicated")
    raise SweepFailure(f"the game did not end in {MAX_STEPS} steps")


def check_record(game: Game) -> None:
    """The record is well formed and replays to the very same record."""
    record = json.loads(json.dumps(to_record(game)))
    if not record["final"]["ended"]:
        raise SweepFailure("the record says the game did not end")
    for rnd in record["rounds"]:
        turns = [m["player"] for m in rnd["moves"] if m["type"] in TURN_MOVES]
        if rnd["starter"] != (turns[0] if turns else None):
            first = turns[0] if turns else "nobody"
            raise SweepFailure(
                f"round {rnd['number']}: starter {rnd['starter']}, but {first} played first"
            )
    check_reading(record)
    again = json.loads(json.dumps(to_record(replay(json.loads(json.dumps(record))))))
    if again != record:
        for mine, theirs in zip(again["rounds"], record["rounds"], strict=False):
            if mine != theirs:
                raise SweepFailure(f"round {theirs['number']} replays differently")
        raise SweepFailure("the replay differs from the record")


def check_reading(record: dict) -> None:
    """Read the record as an implementation that knows no optional key does: each round
    dealt to its seating, its moves in order, then its result. Nobody who left is
    seated or scored after the forfeit that says so."""
    left: set[str] = set()
    for rnd in record["rounds"]:
        number = rnd["number"]
        if left & set(rnd["seating"]):
            raise SweepFailure(f"round {number}: {sorted(left)} seated after leaving")
        left |= {m["player"] for m in rnd["moves"] if m["type"] == "forfeit"}
        scored = left & set(rnd.get("result", {}).get("raw", {}))
        if scored:
            raise SweepFailure(f"round {number}: a result for {sorted(scored)}, who left")


@dataclass
class Sweep:
    seed: str
    games: int = 0
    rounds: int = 0
    forfeits: int = 0
    failures: list[tuple[int, str]] = field(default_factory=list)
    seen: Counter = field(default_factory=Counter)

    def run_one(self, index: int) -> None:
        try:
            game = play(index, self.seed, self.seen)
            check_record(game)
        except Exception as exc:  # noqa: BLE001 - every failure is reported, none stops the sweep
            where = traceback.extract_tb(exc.__traceback__)[-1]
            self.failures.append(
                (index, f"{type(exc).__name__}: {exc} ({where.filename}:{where.lineno})")
            )
        else:
            self.rounds += len(game.rounds)
            self.forfeits += len(game.forfeited)
        self.games += 1


def run(games: int, seed: str = "1", first: int = 0, progress=None) -> Sweep:
    """Sweep games first .. first+games-1; `progress(sweep, seconds)` every few seconds."""
    sweep = Sweep(seed)
    started = last = time.perf_counter()
    for index in range(first, first + games):
        sweep.run_one(index)
        now = time.perf_counter()
        if progress is not None and now - last >= PROGRESS_SECONDS:
            last = now
            progress(sweep, now - started, games)
    return sweep


def _progress(sweep: Sweep, seconds: float, total: int) -> None:
    rate = sweep.games / seconds
    eta = (total - sweep.games) / rate if rate else 0
    print(
        f"  {sweep.games}/{total} games, {len(sweep.failures)} failed, "
        f"{rate:.1f} games/s, about {eta:.0f} s left",
        file=sys.stderr,
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m app.cli.sweep",
        description="Random bot games over random rules, forfeits included, each replayed.",
    )
    parser.add_argument("--games", type=int, default=1000, help="games to play (default 1000)")
    parser.add_argument("--seed", default="1", help="seed of the sweep (default 1)")
    parser.add_argument("--first", type=int, default=0, help="index of the first game")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)
    if args.games < 1 or args.first < 0:
        parser.error("--games must be at least 1 and --first at least 0")
    started = time.perf_counter()
    sweep = run(args.games, args.seed, args.first, None if args.quiet else _progress)
    seconds = time.perf_counter() - started
    print(
        f"sweep seed {args.seed}: {sweep.games} games, {sweep.rounds} rounds, "
        f"{sweep.forfeits} forfeits, {len(sweep.failures)} failed, {seconds:.0f} s"
    )
    moments = sorted((k, n) for k, n in sweep.seen.items() if k.startswith("forfeit"))
    print("  " + ", ".join(f"{k[len('forfeit ') :]}: {n}" for k, n in moments))
    for index, error in sweep.failures:
        print(f"  game {index}: {error}")
        print(f"    again: python -m app.cli.sweep --seed {args.seed} --first {index} --games 1")
    return 1 if sweep.failures else 0


if __name__ == "__main__":
    sys.exit(main())

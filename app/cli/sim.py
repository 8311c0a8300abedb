"""Simulate bot games: `python -m app.cli.sim --players 4 --bots strong,greedy --games 500`.

Every game is seeded from --seed and its index, so the same arguments give the same
games and the same figures. With --out, each game is written as a `skymo.game/1`
record (docs/design.md, "Game records") named after its id.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

from app.bots.registry import BOTS, SIGHTED
from app.bots.sight import Sight
from app.engine import (
    GAME_OVER,
    PLAY,
    ROUND_OVER,
    SETUP,
    Draw,
    Game,
    Penalty,
    Player,
    RuleError,
    RuleSet,
    to_record,
    view,
)
from app.engine.plays import MOVE_KINDS, move_maker
from app.engine.rules import check_player_count

DEFAULT_MAX_TURNS = 20_000  # per game; bot games take a few hundred turns
PROGRESS_SECONDS = 3.0

# Rule fields (RuleError.field) and the options that set them.
OPTION_OF = {
    "players": "--players",
    "rows": "--rows",
    "cols": "--cols",
    "initial_flips": "--initial-flips",
    "end_score": "--end-score",
    "clear_rows": "--clear-rows",
    "penalty": "--penalty",
    "penalty.mode": "--penalty",
    "penalty.multiplier": "--multiplier",
    "penalty.flat": "--flat",
    "show_running_score": "--hide-running-score",
    "reseat": "--reseat",
}


def seat_players(bots: list[str]) -> list[Player]:
    """One player per seat, ids p1..pN, each played by the named bot."""
    return [Player(f"p{k}", f"{name.title()} {k}", name) for k, name in enumerate(bots, 1)]


def play_game(
    rules: RuleSet,
    bots: list[str],
    seed: int | str,
    game_id: str = "",
    max_turns: int = DEFAULT_MAX_TURNS,
) -> Game:
    """Play one whole game between bots (one per seat) and return it.

    The game is over unless `max_turns` turns were played first (the game is then
    returned as it stands). Bots only ever receive `view(game, player)`, or for those in
    SIGHTED a `Sight(game, player)`: the same public information, read in place."""
    unknown = [b for b in bots if b not in BOTS]
    if unknown:
        raise ValueError(f"unknown bot {unknown[0]!r}")
    # A game between bots makes no reference cycles (tests/test_sim.py checks it): the
    # cyclic collector would only re-scan the views' and bots' caches, about a fifth of
    # the time. It is paused while the game is played.
    paused = gc.isenabled()
    gc.disable()
    try:
        return _play(rules, bots, seed, game_id, max_turns)
    finally:
        if paused:
            gc.enable()


def _play(rules: RuleSet, bots: list[str], seed, game_id: str, max_turns: int) -> Game:
    players = seat_players(bots)
    game = Game(players, rules, seed=seed, game_id=game_id)
    rng = random.Random(f"{seed}:bots")
    # A bot that plays on a Sight reads the game in place (only what its player may
    # see); the others are handed a view.
    seats: dict[str, tuple[Callable, Sight | None]] = {
        p.id: (SIGHTED[p.bot], Sight(game, p.id)) if p.bot in SIGHTED else (BOTS[p.bot], None)
        for p in players
    }
    play = game.play
    # Game.play's function for each kind of move, found once (not on every move).
    makers = {kind: move_maker(kind) for kind in MOVE_KINDS}
    turns = 0
    while True:
        phase = game.phase
        rnd = game.rounds[-1]
        if phase == PLAY:
            # The turns of a round (most of the work: kept to the few steps it needs).
            while phase == PLAY:
                pid = rnd.turn
                bot, sight = seats[pid]
                action = bot(sight or view(game, pid), rng)
                kind = type(action)
                makers[kind](game, pid, action)
                phase = game.phase
                if kind is not Draw:
                    turns += 1
                    if turns >= max_turns:
                        return game
        elif phase == GAME_OVER:
            return game
        elif phase == ROUND_OVER:
            game.start_next_round()
        elif phase == SETUP:
            for pid in rnd.seating:
                bot, sight = seats[pid]
                while game.phase == SETUP and rnd.setup_left.get(pid, 0) > 0:
                    play(pid, bot(sight or view(game, pid), rng))
        else:
            raise AssertionError(f"a bot game in phase {phase}")


# ----- the command -------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    def fail(self, option: str, message: str):
        self.error(f"{option}: {message}")


def _parser() -> _Parser:
    d = RuleSet()
    p = _Parser(
        prog="skymo",
        description="Play Skymo games between bots and report how each seat did.",
    )
    p.add_argument(
        "--players",
        type=int,
        help="seats, 2 to 8 (default: one per bot named in --bots, at least 2)",
    )
    p.add_argument(
        "--bots",
        default="greedy",
        help=f"bot per seat, comma separated ({', '.join(BOTS)}); one name fills every seat",
    )
    p.add_argument("--games", type=int, default=100, help="games to play (default 100)")
    p.add_argument("--seed", default="1", help="seed of the whole run (default 1)")
    p.add_argument(
        "--first",
        type=int,
        default=0,
        help="index of the first game (split a run: --first 1000 --games 1000 plays the "
        "second half of --games 2000's games)",
    )
    p.add_argument("--rows", type=int, default=d.rows, help="grid rows, 2-3")
    p.add_argument("--cols", type=int, default=d.cols, help="grid columns, 2-4")
    p.add_argument(
        "--initial-flips",
        type=int,
        default=d.initial_flips,
        help="cards each player turns at setup",
    )
    p.add_argument(
        "--end-score", type=int, default=d.end_score, help="a total this high ends the game"
    )
    p.add_argument("--clear-rows", action="store_true", help="rows of equal cards clear too")
    p.add_argument("--penalty", default=d.penalty.mode, help="multiplier, flat or both")
    p.add_argument(
        "--multiplier", type=int, default=d.penalty.multiplier, help="penalty multiplier, 2-5"
    )
    p.add_argument("--flat", type=int, default=d.penalty.flat, help="flat penalty, 1-50")
    p.add_argument("--hide-running-score", action="store_true", help="totals shown only at the end")
    p.add_argument("--reseat", default=d.reseat, help="never, round or game")
    p.add_argument("--out", type=Path, help="write one skymo.game/1 record per game here")
    p.add_argument(
        "--max-turns",
        type=int,
        default=DEFAULT_MAX_TURNS,
        help=f"cut a game after this many turns (default {DEFAULT_MAX_TURNS})",
    )
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return p


def _rules_from(args, parser: _Parser) -> RuleSet:
    if args.players is None:
        args.players = max(2, len(args.bots.split(",")))
    try:
        check_player_count(args.players)
        return RuleSet(
            rows=args.rows,
            cols=args.cols,
            initial_flips=args.initial_flips,
            end_score=args.end_score,
            clear_rows=args.clear_rows,
            penalty=Penalty(args.penalty, args.multiplier, args.flat),
            show_running_score=not args.hide_running_score,
            reseat=args.reseat,
        )
    except RuleError as exc:
        parser.fail(OPTION_OF.get(exc.field, exc.field), exc.message)
        raise  # unreachable: fail() exits


def _bots_from(args, parser: _Parser) -> list[str]:
    names = [n.strip() for n in args.bots.split(",")]
    for name in names:
        if name not in BOTS:
            parser.fail("--bots", f"unknown bot {name!r} (choose from {', '.join(BOTS)})")
    if len(names) == 1:
        names = names * args.players
    if len(names) != args.players:
        parser.fail("--bots", f"give one bot or {args.players} (one per seat), not {len(names)}")
    return names


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    rules = _rules_from(args, parser)
    bots = _bots_from(args, parser)
    if args.games < 1:
        parser.fail("--games", "must be at least 1")
    if args.max_turns < 1:
        parser.fail("--max-turns", "must be at least 1")
    if args.first < 0:
        parser.fail("--first", "must be 0 or more")
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,40}", args.seed):
        parser.fail("--seed", "use up to 40 letters, digits, '.', '_' or '-'")
    if args.out is not None:
        try:
            args.out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            parser.fail("--out", f"cannot create {args.out}: {exc.strerror}")

    stats = Stats(bots)
    started = last_report = time.perf_counter()
    for i in range(args.first, args.first + args.games):
        game_id = f"sim-{args.seed}-{i}"
        game = play_game(rules, bots, f"{args.seed}-{i}", game_id, args.max_turns)
        stats.add(game)
        if args.out is not None:
            path = args.out / f"{game_id}.json"
            path.write_text(json.dumps(to_record(game), separators=(",", ":")))
        now = time.perf_counter()
        done = i + 1 - args.first
        if not args.quiet and now - last_report >= PROGRESS_SECONDS and done < args.games:
            last_report = now
            rate = done / (now - started)
            print(
                f"  {done}/{args.games} games ({rate:.0f} games/s)",
                file=sys.stderr,
                flush=True,
            )
    elapsed = time.perf_counter() - started
    print(stats.report(rules, args.seed))
    print(f"speed: {args.games / elapsed:.1f} games/s ({elapsed:.2f} s)")
    return 0


class Stats:
    """Win counts and scores per seat. A win is rank 1 in the final ranking: players
    sharing the lowest total each count a win."""

    def __init__(self, bots: list[str]):
        self.bots = bots
        self.seats = [p.id for p in seat_players(bots)]
        self.games = 0
        self.rounds = 0
        self.wins = dict.fromkeys(self.seats, 0)
        self.round_scores = dict.fromkeys(self.seats, 0)
        self.rounds_played = dict.fromkeys(self.seats, 0)
        self.cut: list[str] = []

    def add(self, game: Game) -> None:
        if not game.is_over:
            self.cut.append(game.id)
            return
        for rnd in game.rounds:
            if rnd.result is None:
                continue
            for p, score in rnd.result["scores"].items():
                self.round_scores[p] += score
                self.rounds_played[p] += 1
        self.games += 1
        self.rounds += len(game.rounds)
        for entry in game.ranking():
            if entry["rank"] == 1:
                self.wins[entry["player"]] += 1

    def report(self, rules: RuleSet, seed: str) -> str:
        games = self.games
        lines = [
            f"{len(self.seats)} players, {games} games, seed {seed}, rules: {rules.summary()}",
            f"{'seat':<5} {'bot':<8} {'wins':>6} {'win rate':>9} {'mean round score':>17}",
        ]
        for seat, bot in zip(self.seats, self.bots, strict=True):
            rate = self.wins[seat] / games if games else 0.0
            played = self.rounds_played[seat]
            mean = self.round_scores[seat] / played if played else 0.0
            lines.append(f"{seat:<5} {bot:<8} {self.wins[seat]:>6} {rate:>9.1%} {mean:>17.2f}")
        kinds = list(dict.fromkeys(self.bots))
        lines.append("per bot (win rate per seat of that bot):")
        for kind in kinds:
            seats = [s for s, b in zip(self.seats, self.bots, strict=True) if b == kind]
            wins = sum(self.wins[s] for s in seats)
            played = sum(self.rounds_played[s] for s in seats)
            total = sum(self.round_scores[s] for s in seats)
            rate = wins / (games * len(seats)) if games else 0.0
            mean = total / played if played else 0.0
            lines.append(
                f"  {kind:<8} {len(seats)} seat(s) win rate {rate:.1%}, mean round score {mean:.2f}"
            )
        lines.append(
            f"mean rounds per game: {self.rounds / games:.2f}" if games else "no game finished"
        )
        lines.append("wins: rank 1 in the final ranking; a shared first place is a win for each")
        if self.cut:
            lines.append(f"cut by --max-turns ({len(self.cut)} games, not counted above):")
            lines.extend(f"  {game_id}" for game_id in self.cut)
        return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

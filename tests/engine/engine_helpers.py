"""Helpers shared by the engine tests: fixed decks, illegal-move checks, invariants and
random play-outs."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from app.engine import (
    DECK,
    DOWN,
    GONE,
    PLAY,
    ROUND_OVER,
    SETUP,
    UP,
    DiscardDrawn,
    Draw,
    Forfeit,
    Game,
    IllegalMove,
    KeepDrawn,
    Penalty,
    Player,
    Reveal,
    RuleSet,
    action_from_dict,
    view,
)
from app.engine.state import clearing_cells

NAMES = ["Ann", "Bob", "Cat", "Dan", "Eve", "Fay", "Gus", "Hal"]

# An independent implementation's records, kept in the repository (see its README).
CONFORMANCE = Path(__file__).resolve().parents[1] / "data" / "conformance" / "records.jsonl"


def players(n: int) -> list[Player]:
    """p1..pn named Ann, Bob, ... in lobby order."""
    return [Player(f"p{i + 1}", NAMES[i]) for i in range(n)]


def _flat(grid) -> list[int]:
    if grid and isinstance(grid[0], list | tuple):
        return [v for row in grid for v in row]
    return list(grid)


def build_deck(grids, discard: int, draw=(), rules: RuleSet | None = None) -> list[int]:
    """A full 150-card deck in dealing order: each grid (flat or as rows, in seating
    order), the discard card, then the draw pile next-card-first: `draw` followed by
    every card of DECK not used yet."""
    rules = rules or RuleSet()
    used: list[int] = []
    for grid in grids:
        flat = _flat(grid)
        assert len(flat) == rules.cells, f"a grid needs {rules.cells} cards, got {flat}"
        used.extend(flat)
    used.append(discard)
    used.extend(draw)
    rest = Counter(DECK)
    rest.subtract(Counter(used))
    assert all(n >= 0 for n in rest.values()), f"more cards than the deck has: {rest}"
    deck = used + sorted(rest.elements())
    assert sorted(deck) == sorted(DECK)
    return deck


def fixed_game(
    grids,
    discard: int,
    draw=(),
    *,
    rules: RuleSet | None = None,
    n: int | None = None,
    seating: list[str] | None = None,
    seed: int | str = 0,
) -> Game:
    """A game dealt from a chosen deck. `grids` follow `seating` (default lobby order)."""
    rules = rules or RuleSet()
    n = n or len(grids)
    game = Game(players(n), rules, seed, deal=False)
    seating = seating or [f"p{i + 1}" for i in range(n)]
    game.start_next_round(seating=seating, deck=build_deck(grids, discard, draw, rules))
    return game


def reveal_all(game: Game, flips: dict[str, list[tuple[int, int]]]) -> None:
    for p, cells in flips.items():
        for r, c in cells:
            game.apply(p, Reveal(r, c))


def snapshot(game: Game) -> str:
    return json.dumps(game.to_dict(), sort_keys=True)


def assert_illegal(game: Game, player: str, action, reason: str) -> IllegalMove:
    """The move raises IllegalMove whose reason contains `reason`; nothing changes."""
    before = snapshot(game)
    with pytest.raises(IllegalMove) as info:
        game.apply(player, action)
    assert reason in info.value.reason, info.value.reason
    assert info.value.reason == str(info.value)
    assert snapshot(game) == before
    return info.value


def grid_values(game: Game, p: str, rnd=None) -> list[list[int | None]]:
    """Rows of values, None for a cleared card."""
    grid = (rnd or game.round).grids[p]
    cells = [None if s == GONE else v for v, s in zip(grid.values, grid.state, strict=True)]
    return [cells[r * grid.cols : (r + 1) * grid.cols] for r in range(grid.rows)]


def grid_states(game: Game, p: str) -> list[list[int]]:
    grid = game.round.grids[p]
    return [grid.state[r * grid.cols : (r + 1) * grid.cols] for r in range(grid.rows)]


# ----- invariants ---------------------------------------------------------------------


def cards_in_play(game: Game) -> list[int]:
    rnd = game.round
    cards = list(rnd.discard) + list(rnd.draw_pile)
    if rnd.drawn is not None:
        cards.append(rnd.drawn)
    for grid in rnd.grids.values():
        cards.extend(v for v, s in zip(grid.values, grid.state, strict=True) if s != GONE)
    return cards


def check_view(game: Game, text: bool = False) -> None:
    """No view shows a face-down value, the draw pile or another player's drawn card.
    `text` also serialises every view to JSON (slower)."""
    rnd = game.round
    for me in [None, *(p.id for p in game.players)]:
        data = view(game, me)
        vr = data["round"]
        if text:
            assert "draw_pile" not in json.dumps(data)
        legal = game.legal_actions(me) if me is not None else []
        assert [action_from_dict(a) for a in data["legal"]] == legal
        assert "draw_pile" not in vr
        for p, rows in vr["grids"].items():
            grid = rnd.grids[p]
            for r, row in enumerate(rows):
                for c, cell in enumerate(row):
                    state = grid.state[r * grid.cols + c]
                    if state == DOWN:
                        assert cell == {"state": "down"}
                    elif state == GONE:
                        assert cell == {"state": "gone"}
                    else:
                        assert cell == {"state": "up", "value": grid.values[r * grid.cols + c]}
        if rnd.drawn is not None and me is not None and me == rnd.turn:
            assert vr["drawn"] == rnd.drawn
        else:
            assert vr["drawn"] is None
        assert vr["has_drawn"] == (rnd.drawn is not None)
        assert vr["draw_count"] == len(rnd.draw_pile)


def complete_lines(grid, clear_rows: bool) -> list[range]:
    """The lines of `grid` that clear now (each move clears them at once: none is left)."""
    rows, cols = grid.rows, grid.cols
    lines = [range(c, rows * cols, cols) for c in range(cols)]
    if clear_rows:
        lines += [range(r * cols, r * cols + cols) for r in range(rows)]
    return [line for line in lines if clearing_cells(line, grid.values, grid.state) is not None]


def check_invariants(game: Game, previous: dict | None = None, views: bool = True) -> dict:
    """Check the state after a move. `previous` is what the last call returned: the
    grids then, to check that no card moved. Returns the grids now."""
    rnd = game.round
    cards = cards_in_play(game)
    assert len(cards) == 150
    assert Counter(cards) == Counter(DECK)
    assert set(rnd.grids) == set(rnd.seating)
    now = {p: (list(g.values), list(g.state)) for p, g in rnd.grids.items()}
    if previous is not None and previous["round"] == rnd.number:
        changed = 0
        for p, (values, state) in now.items():
            old_values, old_state = previous["grids"][p]
            for i, (v, s) in enumerate(zip(values, state, strict=True)):
                ov, os_ = old_values[i], old_state[i]
                if os_ == GONE:
                    assert s == GONE and v == ov, "a cleared card came back"
                elif os_ == UP:
                    assert s != DOWN, "a face-up card went face down"
                if v != ov:
                    assert os_ != GONE
                    assert s in (UP, GONE), "a placed card is face up"
                    changed += 1
        assert changed <= 1, "one move replaces at most one card"
    for p, grid in rnd.grids.items():
        assert not complete_lines(grid, game.rules.clear_rows), f"{p} kept a complete line"
    if game.phase == PLAY:
        assert rnd.turn in rnd.seating and rnd.turn not in game.forfeited
    if game.phase == SETUP:
        assert rnd.turn is None and rnd.drawn is None
    if rnd.ender is not None:
        # only a grid without face-down cards ends a round; the ender plays no more
        assert rnd.grids[rnd.ender].face_down_count() == 0
        assert rnd.ender not in rnd.last_turns
        if game.phase == PLAY:
            assert all(p in rnd.seating and p not in game.forfeited for p in rnd.last_turns)
            assert rnd.turn == rnd.last_turns[0]
    if rnd.result is not None:
        result = rnd.result
        for p, raw in result["raw"].items():
            assert raw == rnd.grids[p].score()
            assert rnd.grids[p].face_down_count() == 0
        playing = set(rnd.seating) - set(game.forfeited)
        assert playing <= set(result["raw"]) <= set(rnd.seating)
    # Totals are the sums of the round scores.
    for p in game.totals:
        assert game.totals[p] == sum(
            r.result["scores"].get(p, 0) for r in game.rounds if r.result is not None
        )
    if views:
        check_view(game)
    return {"round": rnd.number, "grids": now}


# ----- random play --------------------------------------------------------------------


def random_rules(rng: random.Random) -> RuleSet:
    rows = rng.choice([2, 3])
    cols = rng.choice([2, 3, 4])
    mode = rng.choice(["multiplier", "flat", "both"])
    return RuleSet(
        rows=rows,
        cols=cols,
        initial_flips=rng.randint(0, min(4, rows * cols - 1)),
        end_score=rng.choice([10, 20, 30, 50, 100]),
        clear_rows=rng.random() < 0.5,
        penalty=Penalty(mode, rng.randint(2, 5), rng.randint(1, 50)),
        show_running_score=rng.random() < 0.7,
        reseat=rng.choice(["never", "round", "game"]),
    )


def random_step(game: Game, rng: random.Random, forfeit_rate: float = 0.0):
    """One random legal step. Returns (player, action), or ("next", None) for a new
    round. The game must not be over."""
    if game.phase == ROUND_OVER:
        if rng.random() < forfeit_rate:
            p = rng.choice(game.active())
            return p, Forfeit()
        return "next", None
    if game.phase == SETUP:
        movers = [p for p in game.round.seating if game.legal_actions(p)]
    else:
        movers = [game.round.turn]
    assert movers, "somebody must be able to move"
    if rng.random() < forfeit_rate:
        return rng.choice(game.active()), Forfeit()
    p = rng.choice(movers)
    return p, rng.choice(game.legal_actions(p))


def do_step(game: Game, step) -> None:
    p, action = step
    if p == "next":
        game.start_next_round()
    else:
        game.apply(p, action)


def load_conformance() -> list[dict]:
    assert CONFORMANCE.is_file(), f"missing conformance records at {CONFORMANCE}"
    with CONFORMANCE.open() as fh:
        return [json.loads(line) for line in fh if line.strip()]


def ranking_key(ranking: list[dict]) -> list[tuple]:
    """Ties within one rank carry no order: compare as sets of (rank, player, total)."""
    return sorted((e["rank"], e["player"], e["total"]) for e in ranking)


# ----- scripted turns -----------------------------------------------------------------


def flip_turn(game: Game, p: str, cell) -> None:
    """Draw, discard the drawn card and turn `cell` (None: nothing left to turn)."""
    game.apply(p, Draw())
    game.apply(p, DiscardDrawn(tuple(cell) if cell is not None else None))


def keep_turn(game: Game, p: str, cell) -> int:
    """Draw and keep the card at `cell`; returns the drawn card."""
    game.apply(p, Draw())
    card = game.round.drawn
    game.apply(p, KeepDrawn(*cell))
    return card


def first_down(game: Game, p: str):
    grid = game.round.grids[p]
    for i, s in enumerate(grid.state):
        if s == DOWN:
            return divmod(i, grid.cols)
    return None


HIDDEN = (1, 1)


def quick_rules(**kwargs) -> RuleSet:
    """2×2 grids with 3 cards turned at setup: only (1, 1) stays face down."""
    return RuleSet(**{"rows": 2, "cols": 2, "initial_flips": 3, **kwargs})


def quick_game(grids, discard: int = 7, draw=(), *, rules=None, seating=None, seed=0) -> Game:
    """A 2×2 game past its setup: every player turned all but (1, 1)."""
    rules = rules or quick_rules()
    game = fixed_game(grids, discard, draw, rules=rules, seating=seating, seed=seed)
    for p in game.round.seating:
        for cell in [(0, 0), (0, 1), (1, 0)]:
            game.apply(p, Reveal(*cell))
    assert game.phase == PLAY
    return game


def flip_until_round_end(game: Game) -> None:
    """Every player in turn draws, discards and turns their first face-down card."""
    number = game.round.number
    for _ in range(1000):
        if game.phase != PLAY or game.round.number != number:
            return
        p = game.round.turn
        flip_turn(game, p, first_down(game, p))
    raise AssertionError("the round did not end")


# ----- the scenarios' two-player table ---------------------------------------------
# Two 3×4 grids with no two equal cards in a column.
A = [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]
B = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]


def two_player_game(draw=(9, 3, 8, 6, 2), discard=5, seed=0) -> Game:
    """Ann (p1) turned 1 and 2 (sum 3), Bob (p2) 0 and 1 (sum 1): Ann starts."""
    game = fixed_game([A, B], discard, draw, seed=seed)
    for p in ("p1", "p2"):
        game.apply(p, Reveal(0, 0))
        game.apply(p, Reveal(0, 1))
    assert game.phase == PLAY and game.round.turn == "p1"
    return game


def reveal(game, p, *cells):
    for cell in cells:
        game.apply(p, Reveal(*cell))


def state_at(game, p, r, c):
    grid = game.round.grids[p]
    return grid.state[r * grid.cols + c]


def value_at(game, p, r, c):
    grid = game.round.grids[p]
    return grid.values[r * grid.cols + c]


def quick_record_game() -> Game:
    """Ann and a bot on 2×2 grids: Ann ends at once, the bot flips its last card."""
    rules = quick_rules(end_score=50)
    game = Game(
        [Player("p1", "Ann"), Player("p2", "Robot", "greedy")], rules, "s", "K7QX2M9A", deal=False
    )
    deck = build_deck([[[12, 0], [1, -2]], [[1, 2], [3, 4]]], 7, [9, 5], rules)
    game.start_next_round(seating=["p1", "p2"], deck=deck)
    for p, cells in (("p2", [(0, 0), (1, 0)]), ("p1", [(0, 0), (0, 1), (1, 0)]), ("p2", [(0, 1)])):
        for cell in cells:
            game.apply(p, Reveal(*cell))
    flip_turn(game, "p1", (1, 1))
    keep_turn(game, "p2", (0, 0))
    return game

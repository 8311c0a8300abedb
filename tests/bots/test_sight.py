"""Sight (app/engine/sight.py): a player's public information read in place from the
game. It must answer exactly what that player's view shows, never a hidden card, and
the greedy bot must play the same move on it as on a view."""

from __future__ import annotations

import json
import random

import pytest

from app.bots.greedy import greedy_bot, greedy_play
from app.bots.reading import flat_cells, is_stalling, moves, opponents_of
from app.bots.registry import SIGHTED
from app.bots.sight import Sight
from app.cli import sim
from app.engine import GAME_OVER, PLAY, ROUND_OVER, Game, RuleSet, to_record, view
from tests.engine.engine_helpers import do_step, players, random_rules, random_step
from tests.engine.test_view import SECRET, with_secrets

# Everything a bot may ask a Sight. A new question needs its own check below.
QUESTIONS = {
    "me",
    "rules",
    "lines",
    "stage",
    "turn",
    "choices",
    "grid",
    "cells",
    "discard_top",
    "drawn",
    "ender",
    "stalling",
    "opponents",
}


def answers(sight: Sight, game: Game) -> dict:
    """Every answer of `sight` now, as plain data."""
    rnd = game.round
    out = {
        "me": sight.me,
        "rules": [sight.rules.rows, sight.rules.cols, sight.rules.clear_rows],
        "stage": sight.stage(),
        "cells": {p: list(sight.cells(p)) for p in rnd.seating},
        "discard_top": sight.discard_top(),
        "drawn": sight.drawn(),
        "ender": sight.ender(),
        "stalling": sight.stalling(),
        "opponents": sight.opponents(),
    }
    if sight.me in rnd.grids:
        mine = sight.grid(sight.me)
        out["mine"] = [list(mine.cells), list(mine.down), list(mine.kept)]
    stage, mine, card = sight.turn()
    out["turn"] = [stage, card, mine and [list(mine.cells), list(mine.down), list(mine.kept)]]
    return out


def test_a_sight_asks_nothing_more_than_these_questions():
    game = Game(players(2), seed=1)
    public = {name for name in dir(Sight(game, "p1")) if not name.startswith("_")}
    assert public == QUESTIONS


def offered(choices, kind: str, i: int | None):
    """The action of `kind` at cell `i` in a Sight's `choices`."""
    if kind == "draw":
        return choices.draw
    if kind == "discard_drawn":
        return choices.discard_nothing if i is None else choices.flip[i]
    return {"reveal": choices.reveal, "take_discard": choices.take, "keep_drawn": choices.keep}[
        kind
    ][i]


def check_against_view(game: Game) -> int:
    """Each seated player's Sight says what their view shows; returns the checks made."""
    checked = 0
    rnd = game.round
    for p in rnd.seating:
        if p in game.forfeited:
            continue
        sight, seen = Sight(game, p), view(game, p)
        legal = moves(seen)
        assert sight.stage() == legal.stage
        for q in rnd.seating:
            assert sight.cells(q) == flat_cells(seen["round"]["grids"][q])
        assert sight.discard_top() == seen["round"]["discard_top"]
        assert sight.drawn() == seen["round"]["drawn"]
        assert sight.ender() == seen["round"]["ender"]
        assert sight.stalling() == is_stalling(seen["round"])
        assert sight.opponents() == opponents_of(seen)
        rules = seen["rules"]
        assert (sight.rules.rows, sight.rules.cols, sight.rules.clear_rows) == (
            rules["rows"],
            rules["cols"],
            rules["clear_rows"],
        )
        # The actions a Sight offers its bot are the very ones the engine lists.
        named = [offered(sight.choices, kind, i) for kind, ts in legal.targets.items() for i in ts]
        assert sorted(map(repr, named)) == sorted(map(repr, legal.actions))
        mine = sight.grid(p)
        # The one question before a move: the stage, my grid, the card I would place.
        card = {"take": sight.discard_top(), "drawn": sight.drawn()}.get(legal.stage)
        assert sight.turn() == (legal.stage, mine if legal.stage else None, card)
        if legal.stage == "setup":
            assert mine.down == legal.of("reveal")
        elif legal.stage == "take":
            assert mine.kept == legal.of("take_discard")
        elif legal.stage == "drawn":
            assert mine.kept == legal.of("keep_drawn")
            assert mine.down == legal.of("discard_drawn")
        checked += 1
    return checked


def test_a_sight_says_what_the_view_shows_over_random_games():
    checked = 0
    for seed in range(12):
        rng = random.Random(seed)
        game = Game(players(rng.randint(2, 8)), random_rules(rng), seed=f"sight-{seed}")
        while not game.is_over:
            if game.phase in (PLAY, "setup"):
                checked += check_against_view(game)
            do_step(game, random_step(game, rng, 0.003))
    assert checked > 2000


def test_a_sight_kept_across_changes_reads_each_change():
    """A Sight lives all game (sim keeps one per seat): its reads follow every move."""
    rng = random.Random(5)
    game = Game(players(3), RuleSet(clear_rows=True, end_score=40), seed="kept")
    sights = {p.id: Sight(game, p.id) for p in game.players}
    steps = 0
    while not game.is_over:
        for p, sight in sights.items():
            if p in game.round.seating:
                assert sight.cells(p) == flat_cells(view(game, p)["round"]["grids"][p])
        do_step(game, random_step(game, rng))
        steps += 1
    assert steps > 50


def test_no_hidden_card_in_any_answer_over_random_games():
    """On a copy where every hidden card is a number no card has, no answer holds one,
    but the drawer's own drawn card."""
    for seed in range(10):
        rng = random.Random(seed)
        game = Game(players(rng.randint(2, 6)), random_rules(rng), seed=f"secret-{seed}")
        steps = 0
        while not game.is_over:
            do_step(game, random_step(game, rng, 0.003))
            steps += 1
            if game.phase != PLAY or steps % 3:
                continue
            masked, secrets = with_secrets(game)
            drawer = masked.round.turn if masked.round.drawn is not None else None
            for p in masked.round.seating:
                text = json.dumps(answers(Sight(masked, p), masked))
                found = {secrets[int(n)] for n in SECRET.findall(text)}
                assert found == ({"drawn"} if p == drawer else set()), (p, found)


def test_the_secret_check_sees_a_leak():
    game = Game(players(2), seed=4)
    masked, secrets = with_secrets(game)
    grid = masked.round.grids["p1"]
    text = json.dumps({"leak": grid.values})  # what a Sight must never hand out
    assert {secrets[int(n)] for n in SECRET.findall(text)} == {"face-down card of p1"}


@pytest.mark.parametrize("clear_rows", [False, True])
def test_greedy_moves_the_same_on_a_sight_and_on_a_view(clear_rows):
    rules = RuleSet(rows=3, cols=3 if clear_rows else 4, clear_rows=clear_rows)
    game = Game(players(4), rules, seed=f"same-{clear_rows}")
    sights = {p.id: Sight(game, p.id) for p in game.players}
    rng = random.Random(7)
    moves_made = 0
    while game.phase != GAME_OVER and moves_made < 1500:
        if game.phase == ROUND_OVER:
            game.start_next_round()
            continue
        pid = next(p for p in game.round.seating if game.legal_actions(p))
        state = rng.getstate()
        action = greedy_play(sights[pid], rng)
        after = rng.getstate()
        rng.setstate(state)
        assert greedy_bot(view(game, pid), rng) == action
        assert rng.getstate() == after
        game.apply(pid, action)
        moves_made += 1
    assert game.phase == GAME_OVER


def test_play_game_gives_greedy_a_sight_with_the_same_records(monkeypatch):
    bots = ["greedy", "strong", "greedy", "random"]
    rules = RuleSet(end_score=60, clear_rows=True)
    fast = [to_record(sim.play_game(rules, bots, f"rec-{i}")) for i in range(3)]
    handed = []
    monkeypatch.setitem(SIGHTED, "greedy", lambda s, rng: handed.append(s) or greedy_play(s, rng))
    sim.play_game(rules, bots, "rec-0")
    assert handed and all(type(s) is Sight for s in handed)
    monkeypatch.delitem(SIGHTED, "greedy")  # every bot on views, as before Sight
    slow = [to_record(sim.play_game(rules, bots, f"rec-{i}")) for i in range(3)]
    assert fast == slow

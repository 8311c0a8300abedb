"""The expert bot: it decides from its view alone, plays only legal moves (also checked
for every bot in test_bots.py) and beats the greedy bot."""

from __future__ import annotations

import json
import random

import pytest

from app.bots import expert
from app.bots.expert import LOOK, Lookahead, expert_bot
from app.bots.reading import STALL_EVENTS
from app.bots.registry import BOTS, choose
from app.cli.sim import play_game
from app.engine import (
    DOWN,
    PLAY,
    ROUND_OVER,
    SETUP,
    DiscardDrawn,
    Game,
    KeepDrawn,
    Penalty,
    Player,
    RuleSet,
    to_record,
    view,
)
from benchmarks.bot_bench import deciders


def reshuffled_hidden(game: Game, rng: random.Random) -> Game:
    """A copy of `game` whose face-down cards and draw pile hold the same cards in
    another order: nothing any player may see differs."""
    data = json.loads(json.dumps(game.to_dict()))
    rnd = data["rounds"][-1]
    places = [
        (grid["values"], i)
        for grid in rnd["grids"].values()
        for i, s in enumerate(grid["state"])
        if s == DOWN
    ]
    places += [(rnd["draw_pile"], i) for i in range(len(rnd["draw_pile"]))]
    cards = [values[i] for values, i in places]
    rng.shuffle(cards)
    for (values, i), card in zip(places, cards, strict=True):
        values[i] = card
    return Game.from_dict(data)


def test_the_expert_decides_from_the_view_alone(monkeypatch):
    """Games that differ only in cards nobody sees get the same decisions, looking
    ahead included (its guesses at the hidden cards come from the view and the rng)."""
    looked = []
    best = Lookahead.best
    monkeypatch.setattr(Lookahead, "best", lambda self, *a: looked.append(1) or best(self, *a))
    rng = random.Random(4)
    checked = 0
    for seed in range(2):
        game = Game([Player(f"p{k}", f"P{k}", "expert") for k in range(1, 4)], seed=seed)
        for pid in deciders(game, 160):
            other = reshuffled_hidden(game, rng)
            mine = view(game, pid)
            assert view(other, pid) == mine
            action = expert_bot(mine, random.Random(seed))
            # The same decision from a copy that is pure data, and from the other game.
            assert expert_bot(json.loads(json.dumps(mine)), random.Random(seed)) == action
            assert expert_bot(view(other, pid), random.Random(seed)) == action
            game.apply(pid, action)
            checked += 1
    assert checked == 320
    assert len(looked) > 30


def test_seeded_expert_games_are_reproducible():
    rules = RuleSet(end_score=40)
    first = to_record(play_game(rules, ["expert", "greedy", "strong"], "again"))
    assert to_record(play_game(rules, ["expert", "greedy", "strong"], "again")) == first


def test_the_expert_is_offered_like_every_bot():
    assert BOTS["expert"] is expert_bot
    game = Game([Player("p1", "A"), Player("p2", "B")], seed=2)
    for pid in ("p1", "p2"):
        while game.phase == SETUP and game.round.setup_left[pid]:
            game.apply(pid, choose("expert", view(game, pid), random.Random(1)))
    assert game.phase != SETUP


def test_the_expert_beats_greedy():
    # Over 2,000 two-player games the expert wins 90.4% (docs/figures.md); 60
    # fixed-seed games keep this test short (70% is three standard errors below).
    wins = 0
    for i in range(60):
        ranking = play_game(RuleSet(), ["expert", "greedy"], f"expert-{i}").ranking()
        wins += any(e["player"] == "p1" and e["rank"] == 1 for e in ranking)
    assert wins / 60 >= 0.70


def early_turn_with_drawn(drawn: int) -> Game:
    """p1's first turn, a card drawn: 1 and 2 face up, ten cards face down."""
    game = Game([Player("p1", "A"), Player("p2", "B")], seed=0)
    rnd = game.round
    rnd.setup_left = {"p1": 0, "p2": 0}
    mine, theirs = rnd.grids["p1"], rnd.grids["p2"]
    mine.values[:] = [1, 2, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0]
    mine.state[:] = [1, 1] + [0] * 10
    theirs.values[:] = [10] * 12
    theirs.state[:] = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]
    game.phase, rnd.turn = PLAY, "p1"
    rnd.drawn = drawn
    return game


def test_the_expert_turns_a_card_rather_than_keep_a_mid_card_early():
    """A drawn 4 early in a round: the strong bot keeps it on a face-down cell (a point
    below the mean), the expert discards it and turns a card (tuned: worth more)."""
    game = early_turn_with_drawn(4)
    assert isinstance(choose("strong", view(game, "p1"), random.Random(0)), KeepDrawn)
    assert isinstance(choose("expert", view(game, "p1"), random.Random(0)), DiscardDrawn)
    # A low card is kept by both.
    game = early_turn_with_drawn(2)
    assert isinstance(choose("expert", view(game, "p1"), random.Random(0)), KeepDrawn)


def longest_round(rules: RuleSet, players: int, seed: str, limit: int = 20_000) -> int:
    """Play a game of experts only; the most moves any of its rounds took."""
    game = Game([Player(f"p{k}", f"P{k}", "expert") for k in range(players)], rules, seed=seed)
    rng = random.Random(seed)
    longest = 0
    for pid in deciders(game, limit):
        game.apply(pid, choose("expert", view(game, pid), rng))
        longest = max(longest, len(game.round.log))
    assert game.is_over, f"{seed}: no end within {limit} moves"
    return longest


@pytest.mark.parametrize(
    ("rules", "players", "seed"),
    [
        (RuleSet(), 2, "h3424"),
        (RuleSet(), 3, "h3424"),
        (RuleSet(end_score=60), 4, "h3424"),
        (RuleSet(rows=2, cols=2, clear_rows=False, end_score=20), 3, "h3424"),
        # Four experts here passed the same 2s, 3s and 4s round, each taking the
        # discard, for a thousand moves before the expert hurried when stalling.
        (
            RuleSet(rows=3, cols=2, initial_flips=0, end_score=33, penalty=Penalty("flat", 5, 35)),
            4,
            "h541693",
        ),
        (RuleSet(rows=2, cols=3, clear_rows=True, end_score=30), 4, "x7"),
    ],
)
def test_tables_of_experts_end_every_round(rules, players, seed):
    """Nobody ending a round when everyone waits: once a round is stalling, each of the
    expert's turns turns one of its face-down cards, so the round ends within a dozen
    more turns each (events: a turn logs at most two)."""
    cells = rules.rows * rules.cols
    bound = (STALL_EVENTS + 2 * cells + 2) * players
    assert longest_round(rules, players, seed) <= bound


def test_a_stalling_expert_turns_a_face_down_card_every_turn(monkeypatch):
    """Forced to hurry from the start, every turn of an expert before the round's end
    leaves it with fewer face-down cards (kept or taken onto one, or one turned)."""
    monkeypatch.setattr("app.bots.strong.is_stalling", lambda rnd: True)
    game = Game([Player(f"p{k}", f"P{k}", "expert") for k in range(3)], RuleSet(), seed="hurry")
    rng = random.Random(0)
    turns, started = 0, None
    for pid in deciders(game):
        rnd = game.round
        if game.phase == PLAY and rnd.drawn is None and rnd.ender is None:
            started = (rnd, pid, rnd.grids[pid].state.count(DOWN))
        game.apply(pid, choose("expert", view(game, pid), rng))
        if started is not None and started[:2] == (rnd, pid) and rnd.drawn is None:
            assert rnd.grids[pid].state.count(DOWN) < started[2]
            turns, started = turns + 1, None
    assert game.is_over and turns > 20


def test_the_look_ahead_can_be_switched_off_even_after_an_ender(monkeypatch):
    """LOOK["on"] = False leaves the strong mind's move alone, also on a last turn (a
    screen of the mind's constants then costs a game ~0.03 s instead of ~0.3 s)."""
    looked = []
    best = Lookahead.best
    monkeypatch.setattr(Lookahead, "best", lambda self, *a: looked.append(1) or best(self, *a))
    rules = RuleSet(end_score=40)
    play_game(rules, ["expert", "greedy", "greedy"], "off-0")
    assert looked  # on: it looks ahead near every round's end
    looked.clear()
    monkeypatch.setitem(LOOK, "on", False)
    play_game(rules, ["expert", "greedy", "greedy"], "off-0")
    assert looked == []


def differing_choices(monkeypatch, against_strong: dict) -> int:
    """One game of the expert against three strong bots, played again move for move at a
    table where the same three seats are labelled greedy: how many of the expert's
    decisions differ (the look-ahead off, so the mind alone decides)."""
    monkeypatch.setitem(LOOK, "on", False)
    monkeypatch.setattr(expert, "AGAINST_STRONG", against_strong)

    def table(level: str) -> Game:
        seats = [Player("p1", "P1", "expert")]
        seats += [Player(f"p{k}", f"P{k}", level) for k in range(2, 5)]
        return Game(seats, seed="levels")

    strong, labelled = table("strong"), table("greedy")
    rng, differ = random.Random(3), 0
    for pid in deciders(strong, 2_000):
        if labelled.phase == ROUND_OVER:
            labelled.start_next_round()
        if pid == "p1":
            action = choose("expert", view(strong, pid), random.Random(1))
            differ += action != choose("expert", view(labelled, pid), random.Random(1))
        else:
            action = choose("strong", view(strong, pid), rng)
        strong.apply(pid, action)
        labelled.apply(pid, action)
    return differ


def test_against_strong_bots_alone_the_expert_values_ending_as_they_do(monkeypatch):
    assert expert.AGAINST_STRONG == {"end_edge": 1.5}
    assert differing_choices(monkeypatch, expert.AGAINST_STRONG) > 0
    # The opponents' level steers nothing else.
    assert differing_choices(monkeypatch, {}) == 0


def test_the_constants_for_strong_bots_need_every_opponent_strong():
    def constants(levels: list) -> dict:
        seats = [Player("p1", "P1", "expert")]
        seats += [Player(f"p{k}", f"P{k}", lv) for k, lv in enumerate(levels, 2)]
        return expert._constants(view(Game(seats, seed=1), "p1"))

    assert constants(["strong", "strong", "strong"])["end_edge"] == 1.5
    assert constants(["strong"])["end_edge"] == 1.5
    for levels in (["strong", "greedy", "strong"], ["strong", None], ["expert", "strong"]):
        assert constants(levels) is expert.EXPERT

"""Random play-outs: thousands of games over random rule sets and 2 to 8 players, with
the engine's invariants checked after every move."""

import json
import random
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.engine import (
    DOWN,
    GAME_OVER,
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
    Reveal,
    RuleSet,
    TakeDiscard,
    replay,
    to_record,
    view,
)
from tests.engine.engine_helpers import (
    DECK,
    cards_in_play,
    check_invariants,
    check_view,
    do_step,
    players,
    random_rules,
    random_step,
    ranking_key,
)

MAX_STEPS = 20000


@st.composite
def rule_sets(draw):
    rows = draw(st.integers(2, 3))
    cols = draw(st.integers(2, 4))
    return RuleSet(
        rows=rows,
        cols=cols,
        initial_flips=draw(st.integers(0, min(4, rows * cols - 1))),
        end_score=draw(st.integers(10, 120)),
        clear_rows=draw(st.booleans()),
        penalty=Penalty(
            draw(st.sampled_from(["multiplier", "flat", "both"])),
            draw(st.integers(2, 5)),
            draw(st.integers(1, 50)),
        ),
        show_running_score=draw(st.booleans()),
        reseat=draw(st.sampled_from(["never", "round", "game"])),
    )


def check_result(game: Game, rnd) -> None:
    """A scored round: raw = the cards left, the ender's penalty as docs/rules.md says."""
    result = rnd.result
    rules = game.rules
    for p, raw in result["raw"].items():
        grid = rnd.grids[p]
        assert grid.face_down_count() == 0
        assert raw == grid.score()
    ender = result["ender"]
    raw, scores = result["raw"], result["scores"]
    for p in raw:
        if p != ender:
            assert scores[p] == raw[p]
    if ender in raw:
        beaten = any(raw[q] <= raw[ender] for q in raw if q != ender)
        if raw[ender] > 0 and beaten:
            assert scores[ender] == rules.penalty.apply(raw[ender])
        else:
            assert scores[ender] == raw[ender]
    assert rnd.last_turns == [] and rnd.turn is None and rnd.drawn is None


def check_game_over(game: Game) -> None:
    assert game.phase == GAME_OVER
    active = game.active()
    scored = [r for r in game.rounds if r.result is not None]
    for p in game.totals:
        assert game.totals[p] == sum(r.result["scores"].get(p, 0) for r in scored)
    if len(active) >= 2:
        # ended by the score: the last round was scored and someone reached end_score
        last = game.rounds[-1].result
        assert last is not None
        assert any(last["totals"][p] >= game.rules.end_score for p in last["totals"])
    for r in game.rounds[:-1]:
        # every earlier round was scored and left every total below end_score
        assert r.result is not None
        assert all(t < game.rules.end_score for t in r.result["totals"].values())
    ranking = game.ranking()
    assert sorted(e["player"] for e in ranking) == sorted(game.totals)
    for e in ranking:
        if e["player"] in game.forfeited:
            assert e["rank"] == len(active) + 1
        else:
            below = [q for q in active if game.totals[q] < e["total"]]
            assert e["rank"] == 1 + len(below)
    assert [e["rank"] for e in ranking] == sorted(e["rank"] for e in ranking)


def reference_clear(values: list[int], state: list[int], rules: RuleSet) -> list[int]:
    """The rules' clearing (docs/rules.md, "Clearing lines"), written apart from the
    engine: in passes, every line (columns, and rows with row clears) whose cards left
    are at least 2, all face up and all equal leaves together, until none does.
    Returns the states after it."""
    rows, cols = rules.rows, rules.cols
    lines = [range(c, rows * cols, cols) for c in range(cols)]
    if rules.clear_rows:
        lines += [range(r * cols, (r + 1) * cols) for r in range(rows)]
    state = list(state)
    while True:
        leaving = set()
        for line in lines:
            left = [i for i in line if state[i] != GONE]
            if (
                len(left) >= 2
                and all(state[i] == UP for i in left)
                and len({values[i] for i in left}) == 1
            ):
                leaving.update(left)
        if not leaving:
            return state
        for i in leaving:
            state[i] = GONE


def grids_before(game: Game) -> dict:
    rnd = game.round
    return {
        "round": rnd.number,
        "scored": rnd.result is not None,
        "grids": {p: (list(g.values), list(g.state)) for p, g in rnd.grids.items()},
    }


def check_clears(game: Game, before: dict, step) -> None:
    """Every line that left a grid in this step was complete when it left, and every
    line complete then left: the clearing above, of the grid as the move changed it
    (its one card turned or placed face up), then, if the step ended the round, of
    every scored grid with all its cards turned over."""
    rnd = game.round
    player, action = step
    if player == "next" or rnd.number != before["round"]:
        return
    expected = {p: list(state) for p, (_values, state) in before["grids"].items()}
    at = getattr(action, "flip", None) or (
        (action.row, action.col) if hasattr(action, "row") else None
    )
    if at is not None:
        grid = rnd.grids[player]
        turned = list(expected[player])
        turned[at[0] * grid.cols + at[1]] = UP
        expected[player] = reference_clear(grid.values, turned, game.rules)
    if rnd.result is not None and not before["scored"]:
        for p in rnd.result["raw"]:
            turned = [UP if s == DOWN else s for s in expected[p]]
            expected[p] = reference_clear(rnd.grids[p].values, turned, game.rules)
    for p, grid in rnd.grids.items():
        assert grid.state == expected[p], f"{p}: lines left that were not complete, or stayed"


TURN_MOVES = ("take_discard", "draw")


def check_last_turns(game: Game, rnd) -> None:
    """After the ender's last turn, each other player plays exactly one more turn, in
    seat order from the ender: everyone scored, and anyone who then left."""
    ender = rnd.ender
    if ender is None:
        return
    turns = [m["player"] for m in rnd.moves if m["type"] in TURN_MOVES]
    ended = max(i for i, p in enumerate(turns) if p == ender)
    last = turns[ended + 1 :]
    at = rnd.seating.index(ender)
    order = rnd.seating[at + 1 :] + rnd.seating[:at]
    assert len(set(last)) == len(last), f"a second last turn: {last}"
    assert last == [p for p in order if p in last], f"last turns {last}, seat order {order}"
    if rnd.result is not None:
        scored = set(rnd.result["raw"]) - {ender}
        assert scored <= set(last), f"{sorted(scored - set(last))} scored without a last turn"
        assert set(last) - scored <= set(game.forfeited)


def play(game: Game, rng: random.Random, forfeit_rate: float, full: bool):
    """Play to the end, checking invariants after every step. Returns the steps."""
    steps = []
    previous = check_invariants(game, views=full)
    scored = 0
    for _ in range(MAX_STEPS):
        if game.is_over:
            break
        step = random_step(game, rng, forfeit_rate)
        phase = game.phase
        before = grids_before(game)
        do_step(game, step)
        check_clears(game, before, step)
        steps.append(step)
        if full:
            previous = check_invariants(game, previous)
        else:
            assert len(cards_in_play(game)) == 150
        if phase == SETUP and game.phase == PLAY:
            # play started only once every active player turned their cards
            rnd = game.round
            assert all(rnd.setup_left[p] == 0 for p in rnd.seating if p not in game.forfeited)
            assert rnd.turn == rnd.starter
        done = [r for r in game.rounds if r.result is not None]
        if len(done) > scored:
            scored = len(done)
            check_result(game, done[-1])
            check_last_turns(game, done[-1])
    else:
        raise AssertionError("the game did not end")
    check_last_turns(game, game.round)  # also when forfeits ended the game unscored
    assert Counter(cards_in_play(game)) == Counter(DECK)
    check_game_over(game)
    return steps


def new_game(rng: random.Random, rules: RuleSet | None = None, seed=None) -> Game:
    n = rng.randint(2, 8)
    return Game(players(n), rules or random_rules(rng), seed=rng.random() if seed is None else seed)


def check_replays(game: Game, steps) -> None:
    # the seed and the moves give the same game again
    again = Game(game.players, game.rules, seed=game.seed, game_id=game.id)
    for step in steps:
        do_step(again, step)
    assert again.to_dict() == game.to_dict()
    # and the record replays to the same results
    record = json.loads(json.dumps(to_record(game)))
    replayed = replay(record)
    assert replayed.is_over == game.is_over
    assert replayed.totals == game.totals
    assert replayed.forfeited == game.forfeited
    assert ranking_key(replayed.ranking()) == ranking_key(game.ranking())
    assert [r.result for r in replayed.rounds] == [r.result for r in game.rounds]
    assert [r.seating for r in replayed.rounds] == [r.seating for r in game.rounds]
    assert to_record(replayed)["rounds"] == record["rounds"]


@settings(
    max_examples=600,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    rules=rule_sets(),
    n=st.integers(2, 8),
    seed=st.integers(0, 2**32),
    forfeit_rate=st.sampled_from([0.0, 0.0, 0.002, 0.02]),
)
def test_random_games_keep_every_invariant(rules, n, seed, forfeit_rate):
    game = Game(players(n), rules, seed=seed)
    rng = random.Random(seed)
    steps = play(game, rng, forfeit_rate, full=True)
    check_view(game, text=True)
    if rng.random() < 0.3:
        check_replays(game, steps)


def test_thousands_of_seeded_games():
    """Lighter checks per move (cards, results, game end), many more games."""
    for seed in range(2500):
        rng = random.Random(seed)
        game = new_game(rng, seed=seed)
        steps = play(game, rng, forfeit_rate=0.003 if seed % 3 == 0 else 0.0, full=False)
        if seed % 10 == 0:
            check_replays(game, steps)


def test_eight_players_default_rules():
    for seed in range(20):
        rng = random.Random(seed)
        game = Game(players(8), RuleSet(), seed=seed)
        steps = play(game, rng, forfeit_rate=0.0, full=seed < 3)
        check_replays(game, steps)


def test_state_survives_a_json_round_trip_at_random_points():
    for seed in range(400):
        rng = random.Random(seed)
        game = new_game(rng, seed=seed)
        clone = None
        for _ in range(MAX_STEPS):
            if game.is_over:
                break
            if clone is None and rng.random() < 0.03:
                clone = Game.from_dict(json.loads(json.dumps(game.to_dict())))
                assert clone.to_dict() == game.to_dict()
            step = random_step(game, rng, 0.002)
            if clone is not None:
                p = step[0]
                if p != "next":
                    assert clone.legal_actions(p) == game.legal_actions(p)
                    assert view(clone, p) == view(game, p)
                do_step(clone, step)
            do_step(game, step)
        assert game.is_over
        if clone is not None:
            assert clone.to_dict() == game.to_dict()
            assert clone.ranking() == game.ranking()


def test_legal_actions_are_exactly_the_accepted_moves():
    """Every listed action applies; a sample of unlisted ones is refused unchanged."""

    def candidates(rules):
        cells = [(r, c) for r in range(rules.rows + 1) for c in range(rules.cols + 1)]
        out = [Draw(), DiscardDrawn(None)]
        for r, c in cells:
            out += [Reveal(r, c), TakeDiscard(r, c), KeepDrawn(r, c), DiscardDrawn((r, c))]
        return out

    for seed in range(60):
        rng = random.Random(seed)
        game = new_game(rng, seed=seed)
        every = candidates(game.rules)
        for _ in range(MAX_STEPS):
            if game.is_over:
                break
            if game.phase in (SETUP, PLAY) and rng.random() < 0.2:
                p = rng.choice(game.active())
                legal = game.legal_actions(p)
                for action in rng.sample(every, 12):
                    if action in legal:
                        clone = Game.from_dict(game.to_dict())
                        clone.apply(p, action)
                    else:
                        before = json.dumps(game.to_dict(), sort_keys=True)
                        try:
                            game.apply(p, action)
                        except IllegalMove as exc:
                            assert exc.reason
                        else:
                            raise AssertionError(f"{action} accepted but not listed")
                        assert json.dumps(game.to_dict(), sort_keys=True) == before
            if game.phase == ROUND_OVER:
                assert all(game.legal_actions(p) == [] for p in game.totals)
            do_step(game, random_step(game, rng, 0.0))


def test_forfeit_is_always_possible_until_the_game_ends():
    for seed in range(200):
        rng = random.Random(seed)
        game = new_game(rng, seed=seed)
        while not game.is_over:
            if rng.random() < 0.01:
                p = rng.choice(game.active())
                before = len(game.active())
                game.apply(p, Forfeit())
                assert len(game.active()) == before - 1
                assert game.legal_actions(p) == []
                if before - 1 < 2:
                    assert game.is_over
            else:
                do_step(game, random_step(game, rng, 0.0))
            assert len(cards_in_play(game)) == 150
        check_game_over(game)


def refusal(move, player: str, action) -> str | None:
    """The reason `move` (a game's apply or play) refuses `action`, None if it accepts."""
    try:
        move(player, action)
    except IllegalMove as exc:
        return exc.reason
    return None


def test_play_makes_the_changes_and_refusals_apply_makes():
    """Game.play (for bot games) is apply without copying the events out."""
    wrong = [Draw(), DiscardDrawn(None), Reveal(0, 0), KeepDrawn(0, 0), TakeDiscard(9, 0)]
    for seed in range(25):
        rng = random.Random(seed)
        applied = new_game(rng, seed=seed)
        played = Game.from_dict(applied.to_dict())
        for _ in range(MAX_STEPS):
            if applied.is_over:
                break
            p, action = random_step(applied, rng, 0.02)
            if p == "next":
                applied.start_next_round()
                played.start_next_round()
            else:
                attempt = rng.choice(wrong)
                if attempt not in applied.legal_actions(p):
                    reason = refusal(applied.apply, p, attempt)
                    assert reason is not None and refusal(played.play, p, attempt) == reason
                events = applied.apply(p, action)
                before = len(played.round.log)
                assert played.play(p, action) is None
                assert played.round.log[before:] == events
            assert played.to_dict() == applied.to_dict()

"""view(): what one player (or a spectator) may know. Never a face-down value, never the
draw pile's order, never another player's drawn card."""

import json
import random
import re

import pytest

from app.engine import (
    GAME_OVER,
    PLAY,
    SETUP,
    Draw,
    Forfeit,
    Game,
    KeepDrawn,
    Reveal,
    RuleSet,
    action_from_dict,
    action_to_dict,
    view,
)
from tests.engine.engine_helpers import (
    DOWN,
    check_view,
    do_step,
    fixed_game,
    flip_until_round_end,
    players,
    quick_game,
    quick_rules,
    random_rules,
    random_step,
)

A = [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]
B = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]

# Secret cards are replaced by unique numbers no real card has; they must never show.
SECRET = re.compile(r"(?<![\d.])(7\d{5})(?!\d)")


def with_secrets(game: Game) -> tuple[Game, dict[int, str]]:
    """A copy of `game` where every hidden card (face down, in the draw pile, drawn) is a
    unique number 7xxxxx. Returns the copy and what each secret is."""
    data = json.loads(json.dumps(game.to_dict()))
    secrets: dict[int, str] = {}
    counter = iter(range(700000, 800000))
    rnd = data["rounds"][-1]
    for p, grid in rnd["grids"].items():
        for i, s in enumerate(grid["state"]):
            if s == DOWN:
                grid["values"][i] = n = next(counter)
                secrets[n] = f"face-down card of {p}"
    for i in range(len(rnd["draw_pile"])):
        rnd["draw_pile"][i] = n = next(counter)
        secrets[n] = "draw pile"
    if rnd["drawn"] is not None:
        rnd["drawn"] = n = next(counter)
        secrets[n] = "drawn"
    # the deal as recorded is not part of any view, but scrambled too
    rnd["dealt"] = {"grids": {}, "discard": [], "draw_pile": []}
    return Game.from_dict(data), secrets


def leaked(game: Game, who) -> set[str]:
    text = json.dumps(view(game, who))
    return {m for m in SECRET.findall(text)}


def check_no_secret(game: Game) -> None:
    masked, secrets = with_secrets(game)
    drawer = masked.round.turn if masked.round.drawn is not None else None
    for who in [None, "stranger", *(p.id for p in masked.players)]:
        found = {secrets[int(n)] for n in leaked(masked, who)}
        if who is not None and who == drawer:
            assert found == {"drawn"}, found
        else:
            assert found == set(), (who, found)


def test_no_face_down_value_in_any_view_over_random_games():
    for seed in range(25):
        rng = random.Random(seed)
        game = Game(players(rng.randint(2, 8)), random_rules(rng), seed=seed)
        check_no_secret(game)
        steps = 0
        while not game.is_over:
            do_step(game, random_step(game, rng, 0.003))
            steps += 1
            if steps % 4 == 0 or (game.round.drawn is not None and rng.random() < 0.5):
                check_no_secret(game)
                check_view(game, text=True)
        check_no_secret(game)


def test_the_secret_check_can_fail():
    game = fixed_game([A, B], 5)
    masked, secrets = with_secrets(game)
    # a view that showed face-down values would be caught
    bad = json.dumps(masked.to_dict())
    assert {secrets[int(n)] for n in SECRET.findall(bad)} >= {"face-down card of p1", "draw pile"}


def test_cells_in_a_view():
    game = fixed_game([A, B], 5)
    game.apply("p1", Reveal(1, 2))
    data = view(game, "p2")
    grid = data["round"]["grids"]["p1"]
    assert len(grid) == 3 and all(len(row) == 4 for row in grid)
    assert grid[1][2] == {"state": "up", "value": 7}
    assert grid[0][0] == {"state": "down"}
    assert "value" not in json.dumps(data["round"]["grids"]["p2"])
    assert data["round"]["draw_count"] == 150 - 24 - 1
    assert data["round"]["discard_top"] == 5
    assert data["round"]["setup_left"] == {"p1": 1, "p2": 2}
    assert data["round"]["turn"] is None
    assert data["phase"] == SETUP


def test_spectator_view():
    game = fixed_game([A, B], 5, (9, 3))
    for p in ("p1", "p2"):
        game.apply(p, Reveal(0, 0))
        game.apply(p, Reveal(0, 1))
    game.apply("p1", Draw())
    for who in (None, "somebody-else"):
        data = view(game, who)
        assert data["me"] is None
        assert data["phase"] == PLAY
        assert data["round"]["turn"] == "p1"
        assert data["round"]["has_drawn"] is True
        assert data["round"]["drawn"] is None
        assert [p["id"] for p in data["players"]] == ["p1", "p2"]
        assert data["round"]["grids"]["p1"][0][:2] == (
            {"state": "up", "value": 1},
            {"state": "up", "value": 2},
        )
        assert "9" not in json.dumps(data["round"]["grids"])
    assert view(game, None) == view(game, "somebody-else")


def test_drawn_card_only_for_the_drawer():
    game = fixed_game([A, B], 5, (9, 3))
    for p in ("p1", "p2"):
        game.apply(p, Reveal(0, 0))
        game.apply(p, Reveal(0, 1))
    game.apply("p1", Draw())
    assert view(game, "p1")["me"] == "p1"
    assert view(game, "p1")["round"]["drawn"] == 9
    assert view(game, "p2")["round"]["drawn"] is None
    # no other part of Bob's view holds the 9 that was drawn (no 9 is face up)
    masked, secrets = with_secrets(game)
    assert leaked(masked, "p2") == set()
    assert {secrets[int(n)] for n in leaked(masked, "p1")} == {"drawn"}
    game.apply("p1", KeepDrawn(1, 1))
    assert view(game, "p1")["round"]["drawn"] is None
    # now public: it is face up in Ann's grid
    assert view(game, "p2")["round"]["grids"]["p1"][1][1] == {"state": "up", "value": 9}


def test_a_forfeited_drawer_shows_nothing():
    game = quick_game([[[12, 0], [1, -2]], [[1, 2], [3, 4]], [[3, 1], [2, 5]]])
    game.apply("p1", Draw())
    game.apply("p1", Forfeit())
    for who in ("p1", "p2", "p3", None):
        assert view(game, who)["round"]["drawn"] is None
        assert view(game, who)["round"]["has_drawn"] is False
    check_no_secret(game)


def test_view_before_a_deal_and_after_the_game():
    game = Game(players(2), RuleSet(), deal=False)
    data = view(game, "p1")
    assert data["round"] is None and data["phase"] == SETUP
    game = quick_game([[[12, 0], [1, -2]], [[1, 2], [3, 4]]], rules=quick_rules(end_score=10))
    flip_until_round_end(game)
    assert game.phase == GAME_OVER
    data = view(game, None)
    assert list(data["ranking"]) == game.ranking()
    assert [p["total"] for p in data["players"]] == [22, 10]
    # after the final reveal every remaining card is face up
    cells = [c for g in data["round"]["grids"].values() for row in g for c in row]
    assert all(c["state"] in ("up", "gone") for c in cells)
    assert data["round"]["turn"] is None


def test_a_view_is_read_only_and_shared():
    game = fixed_game([A, B], 5)
    game.apply("p1", Reveal(0, 0))
    before = json.dumps(game.to_dict(), sort_keys=True)
    data = view(game, "p1")
    for change in (
        lambda: data["round"]["grids"]["p1"][0][0].__setitem__("value", 99),
        lambda: data["round"].__setitem__("discard_top", 12),
        lambda: data["players"][0].update(total=500),
        lambda: data["rules"]["penalty"].pop("mode"),
    ):
        with pytest.raises(TypeError):
            change()
    with pytest.raises(AttributeError):
        data["round"]["log"].clear()  # a tuple
    assert json.dumps(game.to_dict(), sort_keys=True) == before
    # Unchanged parts are shared between viewers; only what differs is new.
    other = view(game, "p2")
    assert other["round"] is data["round"] and other["players"] is data["players"]
    assert other["legal"] != data["legal"]


def test_view_is_json_and_stable():
    game = fixed_game([A, B], 5)
    data = view(game, "p1")
    assert json.loads(json.dumps(data)) == json.loads(json.dumps(view(game, "p1")))
    assert view(game, "p1") == data


def test_a_view_is_rebuilt_after_every_change():
    """The shared part is cached per change: after each move it equals a view built
    from scratch (a copy of the game that never had a view)."""
    rng = random.Random(3)
    for seed in range(6):
        game = Game(players(rng.randint(2, 5)), random_rules(rng), seed=seed)
        while not game.is_over:
            do_step(game, random_step(game, rng, 0.003))
            fresh = Game.from_dict(json.loads(json.dumps(game.to_dict())))
            for who in (None, *game.totals):
                assert view(game, who) == view(fresh, who)


def test_the_view_lists_the_viewers_legal_actions():
    game = fixed_game([A, B], 5, (9, 3))
    data = view(game, "p1")
    assert data["legal"] == tuple(action_to_dict(a) for a in game.legal_actions("p1"))
    assert len(data["legal"]) == 12 and data["legal"][0] == {"type": "reveal", "row": 0, "col": 0}
    for p in ("p1", "p2"):
        game.apply(p, Reveal(0, 0))
        game.apply(p, Reveal(0, 1))
    assert view(game, "p2")["legal"] == () and view(game, None)["legal"] == ()
    assert [a["type"] for a in view(game, "p1")["legal"]] == ["draw"] + ["take_discard"] * 12
    game.apply("p1", Draw())
    legal = view(game, "p1")["legal"]
    assert [a["type"] for a in legal] == ["keep_drawn"] * 12 + ["discard_drawn"] * 10
    assert {"type": "discard_drawn", "flip": (2, 3)} in legal
    assert [action_from_dict(a) for a in legal] == game.legal_actions("p1")


def test_the_log_never_names_a_drawn_card():
    rng = random.Random(5)
    for seed in range(30):
        game = Game(players(rng.randint(2, 8)), random_rules(rng), seed=seed)
        while not game.is_over:
            do_step(game, random_step(game, rng, 0.003))
        for rnd in game.rounds:
            for event in rnd.log:
                if event["type"] == "draw":
                    assert event == {"type": "draw", "player": event["player"]}

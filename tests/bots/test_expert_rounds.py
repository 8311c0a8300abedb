"""The expert's rounds seat by seat (benchmarks/expert_rounds.py): its tallies."""

from __future__ import annotations

from app.cli.sim import play_game
from app.engine import RuleSet
from benchmarks.expert_rounds import Seats


def test_tallies_add_up_to_the_games_own_results():
    seats = Seats()
    games = [play_game(RuleSet(), ["strong", "greedy", "greedy"], f"t-{i}") for i in range(3)]
    for game in games:
        seats.add(game)
    rounds = [r for g in games for r in g.rounds if r.result]
    # every seat scored every round, and the scores sum to the totals
    for p in ("p1", "p2", "p3"):
        assert len(seats.scores[p]) == len(rounds)
        assert sum(seats.scores[p]) == sum(g.totals[p] for g in games)
    assert sum(seats.ended.values()) == sum(r.ender is not None for r in rounds)
    # a game has at least one winner (rank 1, shared or not)
    assert len(games) <= sum(seats.wins.values())
    # a cleared card is gone from the score: what is left plus what was cleared is the deal
    r = rounds[0]
    grid = r.grids["p1"]
    assert r.result["raw"]["p1"] + seats.cleared["p1"][0] == sum(grid.values)
    assert len(seats.margins[True]) + len(seats.margins[False]) == len(rounds)
    report = seats.report(len(games))
    assert report.count("\n") >= 3 and "p1's margin" in report

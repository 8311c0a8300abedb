"""The simulation command: `python -m app.cli.sim` (console script `skymo`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import sim
from app.engine import FORMAT, replay

ROOT = Path(__file__).resolve().parents[2]
SEATS = {f"p{k}" for k in range(1, 9)}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = sim.main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def without_speed(out: str) -> str:
    return "\n".join(line for line in out.splitlines() if not line.startswith("speed:"))


def test_runs_games_and_reports_each_seat(capsys):
    code, out, _ = run(capsys, "--players", "3", "--bots", "strong,greedy,random", "--games", "4")
    assert code == 0
    assert "4 games" in out
    for seat, bot in (("p1", "strong"), ("p2", "greedy"), ("p3", "random")):
        line = next(x for x in out.splitlines() if x.startswith(seat))
        assert bot in line and "%" in line
    assert "mean rounds per game:" in out
    assert "games/s" in out
    assert "shared first place is a win for each" in out


def test_writes_records_that_replay(capsys, tmp_path):
    code, out, _ = run(
        capsys,
        *("--players", "3", "--bots", "greedy,random,strong", "--games", "3"),
        *("--seed", "rec", "--rows", "2", "--cols", "3", "--initial-flips", "1"),
        *("--end-score", "40", "--clear-rows", "--penalty", "both", "--multiplier", "3"),
        *("--flat", "5", "--hide-running-score", "--reseat", "round", "--out", str(tmp_path)),
    )
    assert code == 0, out
    files = sorted(tmp_path.glob("*.json"))
    assert [f.name for f in files] == [f"sim-rec-{i}.json" for i in range(3)]
    for path in files:
        record = json.loads(path.read_text())
        assert record["format"] == FORMAT
        assert record["id"] == path.stem
        assert record["rules"] == {
            "rows": 2,
            "cols": 3,
            "initial_flips": 1,
            "end_score": 40,
            "clear_rows": True,
            "penalty": {"mode": "both", "multiplier": 3, "flat": 5},
            "show_running_score": False,
            "reseat": "round",
        }
        assert [p["bot"] for p in record["players"]] == ["greedy", "random", "strong"]
        game = replay(record)
        assert game.is_over and record["final"]["ended"]
        assert game.ranking() == record["final"]["ranking"]


def test_same_arguments_same_results(capsys, tmp_path):
    args = ["--players", "4", "--bots", "strong,greedy,greedy,random", "--games", "3"]
    args += ["--seed", "9"]
    code1, out1, _ = run(capsys, *args, "--out", str(tmp_path / "a"))
    code2, out2, _ = run(capsys, *args, "--out", str(tmp_path / "b"))
    assert code1 == code2 == 0
    assert without_speed(out1) == without_speed(out2)
    for first in (tmp_path / "a").iterdir():
        assert first.read_bytes() == (tmp_path / "b" / first.name).read_bytes()
    _, out3, _ = run(capsys, *args[:-1], "10")
    assert without_speed(out3) != without_speed(out1)


def test_first_splits_a_run_into_the_same_games(capsys, tmp_path):
    args = ["--bots", "strong,greedy,random", "--seed", "split"]
    run(capsys, *args, "--games", "3", "--out", str(tmp_path / "whole"))
    run(capsys, *args, "--games", "2", "--out", str(tmp_path / "head"))
    code, out, _ = run(
        capsys, *args, "--first", "2", "--games", "1", "--out", str(tmp_path / "tail")
    )
    assert code == 0 and "1 games" in out
    halves = sorted((tmp_path / "head").iterdir()) + sorted((tmp_path / "tail").iterdir())
    assert [f.name for f in halves] == [f"sim-split-{i}.json" for i in range(3)]
    for half in halves:
        assert half.read_bytes() == (tmp_path / "whole" / half.name).read_bytes()


def test_one_bot_name_fills_every_seat(capsys):
    code, out, _ = run(capsys, "--players", "5", "--bots", "random", "--games", "2")
    assert code == 0
    seats = [line.split()[:2] for line in out.splitlines() if line[:2] in SEATS]
    assert seats == [[f"p{k}", "random"] for k in range(1, 6)]
    assert "random   5 seat(s)" in out


def test_seats_follow_the_bot_list_without_players(capsys):
    code, out, _ = run(capsys, "--bots", "greedy,random,strong", "--games", "1")
    assert code == 0
    assert out.startswith("3 players")


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["--players", "9"], "--players"),
        (["--players", "1"], "--players"),
        (["--rows", "4"], "--rows"),
        (["--cols", "5"], "--cols"),
        (["--initial-flips", "5"], "--initial-flips"),
        (["--end-score", "5"], "--end-score"),
        (["--penalty", "double"], "--penalty"),
        (["--multiplier", "9"], "--multiplier"),
        (["--flat", "0"], "--flat"),
        (["--reseat", "always"], "--reseat"),
        (["--bots", "clever"], "--bots"),
        (["--players", "3", "--bots", "greedy,random"], "--bots"),
        (["--games", "0"], "--games"),
        (["--max-turns", "0"], "--max-turns"),
        (["--first", "-1"], "--first"),
        (["--players", "two"], "--players"),
        (["--seed", "a/b"], "--seed"),
    ],
)
def test_bad_options_exit_2_naming_the_option(capsys, argv, option):
    if "--games" not in argv:
        argv = [*argv, "--games", "1"]
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert option in err
    assert "Traceback" not in err
    assert out == ""


def test_cut_games_are_reported_by_id(capsys):
    code, out, _ = run(capsys, "--games", "2", "--max-turns", "5", "--seed", "cut")
    assert code == 0
    assert "cut by --max-turns (2 games" in out
    assert "sim-cut-0" in out and "sim-cut-1" in out


def test_progress_on_stderr(capsys, monkeypatch):
    monkeypatch.setattr(sim, "PROGRESS_SECONDS", 0.0)
    code, _, err = run(capsys, "--games", "3", "--bots", "random")
    assert code == 0
    assert "1/3 games" in err


def test_play_game_plays_to_the_end():
    from app.engine import RuleSet

    game = sim.play_game(RuleSet(end_score=30), ["greedy", "strong", "random"], "x", "g1")
    assert game.is_over and game.id == "g1"
    assert [p.bot for p in game.players] == ["greedy", "strong", "random"]
    with pytest.raises(ValueError):
        sim.play_game(RuleSet(), ["greedy", "nobody"], "x")


def test_module_runs_as_a_command():
    done = subprocess.run(
        [sys.executable, "-m", "app.cli.sim", "--games", "2", "--rows", "9"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--rows" in done.stderr and "Traceback" not in done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "app.cli.sim", "--games", "2", "--players", "3"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "2 games" in done.stdout


def test_bot_games_make_no_reference_cycles():
    """play_game pauses the cyclic garbage collector: that is only safe while a game
    between bots leaves no cycle behind (everything is freed by reference counting)."""
    import gc

    from app.engine import RuleSet

    assert gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for bots in (["greedy"] * 4, ["expert", "strong", "random"]):
            for i in range(3):
                game = sim.play_game(RuleSet(end_score=40), bots, f"cycles-{i}")
                assert game.is_over
            del game
            assert gc.collect() == 0, bots
    finally:
        gc.enable()
    sim.play_game(RuleSet(end_score=20), ["greedy", "greedy"], "on-again")
    assert gc.isenabled()

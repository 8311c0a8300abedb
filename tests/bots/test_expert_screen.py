"""The expert's paired screens (benchmarks/expert_screen.py): pairing and settings."""

from __future__ import annotations

import pytest

from app.bots import columns, expert
from benchmarks.expert_points import play
from benchmarks.expert_screen import apply_settings, outcomes, paired, screen, screen_pairs


def test_paired_counts_only_games_both_played_and_the_split_ones():
    base = {0: 1, 1: 0, 2: 1, 3: 0, 4: 1}
    variant = {0: 1, 1: 1, 2: 0, 3: 1}  # game 4 not played yet
    r = paired(base, variant)
    assert (r["games"], r["base"], r["variant"]) == (4, 2, 3)
    assert (r["gained"], r["lost"]) == (2, 1)
    assert r["z"] == pytest.approx(1 / 3**0.5)


def test_settings_change_the_mind_or_the_look_ahead_by_name(monkeypatch):
    monkeypatch.setitem(expert.EXPERT, "potential", expert.EXPERT["potential"])
    monkeypatch.setitem(expert.LOOK, "samples", expert.LOOK["samples"])
    monkeypatch.setitem(expert.LOOK, "game", expert.LOOK["game"])
    apply_settings(["potential=1.0", "samples=20", "game=false"])
    assert expert.EXPERT["potential"] == 1.0
    assert expert.LOOK["samples"] == 20 and isinstance(expert.LOOK["samples"], int)
    assert expert.LOOK["game"] is False
    with pytest.raises(SystemExit):
        apply_settings(["no_such=1"])


def test_a_screen_writes_each_game_as_it_ends(tmp_path):
    out = tmp_path / "s.txt"
    wins = screen(["expert", "greedy"], "t", 3, 2, out)
    found = outcomes(out)
    assert sorted(found) == [3, 4]
    assert sum(found.values()) == wins
    # Started again over more games, it keeps what the file holds and plays the rest.
    out.write_text("3 1\n4 1\n")  # as if both were won
    assert screen(["expert", "greedy"], "t", 3, 3, out) == 2 + outcomes(out)[5]
    assert sorted(outcomes(out)) == [3, 4, 5] and len(out.read_text().splitlines()) == 3


def test_pairs_play_both_experts_on_each_game_and_resume(tmp_path):
    base, out = tmp_path / "base.txt", tmp_path / "var.txt"
    base.write_text("3 1\n")  # game 3 played by an earlier run: kept, not replayed
    look = dict(expert.LOOK)
    screen_pairs(["expert", "greedy"], "t", range(3, 5), base, out, ["samples=6"])
    assert look == expert.LOOK  # the shipped constants are back after the variant
    found = outcomes(base)
    assert sorted(found) == [3, 4] and found[3] == 1
    assert sorted(outcomes(out)) == [3, 4]
    # Unchanged settings play the same games alike (the same seeds).
    screen_pairs(["expert", "greedy"], "t", range(4, 6), base, out, [])
    assert outcomes(out)[5] == outcomes(base)[5]


def test_a_points_screen_plays_a_table_from_a_file_and_puts_the_shipped_one_back(tmp_path):
    bots = ["expert", "greedy"]
    shipped = play(bots, "t", 0, "")
    same = tmp_path / "same.json"
    same.write_text(columns.to_json(columns.shipped()))
    assert play(bots, "t", 0, f"table={same}") == shipped
    flat = tmp_path / "flat.json"  # every column worth 0: the grid's worth never changes
    flat.write_text(columns.to_json(dict.fromkeys(columns.shipped(), 0.0)))
    assert play(bots, "t", 0, f"table={flat},on=0") != play(bots, "t", 0, "on=0")
    assert columns.table() is columns.shipped()

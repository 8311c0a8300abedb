"""Replays (app.replays): conformance records step through to their recorded results;
uploads that are not records are named for what is wrong."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from app import create_app
from app.engine import ROUND_OVER, SETUP, Forfeit, Game, Player, RuleSet, to_record
from app.engine.record import replay_steps
from app.replays import MAX_BYTES, ReplayError, pack, parse_upload, replay_at, unpack

RECORDS = Path(__file__).resolve().parent / "data" / "conformance" / "records.jsonl"


@pytest.fixture(scope="module")
def records() -> list[dict]:
    with RECORDS.open() as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.fixture(scope="module", autouse=True)
def request_context():
    """Messages go through the translation catalog: an app context for gettext."""
    app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": "sqlite:///:memory:"})
    with app.test_request_context():
        yield


def ranking_key(ranking):
    return sorted((r["rank"], r["name"], r["total"]) for r in ranking)


def test_every_conformance_record_replays_to_its_recorded_results(records):
    assert len(records) >= 100
    for record in records:
        names = {p["id"]: p["name"] for p in record["players"]}
        count = sum(1 for _ in replay_steps(record)) - 1  # without "start"
        last = replay_at(record, count - 1)
        assert last.count == count and last.step == count - 1
        scored = [r for r in record["rounds"] if "result" in r]
        assert [r["number"] for r in last.rounds if r["result"] is not None] == [
            r["number"] for r in scored
        ]
        for rnd, mine in zip(
            scored, [r for r in last.rounds if r["result"] is not None], strict=True
        ):
            shown = replay_at(record, mine["result"]).board
            assert shown["round"] == rnd["number"]
            expected = rnd["result"]
            rows = {
                row["name"]: {k: row[k] for k in ("raw", "score", "total", "ender", "penalised")}
                for row in shown["result"]["rows"]
            }
            assert rows == {
                names[p]: {
                    "raw": expected["raw"][p],
                    "score": expected["scores"][p],
                    "total": expected["totals"][p],
                    "ender": p == expected["ender"],
                    "penalised": expected["scores"][p] != expected["raw"][p],
                }
                for p in expected["raw"]
            }
        if record["final"]["ended"]:
            final = [
                {"rank": r["rank"], "name": names[r["player"]], "total": r["total"]}
                for r in record["final"]["ranking"]
            ]
            assert ranking_key(last.board["ranking"]) == ranking_key(final)


def test_each_step_moves_one_recorded_move_and_says_it_in_words(records):
    record = next(r for r in records if len(r["rounds"]) >= 2)
    count = replay_at(record, 0).count
    rounds = replay_at(record, 0).rounds
    assert [r["first"] for r in rounds] == sorted(r["first"] for r in rounds)
    for k in range(count):
        shown = replay_at(record, k)
        assert shown.step == k and shown.words, k
    first_move = record["rounds"][0]["moves"][0]
    assert first_move["type"] == "reveal"
    name = next(p["name"] for p in record["players"] if p["id"] == first_move["player"])
    assert replay_at(record, 1).words[0].startswith(f"{name} turned over")
    # Every card of the board is shown (the game is over), face down ones too.
    cells = [c for p in replay_at(record, 0).board["players"] for row in p["grid"] for c in row]
    assert all(isinstance(c["value"], int) for c in cells)
    assert any(c["state"] == "down" and "face down" in c["label"] for c in cells)


def play_until(game: Game, done, rng: random.Random) -> None:
    """Random legal moves (new rounds dealt) until `done()`."""
    while not done():
        if game.phase == ROUND_OVER:
            game.start_next_round()
            continue
        if game.phase == SETUP:
            pid = next(p for p in game.round.seating if game.legal_actions(p))
        else:
            pid = game.round.turn
        game.apply(pid, rng.choice(game.legal_actions(pid)))


@pytest.mark.parametrize("later", [True, False])
def test_a_forfeit_between_rounds_is_shown_after_the_scored_round(later):
    """Bob leaves once round 1 is scored: the step after its result shows him leaving on
    round 1's board; then round 2 is dealt without him, or (Cat leaving too) the game
    is over."""
    seats = [Player("p1", "Ann"), Player("p2", "Bob"), Player("p3", "Cat")]
    game = Game(seats, RuleSet(rows=2, cols=2, end_score=1000), seed=2, game_id="F")
    rng = random.Random(2)
    play_until(game, lambda: game.phase == ROUND_OVER, rng)
    game.apply("p2", Forfeit())
    if later:
        play_until(game, lambda: len(game.rounds) == 2 and game.phase == ROUND_OVER, rng)
    else:
        game.apply("p3", Forfeit())
    record = json.loads(json.dumps(to_record(game)))
    first = replay_at(record, 0).rounds[0]
    leaving = replay_at(record, first["result"] + 1)
    assert leaving.board["round"] == 1
    assert any("Bob" in line for line in leaving.words), leaving.words
    bob = next(p for p in leaving.board["players"] if p["name"] == "Bob")
    assert bob["forfeited"] and bob["total"] == record["rounds"][0]["result"]["totals"]["p2"]
    last = replay_at(record, 10_000)
    if later:
        assert [r["number"] for r in last.rounds] == [1, 2]
        assert last.rounds[1]["first"] == first["result"] + 2  # dealt after Bob left
        assert [p["name"] for p in last.board["players"]] == ["Ann", "Cat"]
    else:
        assert last.step == first["result"] + 2 and len(last.rounds) == 1
        assert [r["name"] for r in last.board["ranking"]][0] == "Ann"


def test_a_step_past_the_end_shows_the_last(records):
    record = records[0]
    last = replay_at(record, 10_000)
    assert last.step == last.count - 1


def test_bad_uploads_are_named(records):
    good = json.dumps(records[0]).encode()
    assert parse_upload(good) == records[0]
    cases = [
        (b"{not json", "not JSON (line 1, column 2)"),
        (b"\xff\xfe\x00", "not JSON: it is not even text"),
        (b"[1, 2]", "not a skymo.game/1 record"),
        (json.dumps({**records[0], "format": "other/1"}).encode(), 'format is "other/1"'),
        (b"   ", "Choose a skymo.game/1 file"),
        (b" " * (MAX_BYTES + 1), "too large"),
    ]
    for data, message in cases:
        with pytest.raises(ReplayError) as err:
            parse_upload(data)
        assert message in err.value.message, (data[:20], err.value.message)


def test_records_the_rules_refuse_name_round_and_move(records):
    record = copy.deepcopy(next(r for r in records if len(r["rounds"]) >= 2))
    moves = record["rounds"][1]["moves"]
    index = next(i for i, m in enumerate(moves) if m["type"] == "take_discard")
    moves[index]["row"] = 7  # no such card
    with pytest.raises(ReplayError) as err:
        replay_at(record, 0)
    assert err.value.message.startswith(f"The rules refuse round 2, move {index + 1}:")
    broken = copy.deepcopy(records[0])
    del broken["rounds"][0]["grids"]
    with pytest.raises(ReplayError) as err:
        replay_at(broken, 0)
    assert "not a well-formed skymo.game/1 record" in err.value.message
    broken = copy.deepcopy(records[0])
    broken["rules"]["rows"] = 9
    with pytest.raises(ReplayError) as err:
        replay_at(broken, 0)
    assert "not a well-formed" in err.value.message and "rows" in err.value.message
    scored = copy.deepcopy(next(r for r in records if "result" in r["rounds"][0]))
    scored["rounds"][0]["result"]["raw"] = {}
    with pytest.raises(ReplayError) as err:
        replay_at(scored, 10_000)
    assert "does not replay under the rules" in err.value.message


def test_the_packed_record_round_trips_and_refuses_damage(records):
    assert json.loads(unpack(pack(records[0]))) == records[0]
    with pytest.raises(ReplayError):
        unpack("not base64 at all!")

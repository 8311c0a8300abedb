"""Replay pages (app.web.replay): a stored game stepped by its links and by htmx, the
links to it, uploads of good and bad files (nothing stored)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from app.engine import to_record
from app.storage.models import GameRecord, ScoreSheet, Table
from tests.web.account_helpers import (  # noqa: F401
    bot_game,
    cheap_hashing,
    finish,
    game_penalised_ender,
    make_user,
    signin,
    table_with,
)
from tests.web.web_helpers import each, parse

RECORDS = Path(__file__).resolve().parents[1] / "data" / "conformance" / "records.jsonl"


def a_record(index=0) -> dict:
    with RECORDS.open() as fh:
        lines = [line for line in fh if line.strip()]
    return json.loads(lines[index])


def finished(app, users=(None, None)):
    code, seats = table_with(app, ("Ann", users[0]), ("Bob", users[1]))
    game = bot_game(seats, seed=3)
    finish(code, game)
    return code, game


def controls(doc) -> dict[str, str | None]:
    nav = doc.find("nav", cls="controls")
    out = {}
    for el in nav.iter():
        if el.attrs.get("data-key"):
            out[el.attrs["data-key"]] = el.attrs.get("href")
    return out


def test_a_stored_game_steps_through_to_its_results_by_links(browser, app):
    code, game = finished(app)
    b = browser()
    url = f"/t/{code}/games/1/replay"
    doc = parse(b.get(url).data)
    assert "Round 1: the cards are dealt." in doc.by_id("replay-move").text()
    assert controls(doc)["first"] is None and controls(doc)["prev"] is None  # disabled
    seen = 0
    while True:
        link = controls(doc)["next"]
        if link is None:
            break
        doc = parse(b.get(link).data)
        seen += 1
        assert seen < 5000
    replay = doc.by_id("replay")
    assert int(replay.attrs["data-step"]) == seen == int(replay.attrs["data-count"]) - 1
    assert seen == sum(2 + len(r.moves) for r in game.rounds) - 1  # deal + moves + scores
    ranking = [
        (li.find(cls="name").text(), int(li.find(cls="total").text()))
        for li in replay.find(cls="ranking").find_all("li")
    ]
    assert sorted(ranking) == sorted((game.name(r["player"]), r["total"]) for r in game.ranking())
    assert "The game is over." in doc.by_id("replay-move").text()
    # Round boundaries: a link to each round's deal and scores.
    rounds = doc.find("nav", cls="round-links").find_all("a")
    assert len(rounds) == 2 * len(game.rounds)


def test_htmx_gets_the_replay_partial_and_bad_steps_are_clamped(browser, app):
    code, _game = finished(app)
    b = browser()
    url = f"/t/{code}/games/1/replay"
    part = b.get(f"{url}?step=3", headers={"HX-Request": "true"}).data.decode()
    assert "<html" not in part and 'data-step="3"' in part
    nav = parse(part).find("nav", cls="controls")
    hx = [el.attrs.get("hx-get") for el in nav.iter() if el.attrs.get("hx-get")]
    assert f"{url}?step=2" in hx and f"{url}?step=4" in hx
    for step, shown in (("abc", "0"), ("-4", "0"), ("99999999", None)):
        replay = parse(b.get(f"{url}?step={step}").data).by_id("replay")
        if shown is None:
            shown = str(int(replay.attrs["data-count"]) - 1)
        assert replay.attrs["data-step"] == shown
    assert b.get(f"/t/{code}/games/2/replay").status_code == 404
    assert b.get("/t/NOSUCH/games/1/replay").status_code == 404


def test_replays_are_linked_from_results_history_and_the_table(browser, app):
    ann = make_user("ann_r")
    code, _game = finished(app, (ann, None))
    replay = f"/t/{code}/games/1/replay"
    b = browser()
    assert f'href="{replay}"' in b.get(f"/t/{code}/games/1").data.decode()
    signin(b, "ann_r")
    assert f'href="{replay}"' in b.get("/me/history").data.decode()
    assert f'href="{replay}"' in b.get(f"/t/{code}").data.decode()  # the final results


def upload(b, data: bytes, name="game.json"):
    b.get("/replay")
    return b.post(
        "/replay",
        {"record": (io.BytesIO(data), name)},
        content_type="multipart/form-data",
    )


def stored_rows():
    return (Table.select().count(), GameRecord.select().count(), ScoreSheet.select().count())


def test_an_uploaded_record_replays_and_steps_with_its_form(browser, app):
    record = a_record(1)
    b = browser()
    before = stored_rows()
    response = upload(b, json.dumps(record).encode())
    assert response.status_code == 200
    doc = parse(response.data)
    form = doc.find("form", cls="replay-form")
    packed = form.find("input", name="packed").attrs["value"]
    buttons = {el.attrs["data-key"]: el for el in form.find_all("button") if "data-key" in el.attrs}
    assert "disabled" in buttons["prev"].attrs and buttons["next"].attrs["value"] == "1"
    count = int(doc.by_id("replay").attrs["data-count"])
    last = b.post("/replay", {"packed": packed, "step": str(count - 1)}, htmx=True)
    assert last.status_code == 200 and "<html" not in last.data.decode()
    final = parse(last.data).by_id("replay")
    names = {p["id"]: p["name"] for p in record["players"]}
    shown = sorted(
        (li.find(cls="name").text(), int(li.find(cls="total").text()))
        for li in final.find(cls="ranking").find_all("li")
    )
    assert shown == sorted((names[r["player"]], r["total"]) for r in record["final"]["ranking"])
    assert stored_rows() == before  # nothing of an upload is kept


def bad_move(record: dict) -> dict:
    moves = record["rounds"][0]["moves"]
    index = next(i for i, m in enumerate(moves) if m["type"] == "draw")
    moves[index] = {"player": moves[index]["player"], "type": "reveal", "row": 0, "col": 0}
    return record, index + 1


@each(
    "kind",
    [
        "not json",
        "not text",
        "wrong format",
        "array",
        "refused move",
        "rules not a dict",
        "no rules",
        "huge number",
        "too large",
        "no file",
    ],
)
def test_a_bad_upload_is_named_and_nothing_is_stored(browser, app, kind):
    b = browser()
    before = stored_rows()
    record = a_record(2)
    expected, status = None, 400
    if kind == "not json":
        data, expected = b'{"format": "skymo.game/1",', "This file is not JSON (line 1"
    elif kind == "not text":
        data, expected = bytes(range(200, 256)), "not even text"
    elif kind == "wrong format":
        data = json.dumps({**record, "format": "skyjo/2"}).encode()
        expected = 'not a skymo.game/1 record (its format is "skyjo/2")'
    elif kind == "array":
        data, expected = b"[]", "not a skymo.game/1 record"
    elif kind == "refused move":
        broken, move = bad_move(record)
        data = json.dumps(broken).encode()
        mover = broken["rounds"][0]["moves"][move - 1]["player"]
        name = next(p["name"] for p in record["players"] if p["id"] == mover)
        expected = f"Round 1, move {move}: {name} turned over the card at row 1, column 1, but "
    elif kind == "rules not a dict":  # Python's text was "dictionary update sequence ..."
        data = json.dumps({**record, "rules": "3x4"}).encode()
        expected = "The record's rules must be a set of options (rows, cols, end_score…)."
    elif kind == "no rules":  # Python's text was "bad header: 'rules'"
        data = json.dumps({k: v for k, v in record.items() if k != "rules"}).encode()
        expected = "The record gives no rules."
    elif kind == "huge number":  # a ValueError json.loads raises: once a 500
        data = b'{"format": "skymo.game/1", "rules": ' + b"9" * 5000 + b"}"
        expected = "a number far too long"
    elif kind == "too large":
        data = b" " * 1_100_000
        expected, status = "too large", 413
    else:
        data, expected = b"", "Choose a skymo.game/1 file"
    response = upload(b, data)
    assert response.status_code == status
    error = parse(response.data).by_id("record-error")
    assert error is not None and expected in error.text(), response.data[-1500:]
    assert parse(response.data).by_id("replay") is None
    assert stored_rows() == before


@each(
    "lang, expected",
    [
        (
            "en",
            "Round 1, move {n}: {mover} drew a card and placed it at row {row}, column {col}, "
            "but it is {turn}'s turn.",
        ),
        (
            "fr",
            "Manche 1, coup {n}\u00a0: {mover} a pioché une carte et l'a placée en rangée {row}, "
            "colonne {col}, mais c'est au tour de {turn}.",
        ),
        (
            "de",
            "Runde 1, Zug {n}: {mover} hat eine Karte gezogen und in Reihe {row}, Spalte {col} "
            "gelegt, aber {turn} ist am Zug.",
        ),
    ],
)
def test_a_move_out_of_turn_is_named_in_the_readers_language(browser, app, lang, expected):
    """The issue's case: a draw by the player whose turn it is not, said as a sentence."""
    record = a_record(2)
    moves = record["rounds"][0]["moves"]
    index = next(i for i, m in enumerate(moves) if m["type"] == "draw" and m["keep"])
    names = {p["id"]: p["name"] for p in record["players"]}
    turn = moves[index]["player"]
    mover = next(p for p in names if p != turn)
    moves[index]["player"] = mover
    b = browser()
    b.get(f"/replay?lang={lang}")
    response = upload(b, json.dumps(record).encode())
    assert response.status_code == 400
    error = parse(response.data).by_id("record-error").text()
    assert error == expected.format(
        n=index + 1,
        mover=names[mover],
        turn=names[turn],
        row=moves[index]["row"] + 1,
        col=moves[index]["col"] + 1,
    )


def test_a_damaged_replay_form_and_a_missing_token_are_refused(browser, app):
    b = browser()
    b.get("/replay")
    response = b.post("/replay", {"packed": "AAAA", "step": "2"})
    assert response.status_code == 400 and "damaged" in response.data.decode()
    raw = b.client.post(
        "/replay",
        data={"record": (io.BytesIO(json.dumps(a_record()).encode()), "g.json")},
        content_type="multipart/form-data",
    )
    assert raw.status_code == 400 and "expired" in raw.data.decode()


def test_the_record_the_server_writes_is_the_one_replayed(browser, app):
    code, game = finished(app)
    stored = GameRecord.get((GameRecord.table == code) & (GameRecord.number == 1))
    assert stored.record == to_record(game)
    page = browser().get(f"/t/{code}/games/1/replay?step=0").data.decode()
    dealt = game.rounds[0].dealt["grids"]
    first = game.rounds[0].seating[0]
    values = [str(v) for row in dealt[first] for v in row]
    box = parse(page).find("section", aria_label=game.name(first))
    shown = [c.text() for c in box.find_all(cls="card")]
    assert shown == values  # every dealt card is shown at the deal
    assert re.search(r"face down", page)

"""Every form a person fills in and every file they open, sent broken values one field at
a time (wrong types, a field sent twice, huge numbers, control characters, bytes that
are not UTF-8): never a 500, a refusal says why in words (no Python text) and changes
nothing. The live-server fuzz test (test_fuzz.py) covers the tables' routes at random;
this goes through the score sheet, the replay and the account forms field by field."""

from __future__ import annotations

import io
import re
from pathlib import Path

from app.storage.models import ScoreSheet, SheetRound, Table, User
from tests.web.account_helpers import cheap_hashing  # noqa: F401
from tests.web.web_helpers import parse

BROKEN = [
    "",
    " ",
    "\x00",
    "\x07bell",
    "null",
    "[]",
    "{}",
    "{'a': 1}",
    "<b>x</b>",
    "x" * 5000,
    "9" * 5000,  # more digits than Python's int() reads
    "-" + "9" * 30,
    "1e9",
    "0x10",
    " 3 ",
    "٣",  # a digit to int() too
    "²",  # a digit to str.isdigit(), not to int()
    "3.0",
    "True",
    ["2", "3"],  # a field sent twice
]
PYTHON_TEXT = re.compile(
    r"Traceback|Error\b|dictionary update|NoneType|object has no|subscriptable|not iterable"
    r"|<class|invalid literal|\{'|'\}|\['|':"
)
RECORDS = Path(__file__).resolve().parents[1] / "data" / "conformance" / "records.jsonl"


def alerts(response) -> list[str]:
    doc = parse(response.data)
    return [el.text() for el in doc.iter() if el.attrs.get("role") == "alert"]


def refused_cleanly(response, what):
    """A refusal: a 4xx with a message in words next to the form."""
    assert 400 <= response.status_code < 500, (what, response.status_code)
    said = [text for text in alerts(response) if text.strip()]
    assert said, (what, response.data[-2000:])
    for text in said:
        assert not PYTHON_TEXT.search(text), (what, text)


def sheet_state():
    return [(s.code, s.players, s.end_score, s.penalty, s.version) for s in ScoreSheet.select()], [
        (r.sheet_id, r.number, r.raw, r.ender, r.undone) for r in SheetRound.select()
    ]


GOOD_SHEET = {
    "player-1": "Emma",
    "player-2": "Nico",
    "end_score": "100",
    "penalty_mode": "both",
    "penalty_multiplier": "2",
    "penalty_flat": "10",
}


def test_the_score_sheet_forms_refuse_broken_values_cleanly(browser, app):
    b = browser()
    b.get("/score")
    for field in GOOD_SHEET:
        for value in BROKEN:
            before = sheet_state()
            response = b.post("/score", {**GOOD_SHEET, field: value})
            if response.status_code == 303:  # a value the form takes: whole and sane
                sheet = ScoreSheet.get_by_id(response.headers["Location"].rsplit("/", 1)[1])
                assert all(n and n.isprintable() and len(n) <= 20 for n in sheet.players)
                assert 2 <= len(sheet.players) <= 8 and 10 <= sheet.end_score <= 1000
                sheet.delete_instance()
                continue
            refused_cleanly(response, (field, value))
            assert sheet_state() == before
    response = b.post("/score", GOOD_SHEET)
    url = response.headers["Location"]
    page = b.get(url).data.decode()
    good_round = {"score-1": "5", "score-2": "7", "ender": "1"}
    for field in ("score-1", "score-2", "ender", "round_id"):
        for value in BROKEN:
            rid = re.search(r'name="round_id" value="([^"]+)"', page).group(1)
            before = sheet_state()
            data = {**good_round, "round_id": rid, field: value}
            response = b.post(f"{url}/rounds", data)
            if response.status_code == 303:
                b.post(f"{url}/undo", {"round": "1"})
                continue
            refused_cleanly(response, (field, value))
            assert sheet_state() == before
    b.post(f"{url}/rounds", {**good_round, "round_id": "r" * 16})
    for field in ("score-1", "ender"):
        for value in BROKEN:
            before = sheet_state()
            response = b.post(f"{url}/rounds/1", {**good_round, field: value})
            if response.status_code != 303:
                refused_cleanly(response, ("correct", field, value))
                assert sheet_state() == before
    for value in BROKEN:
        before = sheet_state()
        response = b.post(f"{url}/undo", {"round": value})
        if response.status_code != 303:
            refused_cleanly(response, ("undo", value))
            assert sheet_state() == before
    # bytes that are not UTF-8 (the form's percent-encoding of them)
    body = "&".join(f"{k}={v}" for k, v in GOOD_SHEET.items()).replace("Nico", "N%FF%FEco")
    response = b.client.post(
        "/score",
        data=f"{body}&csrf_token={b.csrf}",
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code in (303, 400)


def test_the_replay_form_refuses_broken_files_and_fields_cleanly(browser, app):
    b = browser()
    b.get("/replay")
    good = RECORDS.read_text().splitlines()[0].encode()
    files = [
        b"\xff\xfe\xfa",
        b"\xef\xbb\xbf" + b'{"format": "x"}',
        b'{"format": "skymo.game/1", "rules": ' + b"9" * 5000 + b"}",
        b"[" * 50_000,
        b"[" * 50_000 + b"]" * 50_000,
        b'{"format": "skymo.game/1"}',
        b'{"format": "skymo.game/1", "rules": "rows=3"}',
        b'{"format": "skymo.game/1", "rules": {}, "players": "Ann, Bob"}',
        good.replace(b'"rows":', b'"rows": [3], "x":'),
        good.replace(b'"type":"reveal"', b'"type":"peek"', 1),
        good.replace(b'"row":', b'"row":"', 1),
        b"null",
        b'"skymo.game/1"',
    ]
    for data in files:
        response = b.post(
            "/replay", {"record": (io.BytesIO(data), "g.json")}, content_type="multipart/form-data"
        )
        refused_cleanly(response, data[:60])
        assert parse(response.data).by_id("replay") is None
    for field in ("packed", "step"):
        for value in BROKEN:
            response = b.post("/replay", {field: value})
            if response.status_code != 200:
                refused_cleanly(response, (field, value))
    assert Table.select().count() == 0 and ScoreSheet.select().count() == 0


def test_the_account_and_table_forms_refuse_broken_values_cleanly(browser, app):
    b = browser()
    b.get("/signup")
    for field in ("username", "password"):
        for value in BROKEN:
            data = {"username": "sweeper", "password": "long enough password", field: value}
            response = b.post("/signup", data)
            if response.status_code == 303:
                User.delete().execute()
                b = browser()
                b.get("/signup")
                continue
            refused_cleanly(response, ("signup", field, value))
            assert User.select().count() == 0
    for value in BROKEN:
        response = browser().post("/tables", {"name": value})
        if response.status_code != 303:
            refused_cleanly(response, ("create", value))
    host = browser()
    host.create("Ann")
    code = host.code
    for value in BROKEN:
        guest = browser()
        guest.get(f"/t/{code}")
        response = guest.post(f"/t/{code}/join", {"name": value})
        if response.status_code not in (204, 303):
            refused_cleanly(response, ("join", value))

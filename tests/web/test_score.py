"""The score sheet pages (app.web.score): every route, bad input changing nothing,
rounds counted once, corrections and undo recomputing, the list, accounts, the live
read-only link."""

from __future__ import annotations

import re

import websocket

from app.engine.rules import BOUNDS
from app.storage.models import Result, ScoreSheet, SheetRound
from tests.web.account_helpers import cheap_hashing, signin, signup  # noqa: F401
from tests.web.web_helpers import LiveBrowser, each, parse

THREE = {"player-1": "Emma", "player-2": "Nico", "player-3": "Pat"}
SETTINGS = {"end_score": "100", "penalty_mode": "multiplier", "penalty_multiplier": "2"}
SETTINGS["penalty_flat"] = "10"


def start(b, **extra) -> str:
    b.get("/score")
    response = b.post("/score", {**THREE, **SETTINGS, **extra})
    assert response.status_code == 303, response.data[:500]
    return response.headers["Location"]


def round_id(b, url: str) -> str:
    return re.search(r'name="round_id" value="([^"]+)"', b.get(url).data.decode()).group(1)


def add(b, url, scores, ender="none", rid=None, htmx=False):
    data = {f"score-{i}": str(s) for i, s in enumerate(scores, start=1)}
    data |= {"ender": ender, "round_id": rid or round_id(b, url)}
    return b.post(f"{url}/rounds", data, htmx=htmx)


def totals(html) -> dict[str, int]:
    doc = parse(html)
    return {
        li.find(cls="name").text(): int(li.find(cls="total").text())
        for li in doc.by_id("sheet").find(cls="ranking").find_all("li")
    }


def state(url):
    sheet = ScoreSheet.get_by_id(url.rsplit("/", 1)[1])
    return sheet.version, [(r.number, r.raw, r.ender, r.undone) for r in sheet.rounds]


def test_start_a_sheet_and_score_the_worked_example(browser, app):
    b = browser()
    url = start(b)
    response = add(b, url, [12, 8, 12], ender="1")
    assert response.status_code == 303 and response.headers["Location"] == url
    html = b.get(url).data.decode()
    assert totals(html) == {"Emma": 24, "Nico": 8, "Pat": 12}
    doc = parse(html)
    notes = [n.text() for n in doc.find_all(cls="note")]
    assert any("Emma ended round 1" in n and "12 became 24" in n for n in notes), notes
    ranks = [li.find(cls="rank").text() for li in doc.find(cls="ranking").find_all("li")]
    assert ranks == ["1", "2", "3"]


def test_a_round_with_htmx_answers_the_sheet_partial(browser):
    b = browser()
    url = start(b)
    response = add(b, url, [3, 5, 7], ender="1", htmx=True)
    assert response.status_code == 200
    html = response.data.decode()
    assert html.startswith('<section id="sheet"') or 'id="sheet"' in html[:200]
    assert "<html" not in html
    assert totals(html) == {"Emma": 3, "Nico": 5, "Pat": 7}


@each(
    "field, value, message",
    [
        ("score-1", "abc", "whole number"),
        ("score-1", "2.5", "whole number"),
        ("score-2", "143", "from -17 to 142"),
        ("score-3", "-18", "from -17 to 142"),
        ("score-1", "", "whole number"),
        ("ender", "9", "who ended"),
        ("ender", "", "who ended"),
        ("ender", "\u00b2", "who ended"),  # a digit to str.isdigit, not to int()
        ("ender", "1" * 5000, "who ended"),
        ("round_id", "short", "round id"),
    ],
)
def test_a_bad_round_gets_a_message_by_its_field_and_changes_nothing(
    browser, app, field, value, message
):
    b = browser()
    url = start(b)
    add(b, url, [1, 2, 3])
    before = state(url)
    data = {"score-1": "4", "score-2": "5", "score-3": "6", "ender": "2"}
    data["round_id"] = round_id(b, url)
    data[field] = value
    for htmx in (False, True):
        response = b.post(f"{url}/rounds", data, htmx=htmx)
        assert response.status_code == 400
        doc = parse(response.data)
        error = doc.by_id(f"{field}-error")
        assert error is not None and message in error.text().lower(), response.data[-2000:]
        assert state(url) == before
    if field.startswith("score"):  # what was typed stays in the form
        assert doc.by_id(field).attrs["aria-invalid"] == "true"


def test_the_same_round_id_is_counted_once(browser):
    b = browser()
    url = start(b)
    rid = round_id(b, url)
    assert add(b, url, [5, 6, 7], rid=rid).status_code == 303
    assert add(b, url, [5, 6, 7], rid=rid, htmx=True).status_code == 200
    version, rounds = state(url)
    assert version == 1 and len(rounds) == 1
    assert totals(b.get(url).data) == {"Emma": 5, "Nico": 6, "Pat": 7}


def test_correct_a_round_and_everything_recomputes(browser):
    b = browser()
    url = start(b)
    add(b, url, [12, 8, 12], ender="1")
    add(b, url, [10, 20, 30], ender="2")
    page = b.get(f"{url}/rounds/1")
    doc = parse(page.data)
    assert doc.by_id("score-1").attrs["value"] == "12"
    assert doc.find("input", name="ender", value="1").attrs.get("checked") is not None
    bad = b.post(f"{url}/rounds/1", {"score-1": "x", "score-2": "8", "score-3": "12", "ender": "1"})
    assert bad.status_code == 400 and parse(bad.data).by_id("score-1-error")
    fixed = {"score-1": "2", "score-2": "8", "score-3": "12", "ender": "1"}
    assert b.post(f"{url}/rounds/1", fixed).status_code == 303
    # Emma now strictly lowest in round 1: 2, not doubled; Nico ended round 2, penalised.
    assert totals(b.get(url).data) == {"Emma": 12, "Nico": 48, "Pat": 42}
    assert b.get(f"{url}/rounds/3").status_code == 404
    assert b.get(f"{url}/rounds/0").status_code == 404


def test_undo_the_last_round_once_and_its_id_stays_known(browser):
    b = browser()
    url = start(b)
    rid = round_id(b, url)
    add(b, url, [1, 2, 3], rid=rid)
    undone = round_id(b, url)
    add(b, url, [4, 5, 6], rid=undone)
    assert b.post(f"{url}/undo", {"round": "2"}).status_code == 303
    assert totals(b.get(url).data) == {"Emma": 1, "Nico": 2, "Pat": 3}
    # Pressing undo again on the same (stale) page undoes nothing.
    again = b.post(f"{url}/undo", {"round": "2"}, htmx=True)
    assert again.status_code == 409 and "nothing undone" in again.data.decode()
    assert b.post(f"{url}/undo", {"round": "x"}).status_code == 409
    version, rounds = state(url)
    assert rounds[-1] == (2, [4, 5, 6], None, True)
    # A late copy of the undone round from an offline queue is not counted again: the
    # sheet stays as it is, undone round and all.
    response = add(b, url, [4, 5, 6], rid=undone)
    assert response.status_code == 303 and response.headers["Location"] == url
    assert add(b, url, [4, 5, 6], rid=undone, htmx=True).status_code == 200
    assert state(url) == (version, rounds)
    assert totals(b.get(url).data) == {"Emma": 1, "Nico": 2, "Pat": 3}
    # Nor is a late copy of round 1, still on the sheet.
    add(b, url, [1, 2, 3], rid=rid)
    assert state(url) == (version, rounds)


def test_the_game_ends_and_names_the_winner_and_refuses_more_rounds(browser):
    b = browser()
    url = start(b, end_score="30")
    add(b, url, [10, 10, 20])
    add(b, url, [5, 5, 15])  # Pat reaches 35: Emma and Nico share the win
    html = b.get(url).data.decode()
    doc = parse(html)
    assert "Emma, Nico share the win" in doc.find(cls="banner").text()
    assert doc.by_id("round-form") is None
    refused = add(b, url, [1, 1, 1], rid="a" * 16)
    assert refused.status_code == 409
    assert "game is over" in refused.data.decode()
    # The list shows the winners.
    listing = parse(b.get("/score").data)
    assert "Winners: Emma, Nico" in listing.find(cls="sheets").text()


@each(
    "data, field, message",
    [
        ({"player-2": "", "player-3": ""}, "player-1", "2 to 8 players"),
        ({"player-2": "emma"}, "player-2", "same name"),
        ({"player-3": "x" * 21}, "player-3", "at most 20"),
        ({"player-2": "Ni\x07co"}, "player-2", "cannot show"),
        ({"player-3": "Pat\x7f"}, "player-3", "cannot show"),
        ({"end_score": "9"}, "end_score", "from 10 to 1000"),
        ({"end_score": "1001"}, "end_score", "from 10 to 1000"),
        ({"penalty_mode": "triple"}, "penalty_mode", "penalties offered"),
        ({"penalty_multiplier": "6"}, "penalty_multiplier", "from 2 to 5"),
        ({"penalty_flat": "0"}, "penalty_flat", "from 1 to 50"),
    ],
)
def test_a_bad_new_sheet_gets_a_message_and_nothing_is_stored(browser, app, data, field, message):
    b = browser()
    b.get("/score")
    before = ScoreSheet.select().count()
    response = b.post("/score", {**THREE, **SETTINGS, "player-1": "Emma", **data})
    assert response.status_code == 400
    error = parse(response.data).by_id(f"{field}-error")
    assert error is not None and message in error.text(), response.data[-3000:]
    assert ScoreSheet.select().count() == before


NINE = [f"P{i}" for i in range(1, 10)]


@each(
    "data",
    [
        {f"player-{i}": name for i, name in enumerate(NINE, start=1)},  # the case
        {**{f"player-{i}": name for i, name in enumerate(NINE[:8], start=1)}, "player-12": "P9"},
        {**{f"player-{i}": name for i, name in enumerate(NINE[:7], start=1)}, "player-8": NINE[7:]},
        {**{f"player-{i}": name for i, name in enumerate(NINE[:8], start=1)}, "player-x": "P9"},
    ],
)
def test_more_than_eight_names_are_refused_whatever_the_fields(browser, app, data):
    """A hand-made request with a ninth name, in a field the page does not have or sent
    twice, is refused with the page's message: no sheet of 8 dropping the ninth."""
    b = browser()
    b.get("/score")
    before = ScoreSheet.select().count()
    response = b.post("/score", {**SETTINGS, **data})
    assert response.status_code == 400
    error = parse(response.data).by_id("player-1-error")
    assert error is not None and "2 to 8 players" in error.text(), response.data[-3000:]
    assert ScoreSheet.select().count() == before


def test_a_name_in_a_field_the_page_lacks_is_checked_and_its_message_shown(browser, app):
    b = browser()
    b.get("/score")
    response = b.post("/score", {**THREE, **SETTINGS, "player-12": "y" * 21})
    assert response.status_code == 400
    error = parse(response.data).by_id("player-1-error")
    assert error is not None and "at most 20" in error.text()
    assert ScoreSheet.select().count() == 0
    url = start(b, **{"player-12": "Zoe"})  # a fourth name, after the page's fields
    assert ScoreSheet.get_by_id(url.rsplit("/", 1)[1]).players == ["Emma", "Nico", "Pat", "Zoe"]


def test_the_sheet_states_and_enforces_the_rules_own_ranges(browser, monkeypatch):
    """The penalty's ranges come from the rules' BOUNDS, as the host's table form's do."""
    monkeypatch.setitem(BOUNDS, "penalty.multiplier", (2, 7))
    monkeypatch.setitem(BOUNDS, "penalty.flat", (1, 60))
    b = browser()
    page = b.get("/score").data.decode()
    assert 'min="2" max="7"' in page and "×2–×7" in page
    assert 'min="1" max="60"' in page and "+1–+60" in page
    start(b, penalty_multiplier="6", penalty_flat="55", penalty_mode="both")
    (sheet,) = ScoreSheet.select()
    assert sheet.penalty == {"mode": "both", "multiplier": 6, "flat": 55}


def test_no_penalty_and_points_added_variants(browser):
    b = browser()
    url = start(b, penalty_mode="none")
    add(b, url, [12, 8, 12], ender="1")
    assert totals(b.get(url).data)["Emma"] == 12
    url = start(b, penalty_mode="flat", penalty_flat="7")
    add(b, url, [12, 8, 12], ender="1")
    assert totals(b.get(url).data)["Emma"] == 19


def test_others_see_the_sheet_read_only_and_cannot_change_it(browser):
    owner, other = browser(), browser()
    url = start(owner)
    add(owner, url, [1, 2, 3])
    page = parse(other.get(url).data)
    assert page.by_id("round-form") is None and page.find("form", action=f"{url}/undo") is None
    assert page.by_id("live").attrs["ws-connect"] == f"{url}/ws?lang=en"  # pushes in its language
    before = state(url)
    other.get("/score")
    assert add(other, url, [1, 1, 1], rid="b" * 16).status_code == 403
    assert other.post(f"{url}/undo", {"round": "1"}).status_code == 403
    assert other.get(f"{url}/rounds/1").status_code == 403
    assert state(url) == before
    assert other.get("/score/NOSUCH99").status_code == 404
    assert other.get("/score/../etc").status_code == 404


def test_recent_names_are_offered_and_sheets_are_listed_for_the_device(browser):
    b = browser()
    start(b)
    page = parse(b.get("/score").data)
    assert page.by_id("player-1").attrs["value"] == "Emma"  # the last sheet's players
    assert [o.attrs["value"] for o in page.by_id("recent-names").find_all("option")] == [
        "Emma",
        "Nico",
        "Pat",
    ]
    assert "Emma, Nico, Pat" in page.find(cls="sheets").text()
    assert "No sheets yet" in browser().get("/score").data.decode()  # another device


def test_sheets_follow_the_account_and_never_count_in_stats(browser):
    ann = browser()
    signup(ann, "ann_sheets")
    url = start(ann)
    add(ann, url, [90, 1, 2])
    phone = browser()
    signin(phone, "ann_sheets")
    assert "Emma, Nico, Pat" in phone.get("/score").data.decode()
    add(phone, url, [0, 0, 0], rid="c" * 16)  # the account may score from any device
    assert state(url)[0] == 2
    assert Result.select().count() == 0
    board = ann.get("/leaderboard").data.decode()
    assert "Emma" not in board and "Nico" not in board


def test_a_sheet_of_a_guest_becomes_the_accounts_when_they_sign_up(browser):
    ann = browser()
    url = start(ann)
    signup(ann, "ann_later")
    ann.get("/score")
    sheet = ScoreSheet.get_by_id(url.rsplit("/", 1)[1])
    assert sheet.user is not None and sheet.user.username == "ann_later"
    assert SheetRound.select().count() == 0


def test_the_share_link_has_a_qr_code(browser):
    b = browser()
    url = start(b)
    doc = parse(b.get(url).data)
    share = doc.find(cls="qr")
    assert share is not None and share.find("svg") is not None
    assert f"http://localhost{url}" in doc.by_id("sheet").text()


def test_viewers_get_every_change_pushed(live_server):
    owner, viewer = LiveBrowser(live_server.url), LiveBrowser(live_server.url)
    owner.get("/score")
    status, location = owner.post("/score", {**THREE, **SETTINGS})
    assert status == 303
    path = location.replace(live_server.url, "")
    viewer.get(path)
    ws = websocket.create_connection(
        live_server.url.replace("http://", "ws://") + f"{path}/ws",
        cookie=viewer.cookie_header(),
        origin=live_server.url,
        timeout=3,
    )
    try:
        first = parse(ws.recv())  # the sheet at once on connect
        assert first.by_id("sheet").attrs["data-version"] == "0"
        rid = re.search(r'name="round_id" value="([^"]+)"', owner.get(path)).group(1)
        data = {"score-1": "12", "score-2": "8", "score-3": "12", "ender": "1", "round_id": rid}
        assert owner.post(f"{path}/rounds", data)[0] == 303
        pushed = parse(ws.recv())  # within the socket's 3 s timeout
        sheet = pushed.by_id("sheet")
        assert sheet.attrs["hx-swap-oob"] == "true" and sheet.attrs["data-version"] == "1"
        assert pushed.by_id("round-form") is None  # viewers get the read-only sheet
        ranks = {
            li.find(cls="name").text(): li.find(cls="total").text()
            for li in pushed.find(cls="ranking").find_all("li")
        }
        assert ranks == {"Emma": "24", "Nico": "8", "Pat": "12"}
    finally:
        ws.close()
    bad = websocket.create_connection(
        live_server.url.replace("http://", "ws://") + "/score/NOSUCH99/ws",
        origin=live_server.url,
        timeout=3,
    )
    try:
        opcode, data = bad.recv_data(control_frame=True)
        assert opcode == websocket.ABNF.OPCODE_CLOSE
        assert int.from_bytes(data[:2], "big") == 1008
    finally:
        bad.close()

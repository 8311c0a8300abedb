"""Every page names itself in exactly one <h1> (axe-core's page-has-heading-one; the
browser test tests/e2e/test_accessibility.py runs axe itself). At a table the heading
says the table's code and where it stands, and it lives inside #table, so the htmx
answers and the pushes, which swap that section, carry it too."""

from __future__ import annotations

import random
import re

import pytest

from app.storage.models import Table
from tests.web.account_helpers import PASSWORD, cheap_hashing, signin, signup  # noqa: F401
from tests.web.table_helpers import finish_small_game
from tests.web.web_helpers import Player, parse, play_until, seat_table, start


def one_h1(html: str | bytes) -> str:
    doc = parse(html)
    found = doc.find_all("h1")
    assert len(found) == 1, [h.text() for h in found]
    return found[0].text()


def table_h1(b, htmx: bool) -> str:
    headers = {"HX-Request": "true"} if htmx else {}
    response = b.get(f"/t/{b.code}", headers=headers)
    assert response.status_code == 200
    html = response.data.decode()
    assert ("<html" in html) is not htmx
    return one_h1(html)


@pytest.mark.parametrize("htmx", [False, True])
def test_a_table_says_its_code_and_state_in_one_h1(browser, htmx):
    ann, bob = seat_table(browser, ("Ann", "Bob"), rows=2, cols=2, initial_flips=0)
    code = ann.code
    visitor = browser()
    visitor.code = code
    for b in (ann, bob, visitor):
        assert table_h1(b, htmx) == f"Table {code}, waiting to start"
    start(ann)
    for b in (ann, bob, visitor):
        assert table_h1(b, htmx) == f"Table {code}, round 1"
    rng = random.Random(3)
    assert play_until([Player(ann, "Ann", rng), Player(bob, "Bob", rng)]) == "round_over"
    for b in (ann, bob, visitor):
        assert table_h1(b, htmx) == f"Table {code}, round 1 results"
    Table.update(status=Table.CLOSED).where(Table.code == code).execute()
    response = ann.get(f"/t/{code}")
    assert response.status_code == 404 and one_h1(response.data) == "Not found"


def test_the_final_results_and_a_rematch_keep_one_h1(browser):
    ann, bob = finish_small_game(browser, bots=("greedy",))
    code = ann.code
    for b in (ann, bob):
        assert table_h1(b, htmx=False) == f"Table {code}, final results"
    response = ann.post(f"/t/{code}/rematch/start", {"version": ann.version()}, htmx=True)
    assert response.status_code == 200
    assert one_h1(response.data) == f"Table {code}, game 2, round 1"
    assert one_h1(ann.get(f"/t/{code}/games/1").data) == f"Table {code}, game 1"
    assert one_h1(ann.get(f"/t/{code}/games/1/replay").data).startswith(
        f"Replay: table {code}, game 1"
    )


PAGES = [
    "/",
    "/rules",
    "/signin",
    "/signup",
    "/leaderboard",
    "/offline",
    "/replay",
    "/score",
    "/no-such-page",
    "/t/NOSUCH",
]


@pytest.mark.parametrize("path", PAGES)
def test_every_other_page_has_one_h1(client, path):
    assert one_h1(client.get(path).data).strip()


def test_the_account_pages_have_one_h1(browser):
    b = browser()
    signup(b, "ann")
    for path in ("/account", "/me/stats", "/me/history", "/u/ann"):
        response = b.get(path)
        assert response.status_code == 200, path
        assert one_h1(response.data).strip(), path
    response = b.post("/account/delete", {"delete_password": PASSWORD})
    assert one_h1(response.data) == "Account deleted"
    signin(b, "nobody")  # a failed sign-in shows the form again, with its heading
    assert one_h1(b.get("/signin").data) == "Sign in"


def test_the_score_sheet_pages_have_one_h1(browser):
    b = browser()
    b.get("/score")
    data = {"player-1": "Emma", "player-2": "Nico", "end_score": "100"}
    data |= {"penalty_mode": "multiplier", "penalty_multiplier": "2", "penalty_flat": "10"}
    response = b.post("/score", data)
    assert response.status_code == 303, response.data[:500]
    url = response.headers["Location"]
    assert one_h1(b.get(url).data) == "Score sheet"
    sheet = b.get(url).data.decode()
    round_id = re.search(r'name="round_id" value="([^"]+)"', sheet).group(1)
    scores = {"score-1": "4", "score-2": "9", "ender": "1", "round_id": round_id}
    assert b.post(f"{url}/rounds", scores).status_code == 303
    assert one_h1(b.get(f"{url}/rounds/1").data) == "Correct round 1"

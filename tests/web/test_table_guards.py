"""The table blueprint's guards (CSRF on every POST, unknown tables) and issue 11's lobby points.

Every route at /t/<code>, with good and bad input, with and without htmx. Bad input must
change nothing: the Table row (status, version, rules, state, votes) and the seats are
compared before and after."""

from __future__ import annotations

import json

import pytest

from app.storage.models import Seat, Table
from tests.web.table_helpers import (
    GOOD_RULES,
    NOT_FOUND,
    error_text,
    finish_small_game,
    is_partial,
    playing,
)
from tests.web.web_helpers import (
    each,
    game_of,
    parse,
    seat_of,
    seat_table,
    snapshot,
    table_row,
    whose_turn,
)


# ----- CSRF on every POST ------------------------------------------------------------------
def lobby_case(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    return ann.code, {
        "join": (browser(), "/join", {"name": "Cat"}),
        "rules": (ann, "/rules", GOOD_RULES),
        "bots": (ann, "/bots", {"bot": "greedy"}),
        "remove": (ann, f"/seats/{seat_of(ann.code, 'Bob').id}/remove", {}),
        "leave-seat": (bob, f"/seats/{seat_of(ann.code, 'Bob').id}/remove", {}),
        "start": (ann, "/start", {"version": ann.version()}),
    }


def game_case(browser):
    ann, bob = playing(browser)
    current, _ = whose_turn(ann.code, [ann, bob])
    v = {"version": ann.version()}
    return ann.code, {
        "move": (current, "/move", {"type": "draw", **v}),
        "leave": (current, "/leave", {}),
    }


def over_case(browser):
    ann, bob = finish_small_game(browser)
    v = {"version": ann.version()}
    return ann.code, {
        "rematch": (ann, "/rematch", v),
        "rematch-start": (ann, "/rematch/start", v),
        "next-round": (ann, "/next-round", v),
    }


@pytest.mark.parametrize("case", [lobby_case, game_case, over_case])
def test_every_post_needs_the_csrf_token(browser, case):
    code, posts = case(browser)
    for label, (who, url, data) in posts.items():
        who.get(f"/t/{code}")
        for token in (None, "", "forged-token"):
            for htmx in (False, True):
                before = snapshot(code)
                form = dict(data)
                if token is not None:
                    form["csrf_token"] = token
                headers = {"HX-Request": "true"} if htmx else {}
                response = who.client.post(f"/t/{code}{url}", data=form, headers=headers)
                what = f"{label} token={token!r} htmx={htmx}"
                assert response.status_code == 400, what
                assert "This form has expired" in response.data.decode(), what
                assert snapshot(code) == before, what
        # The same request with the token goes through (the case is a real one).
        if label in ("rules", "bots", "move", "leave", "rematch"):
            response = who.post(f"/t/{code}{url}", data)
            assert response.status_code == 303, label
            assert snapshot(code) != before, label


def test_a_token_of_another_session_is_refused(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    before = snapshot(ann.code)
    response = ann.client.post(
        f"/t/{ann.code}/bots", data={"bot": "greedy", "csrf_token": bob.csrf}
    )
    assert response.status_code == 400
    assert snapshot(ann.code) == before


def test_the_htmx_header_token_is_accepted(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    doc = parse(ann.get(f"/t/{ann.code}").data)
    header = json.loads(doc.find("body").attrs["hx-headers"])
    response = ann.client.post(
        f"/t/{ann.code}/bots",
        data={"bot": "greedy"},
        headers={"HX-Request": "true", **header},
    )
    assert response.status_code == 200 and is_partial(response)
    assert Seat.select().where((Seat.table == ann.code) & (Seat.bot == "greedy")).count() == 1
    # A forged header is refused (CSRFProtect reads the form field first, then it).
    response = ann.client.post(
        f"/t/{ann.code}/bots", data={"bot": "greedy"}, headers={"X-CSRF-Token": "forged"}
    )
    assert response.status_code == 400


# ----- unknown tables on every POST ------------------------------------------------------------
@each(
    "url",
    [
        "/join",
        "/rules",
        "/bots",
        "/seats/1/remove",
        "/start",
        "/move",
        "/next-round",
        "/leave",
        "/rematch",
        "/rematch/start",
    ],
)
def test_posts_to_an_unknown_table(browser, url):
    ann = browser()
    response = ann.post(f"/t/NOSUCH{url}", {"name": "Ann", "version": "0", "type": "draw"})
    assert response.status_code == 404
    assert NOT_FOUND in error_text(response)


# ----- issue 11: Start sends the rules form; a full table offers watching; game numbers ------
def test_start_saves_the_rules_form_as_it_stands(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    doc = parse(ann.page())
    button = next(
        b for b in doc.find_all("button") if b.attrs.get("formaction", "").endswith("/start")
    )
    assert button.attrs["form"] == "rules" and doc.find("form", id="rules") is not None
    form = {**GOOD_RULES, "end_score": "15", "version": ann.version()}
    response = ann.post(f"/t/{ann.code}/start", form, htmx=True)
    assert response.status_code == 200
    table = table_row(ann.code)
    assert table.status == Table.PLAYING
    assert game_of(ann.code).rules.end_score == 15 and game_of(ann.code).rules.cols == 3


@each("htmx", [False, True])
def test_start_with_a_bad_rule_starts_nothing_and_says_why_at_the_field(browser, htmx):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    before = snapshot(ann.code)
    form = {**GOOD_RULES, "rows": "2", "cols": "2", "initial_flips": "4", "version": ann.version()}
    response = ann.post(f"/t/{ann.code}/start", form, htmx=htmx)
    assert response.status_code == 400
    doc = parse(response.data)
    field = doc.by_id("r-flips")
    assert field.attrs["aria-invalid"] == "true" and field.attrs["value"] == "4"
    assert "Cards turned at the start" in doc.by_id("r-flips-error").text()
    assert doc.find("details", cls="fold").attrs.get("open") is not None  # unfolded
    assert snapshot(ann.code) == before
    # A stale page's Start changes nothing either.
    stale = {**GOOD_RULES, "version": str(int(ann.version()) - 1)}
    assert ann.post(f"/t/{ann.code}/start", stale).status_code == 409
    assert snapshot(ann.code) == before


def test_a_full_table_offers_watching_not_joining(browser):
    people = seat_table(browser, ("P1", "P2", "P3", "P4"), bots=("random",) * 4)
    late = browser()
    doc = parse(late.get(f"/t/{people[0].code}").data)
    join = doc.by_id("join")
    assert join.find("form") is None and join.find("input") is None
    assert "Watch this game" in join.text() and "You can watch" in join.text()
    assert "stay on this page to watch" in doc.by_id("lobby-actions").text()


def test_a_rematch_says_which_game_it_is(browser):
    ann, bob = finish_small_game(browser)
    assert "Game 2" not in ann.page()
    for who in (ann, bob):
        assert who.post(f"/t/{ann.code}/rematch", {"version": who.version()}).status_code == 303
    assert ann.post(f"/t/{ann.code}/rematch/start", {"version": ann.version()}).status_code == 303
    roundline = parse(bob.page()).find("p", cls="roundline")
    assert roundline.find("span").text() == "Game 2 · Round 1"

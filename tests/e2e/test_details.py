"""Details players tripped over, each as they saw it: the German leaderboard on a phone,
the next round's countdown, the penalty fields that apply, the score sheet's link."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.e2e_helpers import (
    PHONE,
    Player,
    act,
    create_table,
    game_against_a_bot,
    open_rules,
    play_until_over,
    settle,
    sign_up,
    version,
    wait_version,
)

pytestmark = pytest.mark.e2e


def test_the_german_leaderboard_fits_a_phone(server, new_context, screenshots):
    page = new_context(**PHONE).new_page()
    sign_up(page, server.url, "Maximiliane_Mustermann")
    game_against_a_bot(
        page, server.url, "Maximiliane", **{"End score": "10", "Rows": "2", "Columns": "2"}
    )
    play_until_over([page])
    page.goto(server.url + "/leaderboard?lang=de")
    expect(page.locator("html")).to_have_attribute("lang", "de")
    expect(page.locator(".leaderboard tbody tr")).to_have_count(1)
    wrap = page.locator(".table-wrap")
    assert wrap.evaluate("w => w.scrollWidth <= w.clientWidth"), "the table scrolls sideways"
    last = page.locator(".leaderboard th").last
    assert last.evaluate("th => th.getBoundingClientRect().right <= innerWidth"), "Ø cut off"
    page.screenshot(path=screenshots / "leaderboard-de-phone.png")


def test_the_next_round_counts_down(server, new_context):
    page = new_context(**PHONE).new_page()
    game_against_a_bot(page, server.url, **{"Rows": "2", "Columns": "2"})
    player = Player(seed=1)
    for _ in range(60):
        if page.locator(".board.phase-round_over").count():
            break
        if act(page, player) is None:
            wait_version(page, version(page) + 1, timeout=15_000)
        settle(page)
    seconds = page.locator(".results [data-left]")
    expect(seconds).to_have_count(1)
    first = int(seconds.inner_text())
    assert 15 <= first <= 20  # the server's delay is 20 s, from the round's end
    page.wait_for_timeout(2_500)
    later = int(seconds.inner_text())
    assert first - 3 <= later <= first - 1, (first, later)  # whole seconds, rounded up
    expect(page.locator(".results")).to_contain_text(re.compile(rf"by itself in {later} s"))


def test_only_the_penalty_fields_that_apply_show(server, new_context):
    page = new_context(**PHONE).new_page()
    create_table(page, server.url, "Ann")
    open_rules(page)
    penalty = page.get_by_label("Ender's penalty")
    points = page.get_by_label("Points added")
    multiplier = page.get_by_label("Multiplier")
    shown = {}
    for choice in ("Multiply", "Add points", "Multiply, then add"):
        penalty.select_option(label=choice)
        shown[choice] = (multiplier.is_visible(), points.is_visible())
    assert shown == {
        "Multiply": (True, False),
        "Add points": (False, True),
        "Multiply, then add": (True, True),
    }
    # The folded summary names every rule that differs from a plain game.
    page.get_by_label("Rows of equal cards clear too").check()
    page.get_by_role("button", name="Save rules").click()
    expect(page.locator("#rules-form summary")).to_contain_text("rows clear")


def test_the_score_sheets_link_never_breaks_inside_its_code(server, new_context):
    page = new_context(**{**PHONE, "viewport": {"width": 320, "height": 700}}).new_page()
    page.goto(server.url + "/score")
    for i, name in enumerate(("Emma", "Nico"), start=1):
        page.get_by_label(f"Player {i}", exact=True).fill(name)
    page.get_by_role("button", name="Start the sheet").click()
    code = page.locator(".share-link .sheet-code")
    expect(code).to_be_visible()
    assert code.evaluate("c => c.getClientRects().length") == 1
    assert page.url.endswith(code.inner_text())

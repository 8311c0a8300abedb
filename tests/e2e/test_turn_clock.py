"""The turn clock in the browser at 390×844: two players, one lets the clock run out.
The server offers a 5 s clock here (SKYMO_TURN_CLOCKS): 30 s is too slow for a test."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from tests.e2e.e2e_helpers import (
    PHONE,
    Player,
    act,
    click,
    click_and_wait_change,
    create_table,
    join,
    open_rules,
    settle,
    shoot,
    start,
    sync,
    version,
)

pytestmark = pytest.mark.e2e


@pytest.fixture
def server_env():
    return {"SKYMO_TURN_CLOCKS": "5,30,60,90,120"}


def test_a_player_who_lets_the_clock_run_out_is_played_for_then_comes_back(
    server, new_context, screenshots
):
    ann = new_context(**PHONE).new_page()
    invite = create_table(ann, server.url, "Ann")
    bob = new_context(**PHONE).new_page()
    join(bob, invite, "Bob")
    open_rules(ann)
    form = ann.locator("#rules-form")
    form.get_by_label("Turn clock").select_option("5")
    click_and_wait_change(ann, form.get_by_role("button", name="Save rules"))
    expect(bob.locator("#rules-summary")).to_contain_text("5 s per turn")
    start(ann)
    sync([bob], version(ann))
    for page in (ann, bob):
        expect(page.locator(".countdown.clock")).to_contain_text("s left to turn the first cards")
    shoot(bob, screenshots, "turn-clock-setup", "phone")
    player = Player(seed=1)
    # Ann plays her own turns; Bob lets his clock run out: his first cards, then turns.
    deadline = time.monotonic() + 90
    seen_bobs_clock = False
    heights = set()  # the banner's room, countdown included: nothing below it moves
    back = bob.get_by_role("button", name="I'm back")
    while not back.count():
        assert time.monotonic() < deadline, "Bob was never treated as absent"
        settle(ann)
        heights.add(round(ann.locator(".says").bounding_box()["height"]))
        clock = ann.locator(".countdown.clock")
        if clock.count() and "Bob: " in (clock.text_content() or ""):
            seen_bobs_clock = True
            shoot(ann, screenshots, "turn-clock-others-turn", "phone")
        if not act(ann, player):
            before = version(ann)
            ann.wait_for_function(
                "v => +document.querySelector('#table').dataset.version > v",
                arg=before,
                timeout=15_000,
            )
        sync([bob], version(ann))
    assert seen_bobs_clock, "Ann's page never showed Bob's time to play"
    assert len(heights) == 1, heights
    expect(back).to_be_visible()
    shoot(bob, screenshots, "turn-clock-im-back", "phone")
    assert back.bounding_box()["height"] >= 44
    away = ann.locator(".countdown")
    expect(away).to_contain_text("Bob is away", timeout=15_000)
    click(bob, back)
    expect(back).to_have_count(0)
    expect(ann.locator(".countdown")).not_to_contain_text("Bob is away", timeout=10_000)

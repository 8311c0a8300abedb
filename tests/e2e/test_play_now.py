"""Play now in the browser at 390×844: two people press it and land at one table, which
counts down to its start; the host's "Start now" starts it with bots in the empty seats."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.e2e_helpers import PHONE, click_and_wait_change, horizontal_overflow, settle, shoot

pytestmark = pytest.mark.e2e


def play_now(page, base_url: str, name: str) -> str:
    page.goto(base_url + "/")
    page.get_by_label("Your name").fill(name)
    page.get_by_role("button", name="Play now").click()
    page.wait_for_url(re.compile(r"/t/[A-Z0-9]+$"))
    settle(page)
    return page.url.rsplit("/", 1)[1]


def test_two_people_press_play_now_and_land_at_one_table(server, new_context, screenshots):
    ann = new_context(**PHONE).new_page()
    ann.goto(server.url + "/")
    shoot(ann, screenshots, "play-now-home", "phone")
    code = play_now(ann, server.url, "Ann")
    bob = new_context(**PHONE).new_page()
    assert play_now(bob, server.url, "Bob") == code
    for page in (ann, bob):
        expect(page.locator("#seats")).to_contain_text("Ann")
        expect(page.locator("#seats")).to_contain_text("Bob")
        expect(page.locator("#lobby-actions .countdown")).to_contain_text("The game starts in")
    # The countdown counts down on the page.
    left = int(ann.locator("#lobby-actions [data-left]").text_content())
    ann.wait_for_function(
        "v => +document.querySelector('#lobby-actions [data-left]').textContent < v", arg=left
    )
    expect(bob.get_by_role("button", name="Start now")).to_have_count(0)
    shoot(ann, screenshots, "play-now-lobby", "phone")
    assert horizontal_overflow(ann) <= 0
    start = ann.get_by_role("button", name="Start now")
    assert start.bounding_box()["height"] >= 44
    click_and_wait_change(ann, start)
    for page in (ann, bob):
        expect(page.locator("#table .board")).to_be_visible()
        expect(page.locator(".opponent")).to_have_count(3)  # the other person, two bots
        expect(page.locator(".countdown.clock")).to_be_visible()  # the 60 s turn clock
    shoot(bob, screenshots, "play-now-started", "phone")

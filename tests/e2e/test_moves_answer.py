"""Moves answer at once: a press shows within 100 ms even on a slow network, a second
press sends nothing, and choosing how to play the turn (take the discard pile, or
discard the drawn card and turn one over) asks the server nothing."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.e2e_helpers import (
    PHONE,
    click,
    click_and_wait_change,
    game_against_a_bot,
    settle,
    version,
    wait_version,
)

pytestmark = pytest.mark.e2e

# Chromium's network emulation: 2 s each way, 50 KB/s.
SLOW = {"offline": False, "latency": 2000, "downloadThroughput": 50_000, "uploadThroughput": 50_000}


def requests_of(page) -> list[str]:
    """Every request the page makes from now on (method and path), as a live list."""
    made: list[str] = []
    page.on("request", lambda r: made.append(f"{r.method} {r.url.split('/', 3)[-1]}"))
    return made


def my_turn_to_draw(page) -> None:
    """Through the setup (two cards each) until this page may draw."""
    for _ in range(2):
        reveal = page.locator("form.act-reveal button.card")
        if reveal.count():
            click_and_wait_change(page, reveal.first)
    expect(page.get_by_role("button", name="Draw a card", exact=True)).to_be_visible(timeout=15_000)
    settle(page)


def table_against_a_bot(server, new_context, **options):
    page = new_context(**options).new_page()
    game_against_a_bot(page, server.url, **{"Rows": "2"})
    my_turn_to_draw(page)
    return page


def test_choosing_how_to_play_a_turn_asks_the_server_nothing(server, new_context, screenshots):
    page = table_against_a_bot(server, new_context, **PHONE)
    made = requests_of(page)
    # Take the discard pile's card: the grid offers its cards at once, and back.
    top = page.locator("a[data-mode=take].card").inner_text()
    page.get_by_role("link", name=f"Take the {top}", exact=True).click()
    form = page.locator("form.act-take_discard")
    expect(form).to_be_visible()
    expect(page.locator("p.banner")).to_have_text(f"Choose the card the {top} replaces.")
    assert page.evaluate("document.activeElement.matches('form.grid button.card')")
    page.get_by_role("link", name="Cancel").click()
    expect(page.get_by_role("button", name="Draw a card", exact=True)).to_be_visible()
    assert made == [], made
    # Draw (one request), then "discard and turn a card over" and back, with no request.
    click_and_wait_change(page, page.get_by_role("button", name="Draw a card", exact=True))
    assert len(made) == 1 and made[0].startswith("POST "), made
    flip = page.get_by_role("link", name=re.compile(r"^Discard the -?\d+ and turn a card over$"))
    flip.click()
    expect(page.locator("form.act-discard_drawn")).to_be_visible()
    expect(page.locator("form.act-discard_drawn button.card").first).to_be_focused()
    shoot_name = screenshots / "flip-chosen-phone.png"
    page.screenshot(path=shoot_name)
    page.get_by_role("link", name="Keep it instead").click()
    expect(page.locator("form.act-keep_drawn")).to_be_visible()
    flip.click()
    assert len(made) == 1, made
    # The card turned over: the second and last request of the move.
    before = version(page)
    click(page, page.locator("form.act-discard_drawn button.card").first)
    wait_version(page, before + 1)
    assert len(made) == 2, made
    expect(page.locator(".log li").first).to_contain_text("turned")


def test_a_press_shows_at_once_and_counts_once_on_a_slow_network(server, new_context):
    page = table_against_a_bot(server, new_context, **PHONE)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions", SLOW)
    made = requests_of(page)
    before = version(page)
    # Pressed by script, measured in the page: the mark is there at the next frame.
    shown = page.evaluate(
        """() => new Promise((done) => {
             const button = [...document.querySelectorAll('#table .actions button')]
               .find((b) => b.textContent === 'Draw a card');
             const t0 = performance.now();
             button.click();
             requestAnimationFrame(() => done({
               ms: performance.now() - t0,
               pressed: button.classList.contains('pressed'),
               busy: button.getAttribute('aria-busy'),
               inFlight: !!button.closest('.htmx-request'),
             }));
           })"""
    )
    assert shown["pressed"] and shown["busy"] == "true" and shown["inFlight"], shown
    assert shown["ms"] < 100, shown
    # A second press, and a press on the draw pile, while the first is on its way: dropped.
    page.locator("#table .actions button.primary").click()
    page.locator("#table .pile button.card").click()
    wait_version(page, before + 1, timeout=20_000)
    settle(page)
    posts = [r for r in made if r.startswith("POST ")]
    assert len(posts) == 1, made
    assert version(page) == before + 1
    expect(page.get_by_role("img", name=re.compile(r"^Your drawn card: -?\d+$"))).to_be_visible()

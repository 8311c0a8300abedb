"""Keyboard and pointer: a skip link to the table, focus on the next sensible control
after every action (a card to choose, the draw pile on your turn), a focus ring that is
not the last move's highlight, and words that fit a mouse, a finger and a keyboard."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.e2e_helpers import (
    DESKTOP,
    game_against_a_bot,
    settle,
    version,
    wait_version,
)

pytestmark = pytest.mark.e2e

FOCUSED = "() => { const e = document.activeElement; return e.id || e.className || e.tagName; }"


def focused_matches(page, selector: str) -> bool:
    return page.evaluate("s => document.activeElement.matches(s)", selector)


def press_enter_and_wait(page) -> None:
    before = version(page)
    page.keyboard.press("Enter")
    wait_version(page, before + 1)
    settle(page)


def test_a_whole_turn_by_keyboard_without_tabbing_through_the_page(server, new_context):
    page = new_context(**DESKTOP).new_page()
    game_against_a_bot(page, server.url, **{"Rows": "2"})
    page.reload()  # as a player arriving at the table
    settle(page)
    # The first Tab reaches the skip link; it leads into the table.
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to the table")).to_be_focused()
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert focused_matches(page, "form.act-reveal button.card"), page.evaluate(FOCUSED)
    # Two cards turned with Enter alone: the focus stays on the grid.
    press_enter_and_wait(page)
    assert focused_matches(page, "form.act-reveal button.card"), page.evaluate(FOCUSED)
    press_enter_and_wait(page)
    # On her turn (the bot may play first: its move arrives by a push) the focus is on
    # the draw pile.
    draw_pile = "#table .pile button.card"
    page.wait_for_function("s => document.activeElement.matches(s)", arg=draw_pile)
    # Her turn, with Enter only: draw, then the focus is on a card to put it on.
    press_enter_and_wait(page)
    assert focused_matches(page, "form.act-keep_drawn button.card"), page.evaluate(FOCUSED)
    ring = page.evaluate(
        """() => { const s = getComputedStyle(document.activeElement);
                   return [s.outlineStyle, s.outlineColor, parseFloat(s.outlineWidth)]; }"""
    )
    press_enter_and_wait(page)
    expect(page.locator(".log li").first).to_contain_text("Ann drew and kept")
    # The ring: a solid outline of its own colour, not the last move's blue highlight.
    highlight = page.evaluate(
        """() => { const c = document.createElement('span'); c.className = 'card changed';
                   document.body.append(c); const s = getComputedStyle(c).boxShadow;
                   c.remove(); return s; }"""
    )
    style, colour, width = ring
    assert style == "solid" and width >= 2, ring
    assert colour not in highlight, (ring, highlight)


def test_the_words_fit_every_pointer(server, new_context):
    page = new_context(**DESKTOP).new_page()
    game_against_a_bot(page, server.url, **{"Rows": "2"})
    texts = []
    for _ in range(2):
        texts.append(page.locator("#table").inner_text())
        press = page.locator("form.act-reveal button.card").first
        before = version(page)
        press.click()
        wait_version(page, before + 1)
    page.get_by_role("button", name="Draw a card", exact=True).wait_for(timeout=15_000)
    texts.append(page.locator("#table").inner_text())
    page.get_by_role("button", name="Draw a card", exact=True).click()
    page.get_by_role("img", name=re.compile(r"^Your drawn card")).wait_for()
    texts.append(page.locator("#table").inner_text())
    for template in page.locator("#table template").all():
        texts.append(template.evaluate("t => t.content.textContent"))
    words = " ".join(texts)
    assert not re.search(r"\b(tap|click)", words, re.IGNORECASE), words

"""Ratings and games-finished marks as players see them on a phone: beside names in the
lobby and at the table, and the rating's line on the stats page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.e2e_helpers import (
    PHONE,
    create_table,
    horizontal_overflow,
    join,
    open_rules,
    play_until_over,
    set_rules,
    shoot,
    start,
)

pytestmark = pytest.mark.e2e


def sign_up(page, base: str, username: str) -> None:
    page.goto(base + "/signup")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill("correct horse")
    with page.expect_navigation():
        page.get_by_role("button", name="Create my account").click()


def test_marks_and_the_rating_chart_on_a_phone(server, new_context, screenshots):
    ann = new_context(**PHONE).new_page()
    bob = new_context(**PHONE).new_page()
    sign_up(ann, server.url, "ann")
    sign_up(bob, server.url, "bob")
    invite = create_table(ann, server.url, "ann")
    set_rules(ann, **{"End score": "10", "Rows": "2", "Columns": "2"})
    join(bob, invite, "bob")
    # A newcomer: 1000, provisional, no game over yet.
    mark = bob.locator("#seats li", has_text="ann").locator("small.muted")
    expect(mark).to_have_text("1000?")
    shoot(bob, screenshots, "rating-lobby", "phone")
    start(ann)
    expect(bob.locator("#table .board")).to_be_visible()
    expect(bob.locator(".opponent h3", has_text="ann").locator("small")).to_have_text("1000?")
    assert horizontal_overflow(bob) == 0
    shoot(bob, screenshots, "rating-table", "phone")
    play_until_over([ann, bob])
    # The game's end shows the new marks at once: a rating and the games finished.
    after = bob.locator(".opponent h3", has_text="ann").locator("small")
    expect(after).to_have_text(re.compile(r"^\d+\? · 100\u00a0?%$"))
    assert after.inner_text() != "1000? · 100%"
    shoot(bob, screenshots, "rating-table-over", "phone")
    ann.goto(server.url + "/me/stats")
    rating = ann.locator("#st-rating")
    expect(rating).to_contain_text("provisional")
    expect(ann.locator("#st-finished")).to_have_text("100\u00a0%")
    expect(ann.locator("svg[aria-labelledby='rating-title rating-desc'] circle")).to_have_count(2)
    assert horizontal_overflow(ann) == 0
    shoot(ann, screenshots, "rating-stats", "phone")
    chart = ann.locator("section[aria-labelledby='rating-h']")
    chart.screenshot(path=screenshots / "rating-chart-phone.png")
    ann.goto(server.url + "/leaderboard")
    expect(ann.locator(".leaderboard tbody tr")).to_have_count(2)
    wrap = ann.locator(".table-wrap")
    assert wrap.evaluate("w => w.scrollWidth <= w.clientWidth"), "the table scrolls sideways"
    shoot(ann, screenshots, "rating-leaderboard", "phone")


def test_a_guest_is_told_why_a_strict_table_is_closed_to_them(server, new_context, screenshots):
    host = new_context(**PHONE).new_page()
    invite = create_table(host, server.url, "Host")
    set_rules(host, **{"Only players who finish at least (%)": "80"})
    open_rules(host)
    field = host.locator("#r-least")
    expect(field).to_have_value("80")
    field.scroll_into_view_if_needed()
    shoot(host, screenshots, "rating-rules-field", "phone")
    gus = new_context(**PHONE).new_page()
    gus.goto(invite)
    expect(gus.locator("#join-least")).to_contain_text("finish at least 80%")
    gus.get_by_label("Your name").fill("Gus")
    gus.locator("#join").get_by_role("button", name="Join").click()
    expect(gus.get_by_text("sign in to join.")).to_be_visible()
    assert horizontal_overflow(gus) == 0
    shoot(gus, screenshots, "rating-guest-refused", "phone")
    expect(host.locator("#seats li")).to_have_count(1)

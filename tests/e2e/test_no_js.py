"""Without JavaScript the forms still work: each click submits a real form and the page
loads again with the new table."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from app.features.outcome import a
from tests.e2e.e2e_helpers import DESKTOP, PHONE, RESULTS

pytestmark = pytest.mark.e2e

NUMBER = r"-?\d+"


def article(value) -> str:
    """'a 7' but 'an 8' and 'an 11', as the move log reads."""
    return a(int(value))


def submit(page: Page, target) -> None:
    """Click, and check that the browser loaded a new page (no htmx to swap it in)."""
    with page.expect_navigation() as nav:
        target.click()
    assert nav.value is not None and nav.value.ok, nav.value and nav.value.status
    expect(page.locator(".error[role=alert]")).to_have_count(0)


def my_turn(page: Page) -> bool:
    page.reload()  # nothing is pushed without JavaScript: look again
    return page.get_by_role("button", name="Draw a card", exact=True).count() > 0


def test_joining_and_playing_work_by_submitting_forms(server, new_context):
    host = new_context(**DESKTOP, java_script_enabled=False).new_page()
    guest = new_context(**PHONE, java_script_enabled=False).new_page()

    host.goto(server.url + "/")
    assert host.evaluate("typeof window.htmx") == "undefined"
    host.get_by_label("Your name").fill("Ann")
    submit(host, host.get_by_role("button", name="Create a table"))
    invite = host.locator("#invite").input_value()

    guest.goto(invite)
    assert guest.evaluate("typeof window.htmx") == "undefined"
    guest.get_by_label("Your name").fill("Bea")
    submit(guest, guest.locator("#join").get_by_role("button", name="Join"))
    expect(guest.locator("#seats li.me")).to_contain_text("Bea")

    # A guest who only waits has a page that reloads itself (there are no pushes).
    expect(guest.locator("noscript")).to_have_count(2)
    assert 'http-equiv="refresh"' in guest.content()
    assert 'http-equiv="refresh"' not in host.content()  # the host is busy with the rules

    rules = host.locator("#rules-form")
    rules.locator("summary").click()  # <details> opens without JavaScript
    rules.get_by_label("Rows", exact=True).fill("2")
    # Without a socket nobody counts as present: give "away" players time to move.
    rules.get_by_label("Grace period (s)").fill("120")
    submit(host, host.get_by_role("button", name="Save rules"))
    expect(host.locator("#seats li")).to_have_count(2)  # Bea, seen after the page load
    expect(host.get_by_label("Rows", exact=True)).to_have_value("2")
    submit(host, host.get_by_role("button", name="Start the game"))

    # Both turn two cards over; each click is a form post and a new page.
    for page in (host, guest):
        page.reload()
        for _ in range(2):
            submit(page, page.locator("form.act-reveal button.card").first)
    for page in (host, guest):
        page.reload()
        expect(page.locator(".board")).not_to_have_class(re.compile("phase-setup"))

    first, second = (host, guest) if my_turn(host) else (guest, host)
    assert my_turn(first) and not my_turn(second)
    name = "Ann" if first is host else "Bea"

    # Draw, then discard the drawn card and turn a card over (a link, then a form).
    submit(first, first.get_by_role("button", name="Draw a card", exact=True))
    drawn = first.get_by_role("img", name=re.compile(rf"^Your drawn card: {NUMBER}$"))
    value = re.search(NUMBER, drawn.get_attribute("aria-label")).group()
    submit(
        first,
        first.get_by_role("link", name=f"Discard the {value} and turn a card over", exact=True),
    )
    submit(first, first.locator("form.act-discard_drawn button.card.back").first)
    expect(first.locator(".log li").first).to_contain_text(
        re.compile(rf"^{name} discarded {article(value)} and turned over an? {NUMBER}$")
    )

    # The other player sees it on the next page load, and takes the discard.
    assert my_turn(second)
    expect(second.locator(".log li").first).to_contain_text(f"{name} discarded {article(value)}")
    submit(second, second.get_by_role("link", name=f"Take the {value}", exact=True))
    submit(second, second.locator("form.act-take_discard button.card").first)
    other = "Bea" if name == "Ann" else "Ann"
    expect(second.locator(".log li").first).to_have_text(
        f"{other} took the {value} from the discard pile"
    )
    assert my_turn(first)
    expect(first.locator(RESULTS)).to_have_count(0)

"""The score sheet in a browser: the grid-count helper, the network dropping in the
middle of a game (rounds wait on the device and are sent once when it is back), a
viewer following live, and the same sheet with JavaScript off."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.e2e_helpers import (
    DESKTOP,
    PHONE,
    horizontal_overflow,
    small_targets,
    unnamed_controls,
)

pytestmark = pytest.mark.e2e


def new_sheet(page: Page, base: str, names=("Emma", "Nico", "Pat")) -> str:
    page.goto(base + "/score")
    for i, name in enumerate(names, start=1):
        page.get_by_label(f"Player {i}", exact=True).fill(name)
    page.get_by_role("button", name="Start the sheet").click()
    expect(page.locator("#sheet-h")).to_be_visible()
    return page.url


def type_round(page: Page, scores: dict[str, int], ender: str) -> None:
    form = page.locator("#round-form")
    for name, score in scores.items():
        form.get_by_role("spinbutton", name=name, exact=True).fill(str(score))
    form.locator(".enders").get_by_label(ender, exact=True).check()
    form.get_by_role("button", name="Add round").click()


def totals(page: Page) -> dict[str, str]:
    items = page.locator("#sheet .ranking li")
    return {
        items.nth(i).locator(".name").inner_text(): items.nth(i).locator(".total").inner_text()
        for i in range(items.count())
    }


def problems(page: Page) -> list[str]:
    found = unnamed_controls(page) + small_targets(page)
    if horizontal_overflow(page):
        found.append("wider than the viewport")
    return found


def test_a_sheet_keeps_rounds_typed_offline_and_sends_them_once(server, new_context, screenshots):
    phone = new_context(**PHONE)
    owner = phone.new_page()
    url = new_sheet(owner, server.url)
    viewer = new_context(**DESKTOP).new_page()
    viewer.goto(owner.locator("#sheet a[href*='/score/']").last.get_attribute("href"))
    expect(viewer.locator("#round-form")).to_have_count(0)

    # Round 1, Emma's grid counted with the helper: 5 + 4 + 3 + a cleared column = 12.
    owner.get_by_role("button", name="Count cards: Emma").click()
    counter = owner.locator(".counter")
    for value in ("5", "4", "3"):
        counter.get_by_role("button", name=f"Card {value}", exact=True).click()
    counter.get_by_role("button", name="Cleared column").click()
    expect(counter.locator(".counter-sum")).to_contain_text("6 of 12 cards · total 12")
    owner.screenshot(path=screenshots / "score-helper-phone.png", full_page=True)
    counter.get_by_role("button", name="Use this total").click()
    expect(owner.locator("#score-1")).to_have_value("12")
    type_round(owner, {"Nico": 8, "Pat": 12}, "Emma")
    expect(owner.locator("#add-h")).to_have_text("Round 2")
    assert totals(owner) == {"Nico": "8", "Pat": "12", "Emma": "24"}
    expect(viewer.locator("#sheet .ranking li").last).to_contain_text("24")  # pushed live

    # The network drops: two rounds wait on the phone, visibly.
    phone.set_offline(True)
    type_round(owner, {"Emma": 3, "Nico": 10, "Pat": 7}, "Emma")
    type_round(owner, {"Emma": 20, "Nico": 1, "Pat": 2}, "Nico")
    status = owner.locator("#sync-status")
    expect(status).to_contain_text("Offline: 2 rounds waiting")
    expect(owner.locator("#pending li")).to_have_count(2)
    waiting = owner.evaluate(f"JSON.parse(localStorage.getItem('skymo-sheet-{url[-8:]}')).length")
    assert waiting == 2
    owner.screenshot(path=screenshots / "score-offline-phone.png", full_page=True)
    assert totals(viewer) == {"Nico": "8", "Pat": "12", "Emma": "24"}  # nothing reached it

    # Meanwhile the session's form token changed (as a sign-in elsewhere renews it):
    # the page fetches a fresh one and still sends both.
    owner.evaluate(
        f"""() => {{
          const key = 'skymo-sheet-{url[-8:]}';
          const q = JSON.parse(localStorage.getItem(key));
          q.forEach(r => r.fields.csrf_token = 'expired');
          localStorage.setItem(key, JSON.stringify(q));
        }}"""
    )
    # Back online: both are sent, in order, once.
    phone.set_offline(False)
    expect(status).to_be_hidden(timeout=15_000)
    expect(owner.locator("#pending li")).to_have_count(0)
    expect(owner.locator("#add-h")).to_have_text("Round 4")
    assert totals(owner) == {"Nico": "19", "Pat": "21", "Emma": "47"}
    expect(viewer.locator("#sheet .sheet-rounds tbody tr")).to_have_count(3)
    assert totals(viewer) == totals(owner)
    assert owner.evaluate(f"localStorage.getItem('skymo-sheet-{url[-8:]}')") is None
    owner.reload()
    expect(owner.locator("#sheet .sheet-rounds tbody tr")).to_have_count(3)
    assert problems(owner) == []
    owner.screenshot(path=screenshots / "score-sheet-phone.png", full_page=True)
    viewer.screenshot(path=screenshots / "score-viewer-desktop.png", full_page=True)
    assert problems(viewer) == []


def test_the_sheet_works_without_javascript(server, new_context, screenshots):
    page = new_context(**DESKTOP, java_script_enabled=False).new_page()
    new_sheet(page, server.url, names=("Ann", "Bob"))
    expect(page.get_by_role("button", name="Count cards: Ann")).to_have_count(0)
    type_round(page, {"Ann": 40, "Bob": 30}, "Ann")
    type_round(page, {"Ann": 5, "Bob": 5}, "Nobody")
    assert totals(page) == {"Bob": "35", "Ann": "85"}
    page.get_by_role("link", name="Correct round 1").click()
    page.get_by_role("spinbutton", name="Ann", exact=True).fill("20")
    page.get_by_role("button", name="Save the correction").click()
    assert totals(page) == {"Ann": "25", "Bob": "35"}  # Ann now strictly lowest: 20, plus 5
    page.get_by_role("button", name="Undo round 2").click()
    assert totals(page) == {"Ann": "20", "Bob": "30"}
    type_round(page, {"Ann": 80, "Bob": 0}, "Bob")
    expect(page.locator(".banner")).to_have_text("Game over: Bob wins!")
    page.screenshot(path=screenshots / "score-over-desktop.png", full_page=True)
    page.goto(server.url + "/score")
    expect(page.locator(".sheets")).to_contain_text("Winner: Bob")
    page.screenshot(path=screenshots / "score-list-desktop.png", full_page=True)


def test_the_list_and_new_sheet_form_on_a_phone(server, new_context, screenshots):
    page = new_context(**PHONE).new_page()
    page.goto(server.url + "/score")
    page.get_by_label("Player 1", exact=True).fill("Ann")
    page.get_by_label("Player 2", exact=True).fill("ann")
    page.get_by_role("button", name="Start the sheet").click()  # the same name twice
    expect(page.locator("#player-2-error")).to_contain_text("same name")
    expect(page.get_by_label("Player 2", exact=True)).to_have_attribute("aria-invalid", "true")
    assert problems(page) == []
    page.screenshot(path=screenshots / "score-new-phone.png", full_page=True)


def test_a_round_queued_after_the_end_is_refused_and_said(server, new_context):
    phone = new_context(**PHONE)
    page = phone.new_page()
    page.goto(server.url + "/score")
    page.get_by_label("Player 1", exact=True).fill("Ann")
    page.get_by_label("Player 2", exact=True).fill("Bob")
    page.get_by_label("End score").fill("30")
    page.get_by_role("button", name="Start the sheet").click()
    # Offline only once the sheet has loaded: going offline mid-navigation loses the page.
    expect(page.locator("#round-form")).to_be_visible()
    phone.set_offline(True)
    type_round(page, {"Ann": 31, "Bob": 2}, "Bob")  # Ann passes 30: the game ends
    type_round(page, {"Ann": 1, "Bob": 1}, "Nobody")  # typed before anyone noticed
    expect(page.locator("#pending li")).to_have_count(2)
    phone.set_offline(False)
    status = page.locator("#sync-status")
    expect(status).to_contain_text("This round was not added: Ann 1, Bob 1.", timeout=15_000)
    expect(status).to_contain_text("The game is over")
    expect(page.locator(".banner")).to_have_text("Game over: Bob wins!")
    assert totals(page) == {"Bob": "2", "Ann": "31"}


def test_eight_long_names_fit_a_phone(server, new_context, screenshots):
    page = new_context(**PHONE).new_page()
    names = [f"{n}-{'x' * 14}" for n in ("Ann", "Bob", "Cat", "Dan", "Eve", "Fay", "Gus", "Hal")]
    new_sheet(page, server.url, names=names)
    form = page.locator("#round-form")
    for i, name in enumerate(names):
        form.get_by_role("spinbutton", name=name, exact=True).fill(str(10 + i))
    form.locator(".enders").get_by_label(names[7], exact=True).check()
    form.get_by_role("button", name="Add round").click()
    expect(page.locator("#add-h")).to_have_text("Round 2")
    assert problems(page) == []  # the rounds table scrolls inside its own box
    page.screenshot(path=screenshots / "score-eight-phone.png", full_page=True)

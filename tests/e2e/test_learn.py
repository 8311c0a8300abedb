"""The lesson in Chromium: a newcomer opens /learn on a phone (390×844) and plays the
whole first game by pressing what each hint points at, with screenshots of every step
(learn-<n>-<step>-phone.png); the hint stays above the board without pushing the grid
off the screen, in one live region that every swap keeps; the pointer is still under
reduced motion; without JavaScript the hints are text above the board; on a desktop
too; and "Play a real game" at the end."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.e2e_helpers import (
    DESKTOP,
    PHONE,
    audit,
    axe_violations,
    click,
    headings_one,
    out_of_view,
    settle,
    small_targets,
)

pytestmark = pytest.mark.e2e

# What a hint's `point` names on the page (static/learn-1.css marks the same).
POINTED = {
    "draw": ".actions button.primary",
    "take": ".actions a[data-mode=take]",
    "flip": ".actions a[data-mode=flip]",
    "discard": ".actions button",
    "next": ".results button.primary",
    "grid": "form.grid button.card",
}
# The steps photographed, by what the hint says (the first hint that says it).
STEPS = [
    ("setup", "Welcome!"),
    ("take", "Take the 12 from the discard pile"),
    ("cleared", "Cleared!"),
    ("keep", "is low: keep it"),
    ("discard", "discard it and turn over"),
    ("last-turn", "You turned over your last card"),
    ("end", "The game is over"),
]


def open_lesson(page: Page, base: str, name: str = "Ann") -> None:
    page.goto(base + "/learn")
    page.locator("#learn-name").fill(name)
    page.locator("form[action='/learn'] button").click()
    page.wait_for_url(re.compile(r"/t/[A-Z0-9]+$"))
    settle(page)


def hint(page: Page) -> dict:
    p = page.locator("#hint p")
    return {
        "text": p.inner_text().removeprefix("Hint:").strip(),
        "point": p.get_attribute("data-point"),
        "cell": p.get_attribute("data-cell"),
    }


def target(page: Page, found: dict):
    """The control to press for this hint: the card it names once the grid's cards
    make the hint's kind of move, else the control its `point` names."""
    grid = page.locator("form.grid")
    kind = grid.get_attribute("class") if grid.count() else ""
    mode_needed = {"take": "act-take_discard", "flip": "act-discard_drawn"}.get(found["point"])
    if mode_needed and mode_needed not in kind:
        return page.locator(POINTED[found["point"]])
    if found["cell"]:
        cell = page.locator(f'form.grid button[value="{found["cell"]}"]')
        if cell.count():
            return cell
    if mode_needed:  # the mode is chosen: any of its cards
        return page.locator("form.grid button.card").first
    return page.locator(POINTED[found["point"]]).first


def outlined(locator) -> bool:
    return locator.evaluate("el => getComputedStyle(el).outlineStyle") != "none"


def play_lesson(page: Page, shots=None, size: str = "phone") -> list[str]:
    """Press what each hint points at until the game is over; photograph each step."""
    said, shot = [], set()
    for _ in range(120):
        settle(page)
        found = hint(page)
        said.append(found["text"])
        for name, words in STEPS:
            if shots is not None and name not in shot and words in found["text"]:
                shot.add(name)
                n = [s[0] for s in STEPS].index(name) + 1
                page.screenshot(path=shots / f"learn-{n}-{name}-{size}.png")
        if found["point"] == "next":
            return said
        if not found["point"]:  # the bot plays: its move comes by the socket
            page.wait_for_function(
                "t => document.querySelector('#hint p')?.textContent !== t",
                arg=page.locator("#hint p").text_content(),
            )
            continue
        control = target(page, found).first
        expect(control).to_be_visible()
        assert outlined(control), f"the hint's control is not marked: {found}"
        click(page, control)
        page.wait_for_timeout(50)
    raise AssertionError(f"the lesson did not end: {said[-3:]}")


def test_a_newcomer_plays_the_lesson_on_a_phone_by_following_the_hints(
    server, new_context, screenshots
):
    page = new_context(**PHONE).new_page()
    page.goto(server.url + "/")
    expect(page.locator(".learn-offer")).to_contain_text("New to Skymo?")
    click(page, page.get_by_role("link", name="Learn to play"))
    page.wait_for_url(re.compile(r"/learn$"))
    settle(page)
    assert axe_violations(page) + headings_one(page) + small_targets(page) == []
    page.get_by_label("Your name").fill("Ann")
    page.get_by_role("button", name="Start the lesson").click()
    page.wait_for_url(re.compile(r"/t/[A-Z0-9]+$"))
    settle(page)
    page.screenshot(path=screenshots / "learn-1-setup-phone.png")
    assert audit(page, "lesson setup") == []
    page.evaluate("() => { document.getElementById('hint').kept = true; }")
    expect(page.locator("#hint")).to_have_attribute("aria-live", "polite")

    def grid_in_view() -> list[str]:
        # The whole grid and the hint on the screen, the hint above the grid.
        problems = out_of_view(page, ["#hint p", ".grid.mine .card"])
        hint_box = page.locator("#hint p").bounding_box()
        grid_box = page.locator(".grid.mine").bounding_box()
        if hint_box["y"] + hint_box["height"] > grid_box["y"]:
            problems.append("the hint covers the grid")
        return problems

    assert grid_in_view() == []
    said = []
    for _ in range(3):  # the two cards of the first column, then the 12 to take
        found = hint(page)
        said.append(found["text"])
        click(page, target(page, found).first)
        assert grid_in_view() == []
    said += play_lesson(page, screenshots)
    text = " ".join(said)
    for _name, words in STEPS[:5] + STEPS[6:]:
        assert words in text, words
    # The same live region all along: swaps changed its content, never the element.
    assert page.evaluate("() => document.getElementById('hint').kept === true")
    expect(page.locator("#final-h")).to_have_text("Ann wins!")
    assert audit(page, "lesson end") == []
    click(page, page.get_by_role("button", name="Play a real game"))
    page.wait_for_url(re.compile(r"/t/[A-Z0-9]+$"))
    expect(page.locator(".opponent")).to_have_count(2)  # two bots
    expect(page.locator("#hint")).to_have_count(0)


def test_the_lesson_on_a_desktop(server, new_context, screenshots):
    page = new_context(**DESKTOP).new_page()
    open_lesson(page, server.url)
    page.screenshot(path=screenshots / "learn-1-setup-desktop.png")
    play_lesson(page, screenshots, "desktop")
    expect(page.get_by_role("button", name="Invite friends")).to_be_visible()
    click(page, page.get_by_role("button", name="Invite friends"))
    expect(page.locator("#seats li.me")).to_contain_text("Ann")  # a lobby to invite to


def test_the_pointer_stays_still_under_reduced_motion(server, new_context):
    page = new_context(**PHONE, reduced_motion="reduce").new_page()
    open_lesson(page, server.url)
    card = page.locator('form.grid button[value="0-0"]')
    assert outlined(card)
    assert card.evaluate("el => getComputedStyle(el).animationName") == "none"


def test_without_javascript_the_hints_are_text_above_the_board(server, new_context, screenshots):
    page = new_context(**PHONE, java_script_enabled=False).new_page()
    open_lesson(page, server.url)
    box = page.locator("#hint p")
    expect(box).to_contain_text("Welcome!")
    assert box.bounding_box()["y"] < page.locator("#table").bounding_box()["y"]
    page.screenshot(path=screenshots / "learn-no-js-phone.png")
    page.locator('form.grid button[value="0-0"]').click()
    expect(page.locator("#hint p")).to_contain_text("Turn over 1 more card.")
    page.locator('form.grid button[value="2-0"]').click()
    expect(page.locator("#hint p")).to_contain_text("Take the 12 from the discard pile")
    page.locator(".actions a[data-mode=take]").click()  # the mode's page, from the server
    page.locator('form.grid button[value="1-0"]').click()
    expect(page.locator("#hint p")).to_contain_text("Cleared!")
    page.get_by_role("button", name="Skip the lesson").click()
    page.wait_for_url(server.url + "/")
    expect(page.locator(".learn-offer")).to_have_count(0)  # not offered again


@pytest.mark.parametrize("locale", ["de-DE", "nl-NL", "fr-FR", "pt-BR"])
def test_the_header_keeps_one_row_in_every_language(server, new_context, locale):
    page = new_context(**PHONE, locale=locale).new_page()
    open_lesson(page, server.url)
    header = page.locator("header.top").bounding_box()
    skip = page.locator(".lesson-skip button").bounding_box()
    assert header["height"] < 70 and skip["height"] >= 44
    expect(page.locator("#chat")).to_have_count(0)  # no chat at a lesson

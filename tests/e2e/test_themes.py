"""Both themes on a phone (390×844): every kind of page, in the light and in the dark
colour scheme of the device, with no axe-core violation (contrast included), and
screenshots to look at; and the menu's switch: light chosen on a dark device stays
light after a reload, and on another device once signed in."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.e2e_helpers import (
    PHONE,
    add_bot,
    axe_violations,
    click,
    create_table,
    play_until_over,
    set_rules,
    settle,
    sign_up,
    start,
)

pytestmark = pytest.mark.e2e

# The page's background in each theme (--bg), as the browser computes it.
BACKGROUND = {"light": "rgb(238, 242, 246)", "dark": "rgb(15, 28, 43)"}


def background(page: Page) -> str:
    return page.evaluate("() => getComputedStyle(document.body).backgroundColor")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_kind_of_page_passes_axe_in_each_theme(server, new_context, screenshots, scheme):
    page = new_context(**PHONE, color_scheme=scheme).new_page()
    base = server.url
    problems: list[str] = []

    def check(where: str, shot: str | None = None) -> None:
        settle(page)
        assert background(page) == BACKGROUND[scheme], where  # the device's theme shows
        problems.extend(f"{scheme}, {where}: {p}" for p in axe_violations(page))
        if shot:
            page.screenshot(path=screenshots / f"theme-{shot}-{scheme}.png")

    page.goto(base + "/")
    check("home", "home")
    sign_up(page, base, "ann")  # the game's results feed the stats page's charts
    create_table(page, base, "Ann")
    code = page.url.rsplit("/", 1)[1]
    chat = page.locator("#chat details")
    if not chat.evaluate("d => d.open"):
        click(page, page.locator("#chat summary"))
    page.get_by_label("Your message").fill("Hello")
    click(page, page.locator(".chat-say").get_by_role("button", name="Send"))
    expect(page.locator("#chat-log li")).to_have_count(1)  # a name in its seat's colour
    check("table lobby with the chat")
    set_rules(page, **{"End score": "10", "Rows": "2", "Columns": "3"})
    add_bot(page, "greedy")
    start(page)
    check("table in play", "table")
    play_until_over([page])
    check("results")
    page.goto(base + "/me/stats")
    charts = page.locator("svg.chart")
    expect(charts.first).to_be_visible()
    charts.first.scroll_into_view_if_needed()  # the screenshot shows the charts
    check("stats with charts", "stats")
    for path in ("/leaderboard", "/rules", f"/t/{code}/games/1/replay"):
        page.goto(base + path)
        check(path)
    page.goto(base + "/score")
    for i, name in enumerate(("Emma", "Nico"), start=1):
        page.get_by_label(f"Player {i}", exact=True).fill(name)
    page.get_by_role("button", name="Start the sheet").click()
    expect(page.locator("#sheet-h")).to_be_visible()
    form = page.locator("#round-form")
    form.get_by_role("spinbutton", name="Emma", exact=True).fill("4")
    form.get_by_role("spinbutton", name="Nico", exact=True).fill("9")
    form.locator(".enders").get_by_label("Emma", exact=True).check()
    form.get_by_role("button", name="Add round").click()
    expect(page.locator("#sheet .ranking li").first).to_contain_text("4")
    check("score sheet")
    assert not problems, "\n".join(problems)


def choose_light(page: Page) -> None:
    """Light, from the account's menu in the header (a form: the page reloads)."""
    page.locator("header details.menu:not(.lang-menu) > summary").last.click()
    with page.expect_navigation():
        page.get_by_role("button", name="Light", exact=True).click()
    settle(page)


def test_light_chosen_on_a_dark_device_stays_and_follows_the_account(
    server, new_context, screenshots
):
    base = server.url
    page = new_context(**PHONE, color_scheme="dark").new_page()
    sign_up(page, base, "ann")
    page.goto(base + "/rules")
    assert background(page) == BACKGROUND["dark"]
    choose_light(page)
    assert page.url == base + "/rules"  # back where the switch was used
    assert background(page) == BACKGROUND["light"]
    expect(page.locator("html")).to_have_attribute("data-theme", "light")
    # The menu, folded again after the reload, says which one is chosen.
    expect(page.locator("button[name=theme][value=light]")).to_have_attribute(
        "aria-pressed", "true"
    )
    page.reload()
    assert background(page) == BACKGROUND["light"]
    page.locator("header details.menu:not(.lang-menu) > summary").last.click()
    page.screenshot(path=screenshots / "theme-menu-light.png")
    # Another dark device: dark until it signs in to the account.
    other = new_context(**PHONE, color_scheme="dark").new_page()
    other.goto(base + "/signin")
    assert background(other) == BACKGROUND["dark"]
    other.get_by_label("Username").fill("ann")
    other.get_by_label("Password").fill("correct horse")
    with other.expect_navigation():
        other.get_by_role("button", name="Sign in").click()
    settle(other)
    assert background(other) == BACKGROUND["light"]

"""Every page on a phone (390×844): no axe-core violation of any impact, one <h1> naming
the page; at the table also names for every control and card, touch targets of at least
44×44 px, no sideways scrolling, and no card motion for reduced motion."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.e2e_helpers import (
    PHONE,
    RESULTS,
    Player,
    act,
    add_bot,
    audit,
    axe_violations,
    click_and_wait_change,
    create_table,
    headings_one,
    join,
    play_until_over,
    set_rules,
    settle,
    start,
    sync,
    version,
)

pytestmark = pytest.mark.e2e

STATE = """() => {
  const board = document.querySelector('#table .board');
  if (!board) return 'lobby';
  const parts = [board.className.match(/phase-(\\w+)/)[1]];
  const form = board.querySelector('form.grid.mine');
  if (form) parts.push(form.className.match(/act-(\\w+)/)[1]);
  const drawn = board.querySelector('.pile.drawn');
  if (drawn) parts.push(drawn.querySelector('.back') ? 'someone drew' : 'drawn');
  if (board.querySelector('.actions a, .actions button')) parts.push('my turn');
  if (board.querySelector('.results')) parts.push('results');
  return parts.join(' ');
}"""

# Each of these is checked on at least one of the two pages.
REQUIRED = {
    "setup reveal",
    "play my turn",
    "play",
    "play someone drew",
    "play keep_drawn drawn my turn",
    "play discard_drawn drawn my turn",
    "play take_discard my turn",
    "game_over results",
}


def test_the_table_page_is_accessible_on_a_phone(server, new_context):
    host = new_context(**PHONE).new_page()
    guest = new_context(**PHONE).new_page()
    problems: list[str] = []

    invite = create_table(host, server.url, "Ann")
    problems += audit(host, "lobby (host)")
    guest.goto(invite)
    settle(guest)
    problems += audit(guest, "lobby (visitor)")
    join(guest, invite, "Bea")
    problems += audit(guest, "lobby (guest)")

    set_rules(host, **{"End score": "10", "Rows": "2", "Columns": "3"})
    add_bot(host, "greedy")
    problems += audit(host, "lobby (host, 3 seats)")
    start(host)
    sync([host, guest], version(host))

    pages = [host, guest]
    names = {host: "host", guest: "guest"}
    seen: set[tuple[str, str]] = set()

    def check(page, moment):
        for other in [page] + [p for p in pages if p is not page and moment == "drawn"]:
            if other is not page:
                sync([other], version(page))  # the other player sees a card was drawn
            state = other.evaluate(STATE)
            if (names[other], state) not in seen:
                seen.add((names[other], state))
                problems.extend(audit(other, f"game ({names[other]}) {state}"))

    play_until_over(pages, check)
    missing = REQUIRED - {state for _, state in seen}
    assert not missing, f"not checked: {missing}; checked: {seen}"

    # The rematch: the guest's choice and the host's start, pushed to the other page.
    click_and_wait_change(guest, guest.get_by_role("button", name="Play again"))
    sync([host], version(guest))
    problems += audit(guest, "final results (guest, in for a rematch)")
    problems += audit(host, "final results (host, may start the rematch)")
    click_and_wait_change(host, host.get_by_role("button", name="Start the rematch"))
    sync([guest], version(host))
    problems += audit(host, "rematch (host)") + audit(guest, "rematch (guest)")
    assert not problems, "\n".join(problems)


def test_round_results_and_a_watcher_on_a_phone(server, new_context):
    """The end of a round (not of the game), and the table as a visitor watches it."""
    host = new_context(**PHONE).new_page()
    invite = create_table(host, server.url, "Ann")
    # Beyond one round's reach (6 cards of 12, doubled: 144), so the round ends only it.
    set_rules(host, **{"End score": "300", "Rows": "2", "Columns": "3"})
    add_bot(host, "greedy")
    start(host)
    watcher = new_context(**PHONE).new_page()
    watcher.goto(invite)
    settle(watcher)
    problems = audit(watcher, "game (watcher)")
    player = Player(1)
    for _ in range(60):
        if host.locator("#round-h").count():
            break
        if not act(host, player):
            host.wait_for_timeout(200)  # the bot's turn
    else:
        raise AssertionError("the round did not end")
    assert not host.locator(RESULTS).count()
    problems += audit(host, "round results (host)")
    sync([watcher], version(host))
    problems += audit(watcher, "round results (watcher)")
    assert not problems, "\n".join(problems)


def page_problems(page, where: str) -> list[str]:
    settle(page)
    return [f"{where}: {p}" for p in axe_violations(page) + headings_one(page)]


def test_every_other_page_passes_axe_on_a_phone(server, new_context, tmp_path):
    page = new_context(**PHONE).new_page()
    problems: list[str] = []
    base = server.url

    def visit(path: str, where: str | None = None) -> None:
        page.goto(base + path)
        problems.extend(page_problems(page, where or path))

    for path in ("/", "/rules", "/signin", "/signup", "/leaderboard", "/offline", "/replay"):
        visit(path)
    visit("/no-such-page", "not found")
    visit("/t/NOSUCH", "no such table")

    # A finished game: its page and its replay.
    create_table(page, base, "Ann")
    code = page.url.rsplit("/", 1)[1]
    set_rules(page, **{"End score": "10", "Rows": "2", "Columns": "3"})
    add_bot(page, "greedy")
    start(page)
    play_until_over([page])
    visit(f"/t/{code}/games/1", "a finished game")
    visit(f"/t/{code}/games/1/replay", "its replay")
    page.locator("#replay").get_by_role("link", name="Next").click()
    expect(page.locator("#replay")).to_have_attribute("data-step", "1")
    problems.extend(page_problems(page, "its replay, one step on"))

    # The score sheet: the list and form, a sheet, a round's correction.
    page.goto(base + "/score")
    problems.extend(page_problems(page, "/score"))
    for i, name in enumerate(("Emma", "Nico"), start=1):
        page.get_by_label(f"Player {i}", exact=True).fill(name)
    page.get_by_role("button", name="Start the sheet").click()
    expect(page.locator("#sheet-h")).to_be_visible()
    problems.extend(page_problems(page, "a score sheet"))
    sheet = page.url
    form = page.locator("#round-form")
    form.get_by_role("spinbutton", name="Emma", exact=True).fill("4")
    form.get_by_role("spinbutton", name="Nico", exact=True).fill("9")
    form.locator(".enders").get_by_label("Emma", exact=True).check()
    form.get_by_role("button", name="Add round").click()
    expect(page.locator("#sheet .ranking li").first).to_contain_text("4")
    problems.extend(page_problems(page, "a score sheet with a round"))
    visit(sheet.removeprefix(base) + "/rounds/1", "a round's correction")

    # An account: its page, stats, history; its deletion's notice.
    page.goto(base + "/signup")
    page.get_by_label("Username").fill("ann")
    page.get_by_label("Password").fill("correct horse")
    with page.expect_navigation():
        page.get_by_role("button", name="Create my account").click()
    for path in ("/account", "/me/stats", "/me/history", "/u/ann"):
        visit(path)
    page.goto(base + "/account")
    page.get_by_label("Your password, to confirm").fill("correct horse")
    page.once("dialog", lambda dialog: dialog.accept())
    with page.expect_navigation():
        page.get_by_role("button", name=re.compile("Delete")).click()
    expect(page.locator("h1")).to_have_text("Account deleted")
    problems.extend(page_problems(page, "account deleted"))
    assert not problems, "\n".join(problems)


def test_reduced_motion_turns_card_transitions_off(server, new_context):
    host = new_context(**PHONE).new_page()
    create_table(host, server.url, "Ann")
    set_rules(host, **{"Rows": "2"})
    add_bot(host, "greedy")
    start(host)
    url = host.url

    durations = """() => [...document.querySelectorAll('.card')]
        .map(card => getComputedStyle(card).transitionDuration)"""
    moving = host.evaluate(durations)
    assert moving and all(d != "0s" for d in moving), moving  # the check can tell

    still = new_context(**PHONE, reduced_motion="reduce").new_page()
    still.goto(url)
    expect(still.locator("#table .board")).to_be_visible()
    settle(still)
    assert still.evaluate("() => matchMedia('(prefers-reduced-motion: reduce)').matches")
    calm = still.evaluate(durations)
    assert calm and set(calm) == {"0s"}, calm

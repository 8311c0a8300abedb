"""The table page on a phone (390×844): names for every control and card, touch targets
of at least 44×44 px, no sideways scrolling, and no card motion for reduced motion."""

from __future__ import annotations

import pytest
from e2e_helpers import (
    PHONE,
    add_bot,
    audit,
    create_table,
    join,
    play_until_over,
    set_rules,
    settle,
    start,
    sync,
    version,
)
from playwright.sync_api import expect

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

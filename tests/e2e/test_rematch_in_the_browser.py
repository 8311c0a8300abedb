"""A rematch as players start one: the host on a phone, a guest on a desktop, a bot. The
guest chooses "Play again" and waits for the host, who starts it: both play it (neither
is left watching their own table)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.e2e_helpers import (
    DESKTOP,
    PHONE,
    RESULTS,
    add_bot,
    click_and_wait_change,
    create_table,
    join,
    play_until_over,
    set_rules,
    settle,
    start,
    sync,
    version,
)

pytestmark = pytest.mark.e2e


def test_the_guest_waits_for_the_host_to_start_the_rematch(server, new_context, screenshots):
    host = new_context(**PHONE).new_page()
    guest = new_context(**DESKTOP).new_page()
    invite = create_table(host, server.url, "Ann")
    join(guest, invite, "Ben")
    set_rules(host, **{"End score": "10", "Rows": "2", "Columns": "3"})
    add_bot(host, "greedy")
    start(host)
    sync([host, guest], version(host))
    play_until_over([host, guest])
    code = host.url.rsplit("/", 1)[1]

    # The host may start it at once (the bot makes two); she has no "Play again" to press.
    final = host.locator("section.final")
    expect(final.get_by_role("button", name="Start the rematch")).to_be_visible()
    expect(final.get_by_role("button", name="Play again")).to_have_count(0)

    # Ben chooses to play again: he is told who he plays with (not himself) and whom he
    # waits for, and is offered no start.
    click_and_wait_change(guest, guest.get_by_role("button", name="Play again"))
    said = guest.locator("section.final")
    expect(said).to_contain_text("You are in for a rematch with Ann and Gobbler.")
    expect(said.get_by_role("status")).to_have_text("Waiting for Ann to start the rematch.")
    expect(said.get_by_role("button")).to_have_count(0)
    assert "with Ben" not in said.inner_text()

    # The host's phone shows his choice, pushed; she starts the rematch.
    sync([host], version(guest))
    expect(final).to_contain_text("Ready for a rematch: Ben and Gobbler")
    settle(host)
    final.get_by_role("button", name="Start the rematch").scroll_into_view_if_needed()
    host.screenshot(path=screenshots / "rematch-host-ready-phone.png")
    guest.screenshot(path=screenshots / "rematch-guest-waiting-desktop.png")
    click_and_wait_change(host, final.get_by_role("button", name="Start the rematch"))
    sync([guest], version(host))

    # Both play game 2, each with a grid of their own; nobody is watching.
    for page in (host, guest):
        expect(page.locator("h1")).to_have_text(f"Table {code}, game 2, round 1")
        expect(page.locator("#table .mine-wrap")).to_be_visible()
        expect(page.locator(RESULTS)).to_have_count(0)
        expect(page.get_by_text("you are watching")).to_have_count(0)
    settle(host)
    host.evaluate("window.scrollTo(0, 0)")
    host.screenshot(path=screenshots / "rematch-started-phone.png")

"""The table chat in the browser at phone size (390×844): two players chat during a
game, one mutes the other; the chat is a bar below the table that never covers the
grids, counts unread messages while folded, and tells screen readers what arrived."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.e2e_helpers import (
    PHONE,
    audit,
    click,
    create_table,
    join,
    settle,
    shoot,
    start,
    sync,
    version,
)

pytestmark = pytest.mark.e2e


def chat_lines(page):
    return page.locator("#chat-log li")


def open_chat(page):
    fold = page.locator("#chat details")
    if not fold.evaluate("d => d.open"):
        click(page, page.locator("#chat summary"))


def send(page, text):
    page.get_by_label("Your message").fill(text)
    click(page, page.locator(".chat-say").get_by_role("button", name="Send"))
    expect(page.get_by_label("Your message")).to_have_value("")


def test_two_players_chat_and_one_mutes_the_other(server, new_context, screenshots):
    ann = new_context(**PHONE).new_page()
    invite = create_table(ann, server.url, "Ann")
    bea = new_context(**PHONE).new_page()
    join(bea, invite, "Bea")
    start(ann)
    sync([bea], version(ann))

    # Folded: a bar below the table, never over the grids.
    bar = bea.locator("#chat summary")
    expect(bar).to_be_visible()
    expect(bea.locator("#chat-log")).to_be_hidden()
    below = bea.evaluate(
        """() => { const t = document.querySelector('#table').getBoundingClientRect();
                   const c = document.querySelector('#chat').getBoundingClientRect();
                   return c.top >= t.bottom - 1 && getComputedStyle(
                     document.querySelector('#chat')).position === 'static'; }"""
    )
    assert below

    # Ann writes; Bea's folded bar counts it, her screen reader hears it.
    open_chat(ann)
    send(ann, "Hello <b>Bea</b>, good luck!")
    expect(chat_lines(ann)).to_have_count(1)
    expect(bea.locator(".chat-unread")).to_be_visible()
    expect(bea.locator(".chat-unread .chat-count")).to_have_text("1")
    expect(bea.locator("#chat-said")).to_have_text("Ann: Hello <b>Bea</b>, good luck!")
    bea.locator("#chat").scroll_into_view_if_needed()
    shoot(bea, screenshots, "chat-closed", "phone")

    # Bea opens it: the message, a quick phrase back; the count is gone.
    open_chat(bea)
    expect(chat_lines(bea)).to_have_count(1)
    expect(chat_lines(bea).first).to_contain_text("Hello <b>Bea</b>, good luck!")
    expect(bea.locator(".chat-unread")).to_be_hidden()
    click(bea, bea.locator(".chat-phrases").get_by_role("button", name="Good game!"))
    expect(chat_lines(ann)).to_have_count(2)
    expect(chat_lines(ann).nth(1)).to_contain_text("Bea: Good game!")
    bea.locator("#chat").scroll_into_view_if_needed()
    shoot(bea, screenshots, "chat-open", "phone")
    assert audit(bea, "the chat open") == []  # names, targets, axe-core, overflow

    # The board still works after the chat's pushes: the table was not re-rendered.
    assert version(bea) == version(ann)

    # Ann mutes Bea: Bea's next message reaches Ann's page no more, until she unmutes.
    click(ann, ann.get_by_role("button", name="Mute Bea"))
    expect(ann.get_by_role("button", name="Unmute Bea")).to_be_visible()
    expect(chat_lines(ann)).to_have_count(1)  # her earlier line is hidden too
    send(bea, "can you hear me?")
    expect(chat_lines(bea)).to_have_count(3)
    ann.wait_for_timeout(500)
    expect(chat_lines(ann)).to_have_count(1)
    ann.reload()
    settle(ann)
    expect(chat_lines(ann)).to_have_count(1)  # kept per table in her session
    click(ann, ann.get_by_role("button", name="Unmute Bea"))
    expect(chat_lines(ann)).to_have_count(3)
    send(bea, "there you are")
    expect(chat_lines(ann)).to_have_count(4)

    # Reporting a line turns its flag into a note.
    click(ann, chat_lines(ann).nth(1).get_by_role("button", name="Report this message from Bea"))
    expect(chat_lines(ann).nth(1)).to_contain_text("Reported")
    assert audit(ann, "the host's chat, one player unmuted") == []

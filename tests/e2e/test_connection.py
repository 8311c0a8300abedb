"""The connection, always visible: a bar while the table's socket is down, presses
refused with a message while offline (never lost, never applied twice), a silently dead
link noticed by both ends within 10 s, and the table current again once back."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from tests.e2e.e2e_helpers import (
    PHONE,
    click_and_wait_change,
    create_table,
    join,
    set_rules,
    settle,
    start,
    version,
    wait_version,
)
from tests.e2e.link import Link

pytestmark = pytest.mark.e2e

BAR = "#connection"


@pytest.fixture
def link(server):
    relay = Link(server.port)
    yield relay
    relay.stop()


def two_players(server, new_context, host_url: str):
    """Ann (through `host_url`) and Bob (straight to the server), setup done, Ann to
    draw. Returns their pages."""
    ann = new_context(**PHONE).new_page()
    invite = create_table(ann, host_url, "Ann")
    set_rules(ann, **{"Rows": "2", "Grace period (s)": "60"})
    bob = new_context(**PHONE).new_page()
    join(bob, invite.replace(host_url, server.url), "Bob")
    expect(ann.locator("#seats")).to_contain_text("Bob")
    start(ann)
    for page in (ann, bob):
        wait_version(page, version(ann))
        for _ in range(2):
            click_and_wait_change(page, page.locator("form.act-reveal button.card").first)
    for page in (ann, bob):
        wait_version(page, max(version(ann), version(bob)))
        settle(page)
    # Whoever turned the highest card starts: if that is Bob, he plays his turn.
    if bob.get_by_role("button", name="Draw a card", exact=True).count():
        click_and_wait_change(bob, bob.get_by_role("button", name="Draw a card", exact=True))
        click_and_wait_change(bob, bob.locator("form.act-keep_drawn button.card").first)
        wait_version(ann, version(bob))
    expect(ann.get_by_role("button", name="Draw a card", exact=True)).to_be_visible()
    return ann, bob


def test_a_silently_dead_link_is_noticed_by_both_ends_within_10_s(
    server, link, new_context, screenshots
):
    ann, bob = two_players(server, new_context, link.url)
    settle(ann)
    expect(ann.locator(BAR)).to_be_hidden()
    grid_top = "() => document.querySelector('.mine-wrap').getBoundingClientRect().top"
    bobs_grid = bob.evaluate(grid_top)
    cut = time.monotonic()
    link.cut()
    # Ann's page hears nothing more: within 10 s it says so and the controls wait.
    expect(ann.locator(BAR)).to_be_visible(timeout=10_000)
    page_noticed = time.monotonic() - cut
    expect(ann.locator(BAR)).to_contain_text("Reconnecting")
    # The server's pings go unanswered: within 10 s the others see her connection lost,
    # with the countdown to her turn being played for her.
    away = bob.locator(".opponent", has_text="Ann").get_by_text("connection lost")
    expect(away).to_be_visible(timeout=max(1, 10.5 - (time.monotonic() - cut)) * 1000)
    server_noticed = time.monotonic() - cut
    expect(bob.locator(".countdown")).to_contain_text("Ann is not connected")
    assert bob.evaluate(grid_top) == bobs_grid  # the countdown moved nothing below it
    assert page_noticed <= 10 and server_noticed <= 10.5, (page_noticed, server_noticed)
    bob.screenshot(path=screenshots / "connection-lost-seen-by-others-phone.png")
    # A press while offline is refused with a message, and nothing is sent.
    before = version(bob)
    ann.get_by_role("button", name="Draw a card", exact=True).click()
    expect(ann.locator(BAR)).to_contain_text("Not sent")
    ann.screenshot(path=screenshots / "connection-bar-phone.png")
    # Back: the bar goes, the table is the server's, and the move can be made (once).
    link.restore()
    expect(ann.locator(BAR)).to_be_hidden(timeout=15_000)
    assert version(bob) == before
    wait_version(ann, version(bob))
    click_and_wait_change(ann, ann.get_by_role("button", name="Draw a card", exact=True))
    wait_version(bob, before + 1)
    assert version(bob) == before + 1
    expect(bob.locator(".opponent", has_text="Ann").get_by_text("connection lost")).to_have_count(0)


def test_the_bar_shows_within_2_s_when_the_device_goes_offline(server, new_context):
    ann, bob = two_players(server, new_context, server.url)
    before = version(ann)
    ann.context.set_offline(True)
    went = time.monotonic()
    expect(ann.locator(BAR)).to_be_visible(timeout=2_000)
    assert time.monotonic() - went <= 2
    # The controls say they wait (dimmed), and a press says it was not sent.
    assert ann.evaluate("document.body.classList.contains('offline')")
    ann.get_by_role("button", name="Draw a card", exact=True).click()
    expect(ann.locator(BAR)).to_contain_text("Not sent")
    # Meanwhile Bob's page is unaffected; back online, Ann's table is current.
    ann.context.set_offline(False)
    expect(ann.locator(BAR)).to_be_hidden(timeout=10_000)
    assert version(bob) == before
    click_and_wait_change(ann, ann.get_by_role("button", name="Draw a card", exact=True))
    wait_version(bob, before + 1)

"""Phones first (issue 11), continued, each at 390×844 and at desktop size: reactions,
an installable app with an offline page, names counted as a person sees characters,
chart labels readable on a phone."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tests.e2e.e2e_helpers import (
    PHONE,
    SIZES,
    click,
    create_table,
    game_against_a_bot,
    horizontal_overflow,
    join,
    play_until_over,
    settle,
    shoot,
    sign_up,
    start,
    sync,
    version,
)

pytestmark = pytest.mark.e2e


# ----- 8. reactions --------------------------------------------------------------------
def test_a_reaction_shows_on_the_senders_area_for_everyone(server, new_context, screenshots, size):
    host = new_context(**SIZES[size]).new_page()
    invite = create_table(host, server.url, "Ann")
    guest = new_context(**PHONE).new_page()
    join(guest, invite, "Bea")
    start(host)
    sync([guest], version(host))
    group = host.get_by_role("form", name="Reactions")
    expect(group.get_by_role("button")).to_have_count(6)
    click(host, group.get_by_role("button", name="Party"))
    on_guest = guest.locator(".opponent", has_text="Ann").get_by_role("img", name="Party")
    expect(on_guest).to_be_visible()
    expect(host.locator(".mine-wrap").get_by_role("img", name="Party")).to_be_visible()
    shoot(guest, screenshots, "reaction-guest", "phone")
    shoot(host, screenshots, "reaction", size)
    # A few seconds later it is gone, on every page.
    expect(on_guest).to_have_count(0, timeout=8_000)
    expect(host.locator(".reaction")).to_have_count(0)


# ----- 9. an installable app -----------------------------------------------------------
def test_installable_with_an_offline_page(server, new_context, screenshots, size):
    context = new_context(**SIZES[size])
    page = context.new_page()
    page.goto(server.url + "/")
    settle(page)
    cdp = context.new_cdp_session(page)
    manifest = cdp.send("Page.getAppManifest")
    assert urlsplit(manifest["url"]).path == "/manifest.webmanifest" and not manifest["errors"]
    # The page is controlled by the service worker, which has cached the assets.
    page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=10_000)
    errors = cdp.send("Page.getInstallabilityErrors")["installabilityErrors"]
    # Chrome's own installability rules; a test browser context is always incognito.
    assert [e for e in errors if e["errorId"] != "in-incognito"] == [], errors
    cached = page.evaluate(
        """async () => { const keys = await caches.keys();
           const c = await caches.open(keys[0]);
           return (await c.keys()).map(r => new URL(r.url).pathname); }"""
    )
    assert {"/static/skymo-1.css", "/static/skymo-1.js", "/offline"} <= set(cached), cached
    # The network goes away: the app's own offline page, styled from the cache.
    context.set_offline(True)
    page.goto(server.url + "/t/ABCDEF")
    expect(page.get_by_role("heading", name="No connection")).to_be_visible()
    assert page.evaluate("() => getComputedStyle(document.body).backgroundColor") != (
        "rgba(0, 0, 0, 0)"
    )
    shoot(page, screenshots, "offline", size)
    context.set_offline(False)


# ----- 10. names counted as a person sees characters -----------------------------------
FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"


def test_the_name_box_counts_what_a_person_sees(server, new_context, size):
    page = new_context(**SIZES[size]).new_page()
    page.goto(server.url + "/")
    settle(page)
    name = page.get_by_label("Your name")
    name.fill(FAMILY * 21)
    # The check is loaded with the first keystroke (static/lobby-1.js).
    name.evaluate(
        "el => new Promise((done) => { const t = setInterval(() => "
        "{ if (el.validationMessage) { clearInterval(t); done(); } }, 20); })"
    )
    assert name.evaluate("el => el.validationMessage") == "A name has at most 20 characters."
    page.get_by_role("button", name="Create a table").click()
    assert page.url.rstrip("/") == server.url  # the browser did not send it
    name.fill(FAMILY * 20)  # 20 characters, 220 UTF-16 units: not cut, accepted
    assert name.input_value() == FAMILY * 20
    assert name.evaluate("el => el.validity.valid")
    page.get_by_role("button", name="Create a table").click()
    page.wait_for_url(re.compile(r"/t/[A-Z0-9]+$"))
    expect(page.locator("#seats li.me")).to_contain_text(FAMILY * 20)


# ----- 10. chart labels readable on a phone --------------------------------------------
def test_chart_labels_are_readable(server, new_context, screenshots, size):
    page = new_context(**SIZES[size]).new_page()
    sign_up(page, server.url, "charts_" + size, "a long enough password")
    game_against_a_bot(page, server.url, **{"Rows": "2", "Columns": "2", "End score": "10"})
    play_until_over([page])
    page.goto(server.url + "/me/stats")
    texts = page.locator("svg.chart text")
    assert texts.count() > 3
    # The rendered height of the labels (the SVG scales with the page's width).
    smallest = page.evaluate(
        """() => Math.min(...[...document.querySelectorAll('svg.chart text')]
                 .map(t => t.getBoundingClientRect().height))"""
    )
    assert smallest >= 11, smallest
    assert horizontal_overflow(page) == 0
    page.locator("svg.chart").first.scroll_into_view_if_needed()
    shoot(page, screenshots, "stats-charts", size)

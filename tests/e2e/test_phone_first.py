"""Phones first (issue 11), each at 390×844 and at desktop size: rules never lost, turn
alerts beyond the page, sharing the invite, the board in view after Start, every
opponent in view, a short lobby, what the last move changed (the rest in
test_phone_extras.py)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.e2e_helpers import (
    PHONE,
    SIZES,
    add_bot,
    click,
    click_and_wait_change,
    create_table,
    horizontal_overflow,
    in_view,
    join,
    open_rules,
    set_rules,
    settle,
    shoot,
    small_targets,
    start,
    sync,
    unnamed_controls,
    version,
    wait_version,
)

pytestmark = pytest.mark.e2e


# ----- 1. rules are never lost ---------------------------------------------------------
def test_start_uses_the_rules_form_as_it_stands(server, new_context, screenshots, size):
    host = new_context(**SIZES[size]).new_page()
    create_table(host, server.url, "Ann")
    add_bot(host)
    open_rules(host)
    form = host.locator("#rules-form")
    # A value the server refuses (two cards, two turned at the start): no start, and
    # the message next to its field.
    form.get_by_label("Rows", exact=True).fill("2")
    form.get_by_label("Columns", exact=True).fill("2")
    form.get_by_label("Cards turned at the start").fill("4")
    click(host, host.get_by_role("button", name="Start the game"))
    flips = form.get_by_label("Cards turned at the start")
    expect(flips).to_have_attribute("aria-invalid", "true")
    error = host.locator("#r-flips-error")
    expect(error).to_be_visible()
    assert flips.evaluate(
        "el => el.closest('.field').contains(document.querySelector('#r-flips-error'))"
    )
    expect(host.locator("#table")).to_have_attribute("data-status", "lobby")
    shoot(host, screenshots, "rules-error", size)

    # Typed, never saved: Start plays with what the form shows.
    form.get_by_label("Cards turned at the start").fill("2")
    form.get_by_label("Columns", exact=True).fill("3")
    form.get_by_label("End score").fill("15")
    start(host)
    expect(host.locator(".roundline")).to_contain_text("To 15")
    expect(host.get_by_role("form", name="Your grid").locator(".card")).to_have_count(6)


# ----- 2. your turn is announced beyond the page ---------------------------------------
ALERTS = """
window.__buzz = [];
navigator.vibrate = (ms) => { window.__buzz.push(ms); return true; };
window.__audio = 0;
window.__notes = [];
const Real = window.AudioContext;
const oscillator = Real.prototype.createOscillator;
Real.prototype.createOscillator = function () {
  const made = oscillator.call(this);
  window.__notes.push(made);
  return made;
};
window.AudioContext = function () { window.__audio += 1; return new Real(); };
"""


def open_sound(page):
    """The header's sound menu, opened: its switch and volume."""
    menu = page.locator("details.sound-menu")
    if not menu.evaluate("d => d.open"):
        click(page, menu.locator("summary"))
    return page.get_by_label("Game sounds"), page.get_by_label("Volume")


def test_your_turn_marks_the_title_buzzes_and_beeps(server, new_context, size):
    context = new_context(**SIZES[size])
    context.add_init_script(ALERTS)
    host = context.new_page()
    create_table(host, server.url, "Ann")
    set_rules(host, **{"Rows": "2"})
    add_bot(host)
    assert host.evaluate("window.__audio") == 0  # no sound is made until turned on
    sound, volume = open_sound(host)
    expect(sound).not_to_be_checked()
    expect(volume).to_be_disabled()
    sound.check()
    expect(volume).to_be_enabled()
    host.locator("details.sound-menu summary").click()  # closed again
    start(host)
    # Setup: the host turns two cards over, so it is their turn.
    expect(host).to_have_title(re.compile(r"^\u25CF Your turn · Skymo"))
    assert host.evaluate("window.__buzz") == [200]
    assert host.evaluate("window.__audio") == 1
    # The switch's own sample, then "your turn" (two rising notes).
    notes = host.evaluate("window.__notes.map(o => o.frequency.value)")
    assert notes[-2:] == [660, 880], notes
    for _ in range(2):
        click_and_wait_change(host, host.locator("form.act-reveal button.card").first)
    # Then whoever plays, the title says so, and back after: every title the tab shows
    # is recorded, with whether the page offered a move at that moment.
    host.evaluate(
        """() => { window.__titles = [];
           new MutationObserver(() => window.__titles.push(
               [document.title, document.querySelector('#table').dataset.turn]))
             .observe(document.querySelector('title'), {childList: true}); }"""
    )
    for _ in range(4):
        settle(host)
        if not host.locator(".board.phase-play").count():
            break  # the round is over (a bot ended it)
        draw = host.get_by_role("button", name="Draw a card", exact=True)
        if draw.count():
            click_and_wait_change(host, draw)
            click_and_wait_change(host, host.locator("form.act-keep_drawn button.card").first)
        else:
            wait_version(host, version(host) + 1, timeout=15_000)
    titles = host.evaluate("window.__titles")
    assert any(t.startswith("Skymo") for t, _ in titles), titles  # back after
    for title, turn in titles:
        assert title.startswith("\u25cf Your turn") == (turn == "1"), titles
    buzz = host.evaluate("window.__buzz")
    assert len(buzz) >= 2 and set(buzz) == {200}, buzz  # at the start, and a later turn

    # The sound choice is remembered.
    host.reload()
    expect(open_sound(host)[0]).to_be_checked()


def test_everyone_sees_the_countdown_for_an_away_player(server, new_context, screenshots, size):
    host = new_context(**SIZES[size]).new_page()
    invite = create_table(host, server.url, "Ann")
    guest_context = new_context(**PHONE)
    guest = guest_context.new_page()
    join(guest, invite, "Bea")
    set_rules(host, **{"Grace period (s)": "5"})
    start(host)
    sync([guest], version(host))
    guest_context.close()  # Bea's phone goes away before turning her cards
    # Her last request counts as presence for a minute, then 5 s of grace.
    countdown = host.locator(".countdown")
    expect(countdown).to_contain_text(
        re.compile(r"Bea is not connected: their cards are turned for them in \d+ s")
    )
    first = int(countdown.locator("[data-left]").inner_text())
    assert 5 <= first <= 65
    host.wait_for_function(
        f"() => +document.querySelector('.countdown [data-left]').textContent < {first}"
    )
    shoot(host, screenshots, "countdown", size)


# ----- 3. sharing an invite ------------------------------------------------------------
PLAIN_HTTP = """
Object.defineProperty(Navigator.prototype, 'clipboard', {get: () => undefined});
window.__copied = [];
const exec = document.execCommand.bind(document);
document.execCommand = (cmd) => {
  window.__copied.push(cmd + ':' + String(getSelection()) + (document.activeElement.value || ''));
  exec(cmd);
  return true;
};
window.__shared = [];
navigator.share = (data) => { window.__shared.push(data); return Promise.resolve(); };
"""


def test_the_invite_copies_without_a_clipboard_api_and_shares(server, new_context, size):
    context = new_context(**SIZES[size])
    context.add_init_script(PLAIN_HTTP)
    host = context.new_page()
    invite = create_table(host, server.url, "Ann")
    assert host.evaluate("navigator.clipboard") is None
    click(host, host.get_by_role("button", name="Copy link"))
    expect(host.locator("#invite-said")).to_have_text("Copied")
    copied = host.evaluate("window.__copied")
    assert copied and copied[0].startswith("copy:") and invite in copied[0]
    share = host.get_by_role("button", name="Share")
    expect(share).to_be_visible()
    click(host, share)
    assert host.evaluate("window.__shared")[0]["url"] == invite


# ----- 4. after Start the board is in view; 6. a short lobby -----------------------------
def test_a_short_lobby_and_the_banner_in_view_after_start(server, new_context, screenshots, size):
    host = new_context(**SIZES[size]).new_page()
    invite = create_table(host, server.url, "Ann")
    guest = new_context(**SIZES[size]).new_page()
    guest.goto(invite)
    settle(guest)
    shoot(guest, screenshots, "lobby-visitor", size)
    join(guest, invite, "Bea")
    add_bot(host)
    # The invite and Start are on the first screen; the rules are folded to one line.
    assert in_view(host, "#invite")
    assert in_view(host, host.get_by_role("button", name="Start the game"))
    fold = host.locator("#rules-form details")
    assert not fold.evaluate("d => d.open")
    expect(fold.locator("summary")).to_contain_text("To 100 · 3×4 grid")
    shoot(host, screenshots, "lobby-host", size)
    shoot(guest, screenshots, "lobby-guest", size)
    open_rules(host)
    host.screenshot(path=screenshots / f"lobby-host-rules-{size}-full.png", full_page=True)

    host.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    guest.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    start(host)
    sync([guest], version(host))
    for page in (host, guest):
        settle(page)
        assert in_view(page, ".banner")
    shoot(host, screenshots, "board-start", size)


# ----- 5. every opponent in view -------------------------------------------------------
def test_seven_opponents_all_in_view(server, new_context, screenshots, size):
    host = new_context(**SIZES[size]).new_page()
    create_table(host, server.url, "Ann")
    for kind in ("greedy", "random", "strong") * 2 + ("greedy",):
        add_bot(host, kind)
    start(host)
    settle(host)
    names = [n.inner_text() for n in host.locator(".opponent .oname").all()]
    assert len(names) == 7
    # The header is one line, at phone size too: the board starts right under it.
    assert host.locator("header.top").evaluate("el => el.getBoundingClientRect().height") <= 64
    for name in names:
        grid = host.get_by_role("group", name=f"{name}'s grid", exact=True)
        expect(grid).to_be_visible()
        assert in_view(host, grid), name
    assert horizontal_overflow(host) == 0
    # no sideways scrolling strip (1 px: rounding of fractional columns)
    assert host.locator(".opponents").evaluate("el => el.scrollWidth <= el.clientWidth + 1")
    assert not unnamed_controls(host)
    assert not small_targets(host)
    shoot(host, screenshots, "board-8-players", size)


# ----- 7. what happened: highlights, motion, face-up points -----------------------------
# Every card marked "changed", as it is marked (the ring lasts 1.6 s: a slow test must
# not miss it), with the animation it runs then.
WATCH_CHANGES = """
window.__changed = [];
new MutationObserver((records) => {
  for (const r of records) {
    const card = r.target;
    if (card.__seen || !card.classList.contains('changed')) continue;
    card.__seen = true;
    window.__changed.push(card.closest('.grid').getAttribute('aria-label') + ' '
      + getComputedStyle(card).animationName);
  }
}).observe(document, {subtree: true, attributes: true, attributeFilter: ['class']});
"""


@pytest.mark.parametrize("motion", ["no-preference", "reduce"])
def test_the_last_move_is_highlighted(server, new_context, screenshots, size, motion):
    context = new_context(**SIZES[size], reduced_motion=motion)
    context.add_init_script(WATCH_CHANGES)
    host = context.new_page()
    create_table(host, server.url, "Ann")
    set_rules(host, **{"Rows": "2"})
    add_bot(host)
    start(host)
    assert host.evaluate("window.__changed") == []  # a new round: nothing is marked
    # The bot turned its two cards at the start: the host turns theirs; each one flips.
    click_and_wait_change(host, host.locator("form.act-reveal button.card").first)
    host.wait_for_function("() => window.__changed.length > 0")
    changed = host.evaluate("window.__changed")
    assert changed == ["Your grid " + ("none" if motion == "reduce" else "flip")], changed
    # The highlight fades; nothing stays marked.
    host.wait_for_function("() => !document.querySelector('.card.changed')", timeout=5_000)
    click_and_wait_change(host, host.locator("form.act-reveal button.card").first)

    # A bot's move shows in its grid.
    for _ in range(20):
        if any(c.startswith("Gobbler's grid") for c in host.evaluate("window.__changed")):
            break
        if host.get_by_role("button", name="Draw a card", exact=True).count():
            click_and_wait_change(host, host.get_by_role("button", name="Draw a card", exact=True))
            click_and_wait_change(host, host.locator("form.act-keep_drawn button.card").first)
        else:
            wait_version(host, version(host) + 1, timeout=15_000)
    seen = host.evaluate("window.__changed")
    assert any(c.startswith("Gobbler's grid") for c in seen), seen
    assert all(c.endswith(" none") == (motion == "reduce") for c in seen), seen
    if motion != "reduce":
        shoot(host, screenshots, "board-highlight", size)


def test_face_up_points_are_shown_during_a_round(server, new_context, size):
    host = new_context(**SIZES[size]).new_page()
    create_table(host, server.url, "Ann")
    open_rules(host)
    host.locator("#rules-form").get_by_label("Show running totals").check()
    set_rules(host, **{"Rows": "2"})
    add_bot(host)
    start(host)
    for _ in range(2):
        click_and_wait_change(host, host.locator("form.act-reveal button.card").first)
    # Read in one go (a bot may move meanwhile): each area's text and its face-up cards.
    areas = host.evaluate(
        """() => [...document.querySelectorAll('.opponent, .mine-wrap')].map(a => [
             a.querySelector('.showing [aria-hidden]').textContent,
             a.querySelector('.showing .sr-only').textContent,
             [...a.querySelectorAll('.grid .card')].map(c => c.textContent.trim())
               .filter(t => t !== '').reduce((s, t) => s + Number(t), 0),
             a.querySelectorAll('.grid .card:not(.back):not(.gone)').length])"""
    )
    assert len(areas) == 2, areas
    for text, said, points, up in areas:
        # Short on screen; in full for a screen reader: points, not a count of cards.
        assert up >= 2 and text == f"Face up: {points}", areas
        assert said == f"Points of the face-up cards: {points}", areas

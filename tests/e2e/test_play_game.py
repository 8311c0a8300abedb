"""A whole game in the browser: three people (one on a phone) and a bot, by clicks only,
every move pushed live to the other pages."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.e2e_helpers import (
    DESKTOP,
    PHONE,
    RESULTS,
    add_bot,
    click,
    click_and_wait_change,
    create_table,
    join,
    mark_alive,
    play_until_over,
    ranking,
    set_rules,
    settle,
    start,
    still_alive,
    sync,
    version,
)

pytestmark = pytest.mark.e2e


@pytest.fixture
def server_env():
    # Rounds start when everyone pressed "Next round", never by the timer mid-test.
    return {"SKYMO_NEXT_ROUND_SECONDS": "600"}


def shoot(page, screenshots, name, top=True):
    """The viewport as the player sees it (from the top, or where the last click left
    it), and the whole page for review."""
    settle(page)
    if top:
        page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=screenshots / f"{name}.png")
    page.screenshot(path=screenshots / f"{name}-full.png", full_page=True)


def test_three_people_and_a_bot_play_a_whole_game(server, new_context, screenshots):
    phone = new_context(**PHONE).new_page()
    desk1 = new_context(**DESKTOP).new_page()
    desk2 = new_context(**DESKTOP).new_page()
    pages = [phone, desk1, desk2]

    # The host (on the phone) creates a table; the others open the invite link.
    invite = create_table(phone, server.url, "Ann")
    join(desk1, invite, "Bea")
    join(desk2, invite, "Cal")
    for page in pages:
        mark_alive(page)
        expect(page.locator("#seats li")).to_have_count(3)  # the joins were pushed

    # A short game; the guests see the new rules without reloading.
    set_rules(phone, **{"End score": "10", "Rows": "2"})
    for page in (desk1, desk2):
        expect(page.locator("#rules-summary")).to_contain_text("2 rows × 4 columns")
        expect(page.locator("#rules-summary dd").first).to_have_text("10")

    add_bot(phone, "greedy")
    for page in pages:
        expect(page.locator("#seats li")).to_have_count(4)
        expect(page.locator("#seats")).to_contain_text("greedy bot")
    shoot(phone, screenshots, "lobby-phone")
    shoot(desk1, screenshots, "lobby-desktop")

    start(phone)
    sync(pages, version(phone))
    for page in pages:
        expect(page.locator("#table .board")).to_be_visible()

    shot = {}

    def observe(page, moment):
        """Mid-game, on a player's turn with the drawn card showing."""
        size = "phone" if page is phone else "desktop"
        if moment == "drawn" and size not in shot:
            shot[size] = True
            shoot(page, screenshots, f"table-{size}", top=False)

    moves = play_until_over(pages, observe)
    assert any("draw" in m for m in moves), moves
    assert shot == {"phone": True, "desktop": True}, moves

    # Everyone sees the same final ranking, pushed live: no page was ever reloaded.
    for page in pages:
        expect(page.locator(RESULTS)).to_have_text(re.compile(r"wins!|share the win!"))
        assert still_alive(page), "a page was reloaded during the game"
    final = ranking(phone)
    assert sorted(name for _, name, _ in final) == ["Ann", "Bea", "Cal", "Gobbler"]
    assert ranking(desk1) == final
    assert ranking(desk2) == final
    assert int(final[0][2]) <= int(final[-1][2])
    assert any(int(total) >= 10 for _, _, total in final)

    shoot(phone, screenshots, "results-phone")
    shoot(desk1, screenshots, "results-desktop")

    # The game record downloads as JSON.
    with desk2.expect_download() as download:
        desk2.get_by_role("link", name="Download the game record").click()
    record = json.loads(download.value.path().read_text())
    assert record["format"] == "skymo.game/1"


def test_a_name_being_typed_survives_someone_else_joining(server, new_context):
    """Cleo types her name; Dan joins meanwhile (a push to Cleo's page); her name is still
    there and Join seats her."""
    ann = new_context(**DESKTOP).new_page()
    invite = create_table(ann, server.url, "Ann")
    cleo = new_context(**PHONE).new_page()
    cleo.goto(invite)
    settle(cleo)
    cleo.get_by_label("Your name").fill("Cleo")
    join(new_context(**DESKTOP).new_page(), invite, "Dan")
    expect(cleo.locator("#seats")).to_contain_text("Dan")  # the push arrived
    settle(cleo)
    expect(cleo.get_by_label("Your name")).to_have_value("Cleo")
    with cleo.expect_navigation():
        cleo.locator("#join").get_by_role("button", name="Join").click()
    expect(cleo.locator("#seats li.me")).to_contain_text("Cleo")


def test_a_late_play_again_is_told_the_rematch_began_without_them(server, new_context, screenshots):
    """Bea's pushes stop arriving at the game's end (a phone losing its signal): Ann starts
    the rematch with the bot, and Bea, still shown the finished game, presses "Play
    again". She is told what happened, and sees the new game as a watcher."""
    host = new_context(**DESKTOP).new_page()
    guest = new_context(**PHONE).new_page()
    held = {"on": False}

    def relay(ws):
        to_server = ws.connect_to_server()
        to_server.on_message(lambda message: None if held["on"] else ws.send(message))

    guest.route_web_socket(re.compile(r"/ws"), relay)
    invite = create_table(host, server.url, "Ann")
    join(guest, invite, "Bea")
    set_rules(host, **{"End score": "10", "Rows": "2"})
    add_bot(host, "greedy")
    start(host)
    sync([host, guest], version(host))
    play_until_over([host, guest])

    held["on"] = True
    click_and_wait_change(host, host.get_by_role("button", name="Start the rematch"))
    expect(host.locator("#table .board")).to_be_visible()
    expect(guest.locator(RESULTS)).to_be_visible()  # nothing reached Bea's page

    click(guest, guest.get_by_role("button", name="Play again"))
    alert = guest.locator("#table .error[role=alert]")
    expect(alert).to_have_text("The new game began without you: you are watching it.")
    expect(guest.locator(RESULTS)).to_have_count(0)  # the new game, as a watcher sees it
    assert guest.get_by_role("button", name="Draw a card", exact=True).count() == 0
    shoot(guest, screenshots, "rematch-late-phone")

"""A page that lost its socket shows the present table once it is back: on connect the
server sends the current table, so moves made meanwhile are not missed."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, WebSocketRoute, expect

from tests.e2e.e2e_helpers import (
    DESKTOP,
    PHONE,
    Player,
    act,
    create_table,
    join,
    mark_alive,
    set_rules,
    settle,
    start,
    still_alive,
    sync,
    version,
    wait_version,
)

pytestmark = pytest.mark.e2e

DRAW = {"name": "Draw a card", "exact": True}


class Socket:
    """The page's socket to the table, through Playwright, so a test can cut it.

    Cut: the page side is closed with 1012 (service restart), which htmx's ws extension
    answers by reconnecting; while cut, a new socket is held open without a server, so
    the page gets nothing. Restore: the held socket is closed the same way and the next
    one reaches the server again."""

    def __init__(self, page: Page):
        self.up = True
        self.routes: list[WebSocketRoute] = []
        page.route_web_socket(re.compile(r"/ws(\?|$)"), self._open)

    def _open(self, ws: WebSocketRoute) -> None:
        self.routes.append(ws)
        if self.up:
            ws.connect_to_server()

    def _close_all(self) -> None:
        routes, self.routes = self.routes, []
        for ws in routes:
            ws.close(code=1012, reason="test")

    def cut(self) -> None:
        self.up = False
        self._close_all()

    def restore(self) -> None:
        self.up = True
        self._close_all()


def two_players_in_play(server, new_context):
    """Ann (desktop) and Bea (phone) past the setup; returns (whose turn, the other)."""
    ann = new_context(**DESKTOP).new_page()
    bea = new_context(**PHONE).new_page()
    sockets = {ann: Socket(ann), bea: Socket(bea)}
    invite = create_table(ann, server.url, "Ann")
    join(bea, invite, "Bea")
    set_rules(ann, **{"Rows": "2", "Grace period (s)": "120"})  # nobody is played for
    start(ann)
    pages = [ann, bea]
    sync(pages, version(ann))
    players = {page: Player(seed=i) for i, page in enumerate(pages)}
    for page in pages:
        while act(page, players[page]) == "reveal":
            sync(pages, version(page))
    sync(pages, max(version(p) for p in pages))
    mover = next(p for p in pages if p.get_by_role("button", **DRAW).count())
    other = bea if mover is ann else ann
    for page in pages:
        mark_alive(page)
    return mover, other, sockets[other], players[mover]


def test_a_dropped_socket_comes_back_with_the_moves_made_meanwhile(server, new_context):
    mover, watcher, socket, player = two_players_in_play(server, new_context)
    before = version(watcher)
    log_before = watcher.locator(".log li").first.inner_text()

    socket.cut()
    assert act(mover, player) not in (None, "reveal")  # a whole turn, while the socket is down
    now = version(mover)
    assert now > before
    settle(watcher)
    assert version(watcher) == before, "a push arrived over a cut socket"
    expect(watcher.get_by_role("button", **DRAW)).to_have_count(0)

    socket.restore()
    wait_version(watcher, now, timeout=15_000)
    settle(watcher)
    expect(watcher.get_by_role("button", **DRAW)).to_be_visible()  # it is their turn now
    expect(watcher.locator(".log li").first).not_to_have_text(log_before)
    assert watcher.locator(".log li").first.inner_text() == (
        mover.locator(".log li").first.inner_text()
    )
    assert still_alive(watcher), "the page was reloaded instead of reconnecting"


def test_back_from_the_rules_page_shows_the_current_table(server, new_context):
    mover, watcher, _, player = two_players_in_play(server, new_context)
    header = watcher.locator("header")
    rules = header.get_by_role("link", name="Rules")
    if not rules.is_visible():  # on a phone the rules are in the header's menu
        header.locator("summary", has_text="Menu").click()
    with watcher.expect_navigation():
        rules.click()
    expect(watcher.get_by_role("heading", name="How to play Skymo")).to_be_visible()

    assert act(mover, player) not in (None, "reveal")
    now = version(mover)

    watcher.go_back()
    wait_version(watcher, now)
    settle(watcher)
    expect(watcher.get_by_role("button", **DRAW)).to_be_visible()
    assert watcher.locator(".log li").first.inner_text() == (
        mover.locator(".log li").first.inner_text()
    )


def test_a_move_sends_the_page_id_its_socket_carries(server, new_context):
    """htmx sends the page's id (hx-headers on #live) with every move, the same id as its
    socket's (`?p=`): the push of the page's own move skips that socket, the answer
    shows it, and the other page is pushed it."""
    mover, watcher, _, player = two_players_in_play(server, new_context)
    sent = []
    mover.on("request", lambda r: sent.append(r.headers) if r.url.endswith("/move") else None)
    assert act(mover, player) not in (None, "reveal")
    live = mover.locator("#live").get_attribute("ws-connect")
    page_id = re.search(r"[?&]p=([\w-]+)", live).group(1)
    assert sent and all(h.get("x-skymo-page") == page_id for h in sent)
    wait_version(watcher, version(mover))

"""Visible pages across processes (app.cluster.looking), for turn alerts: a seat's page
visible in one process holds the alerts another process would send."""

from __future__ import annotations

import time

from app.cluster import looking as looking_module
from app.cluster.broker import Broker
from app.cluster.looking import SharedLooking
from app.live.hub import Connection, Hub
from tests.cluster.conftest import REDIS_URL


def test_a_visible_page_in_one_process_is_seen_by_another(redis_prefix):
    a, b = Broker(REDIS_URL, redis_prefix), Broker(REDIS_URL, redis_prefix)
    on_a, on_b = SharedLooking(a), SharedLooking(b)
    hub = Hub()
    hub.on_looking(on_a.mark)
    page = Connection(code="ABC", seat_id=7, csrf="", send=lambda html: None)
    hub.add(page)  # a page opens visible
    assert on_b.looking("ABC", 7)
    assert not on_b.looking("ABC", 8)
    hub.shown(page, False)  # its phone locked
    assert not on_b.looking("ABC", 7)
    hub.shown(page, True)
    assert on_b.looking("ABC", 7)
    hub.remove(page)
    assert not on_b.looking("ABC", 7)


def test_a_dead_process_holds_nothing_for_long(redis_prefix, monkeypatch):
    a, b = Broker(REDIS_URL, redis_prefix), Broker(REDIS_URL, redis_prefix)
    monkeypatch.setattr(looking_module, "LASTS", 0.3)
    SharedLooking(a).beat([("ABC", 7)])  # then the process dies: no more beats
    on_b = SharedLooking(b)
    assert on_b.looking("ABC", 7)
    time.sleep(0.5)
    assert not on_b.looking("ABC", 7)


def test_redis_down_counts_as_not_looking():
    down = SharedLooking(Broker("redis://127.0.0.1:1/0", "skymo-down:"))
    down.mark("ABC", 7, True)  # logged, nothing raised
    assert not down.looking("ABC", 7)

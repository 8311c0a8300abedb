"""Turn alerts in the browser: the switch in the header's menu subscribes this device,
the page tells the server when it is hidden, the server's push reaches a push service
double, and the service worker shows what it carries.

What is real and what is not: headless Chromium has no push service (a real
pushManager.subscribe() fails with "AbortError: Registration failed - permission
denied", notifications granted or not), so that one browser API, PushManager's
subscribe() and getSubscription(), is a stub giving the test's own subscription (keys
made here, the endpoint on the double). Everything else is the page's and the server's
own code: static/push-1.js loaded on the switch, the permission asked, the server's key
passed to subscribe(), the subscription posted, the visibility sent over the socket,
the server's encrypted push (decrypted here with the subscription's keys), and the
service worker's push handler, given the decrypted message through DevTools
(ServiceWorker.deliverPushMessage), showing the notification. Not exercised: a tap on
the notification (notificationclick: headless Chromium shows no notification to tap)."""

from __future__ import annotations

import base64
import json
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.e2e_helpers import PHONE, create_table, join, settle, shoot, start
from tests.web.push_double import PushDouble

pytestmark = pytest.mark.e2e

STUB = """
window.__keys = [];
PushManager.prototype.getSubscription = async function () { return window.__sub || null; };
PushManager.prototype.subscribe = async function (options) {
  window.__keys.push(btoa(String.fromCharCode(...new Uint8Array(options.applicationServerKey))));
  const json = %s;
  window.__sub = { endpoint: json.endpoint, toJSON: () => json };
  return window.__sub;
};
"""
HIDE = """() => {
  Object.defineProperty(document, "visibilityState", { value: "hidden", configurable: true });
  document.dispatchEvent(new Event("visibilitychange"));
}"""


@pytest.fixture
def server_env():
    return {"SKYMO_ALERTS_LOOPBACK_HTTP": "1"}


@pytest.fixture
def double():
    with PushDouble() as d:
        yield d


def registration_id(cdp, page) -> str:
    found = []
    cdp.on("ServiceWorker.workerRegistrationUpdated", lambda e: found.extend(e["registrations"]))
    cdp.send("ServiceWorker.enable")
    for _ in range(100):
        if found:
            return found[0]["registrationId"]
        page.wait_for_timeout(50)
    raise AssertionError("no service worker registration")


def bob_with_alerts(server, new_context, double, invite: str):
    """Bob joins from a phone whose browser gives his push double's subscription, and
    turns "Tell me when it's my turn" on: (his page, its context, his device)."""
    device = double.device("bob")
    context = new_context(**PHONE)
    context.grant_permissions(["notifications"], origin=server.url)
    context.add_init_script(STUB % json.dumps(device.subscription()))
    bob = context.new_page()
    join(bob, invite, "Bob")
    bob.locator("[data-sound-menu] summary").click()
    bob.get_by_label("Tell me when it's my turn").check()
    expect(bob.get_by_role("status").filter(has_text="Alerts on")).to_be_visible()
    return bob, context, device


def test_a_hidden_player_is_alerted_and_the_worker_shows_it(
    server, new_context, double, screenshots
):
    ann = new_context(**PHONE).new_page()
    invite = create_table(ann, server.url, "Ann")
    code = invite.rsplit("/", 1)[1]
    bob, bob_context, device = bob_with_alerts(server, new_context, double, invite)
    switch = bob.get_by_label("Tell me when it's my turn")
    shoot(bob, screenshots, "alerts-switch", "phone")
    key = bob.request.get(f"{server.url}/t/{code}/alerts").json()["key"]
    given = bob.evaluate("window.__keys")
    assert [base64.b64encode(base64.urlsafe_b64decode(key + "=")).decode()] == given

    bob.evaluate(HIDE)  # the phone locks: the page says so over its socket
    bob.wait_for_timeout(300)
    start(ann)
    pushes = double.wait(1)
    assert len(pushes) == 1
    shown = device.read(pushes[0][2])
    assert shown == {
        "title": f"Skymo · table {code}",
        "body": f"Round 1 begins at table {code}.",
        "url": f"/t/{code}",
        "tag": f"skymo-{code}",
    }

    cdp = bob_context.new_cdp_session(bob)
    cdp.send(
        "ServiceWorker.deliverPushMessage",
        {
            "origin": server.url,
            "registrationId": registration_id(cdp, bob),
            "data": json.dumps(shown),
        },
    )
    notes = []
    for _ in range(50):
        notes = bob.evaluate(
            """async () => (await (await navigator.serviceWorker.ready).getNotifications())
                .map((n) => [n.title, n.body, n.tag, n.data.url])"""
        )
        if notes:
            break
        bob.wait_for_timeout(100)
    assert notes == [[shown["title"], shown["body"], f"skymo-{code}", f"/t/{code}"]]

    switch.uncheck()
    expect(bob.get_by_role("status").filter(has_text="Alerts off")).to_be_visible()
    bob.reload()
    settle(bob)
    assert not bob.get_by_label("Tell me when it's my turn").is_checked()


def test_a_visible_player_is_not_alerted(server, new_context, double):
    ann = new_context(**PHONE).new_page()
    invite = create_table(ann, server.url, "Ann")
    bob, _context, _device = bob_with_alerts(server, new_context, double, invite)
    bob.reload()  # the switch stays on for this table's next page
    settle(bob)
    assert bob.get_by_label("Tell me when it's my turn").is_checked()
    start(ann)
    expect(bob.locator("#table .board")).to_be_visible()
    bob.wait_for_timeout(1000)
    assert double.received == []
    assert re.search(r"/t/[A-Z0-9]+$", bob.url)

"""Turn alerts (Web Push) end to end: a page's subscription posted as the browser gives
it, a push service double on loopback receiving what the server sends, and the payload
decrypted with the subscription's own keys (http_ece)."""

from __future__ import annotations

import random
import threading
import time

import pytest

from app import create_app
from app.features import alerts as alerting
from app.live.hub import Connection
from app.storage import alerts as storage_alerts
from app.storage.models import PushSubscription, Seat, db
from app.web import ws
from tests.web.account_helpers import PASSWORD, cheap_hashing, make_user, signin  # noqa: F401
from tests.web.push_double import PushDouble
from tests.web.web_helpers import Player, game_of, play_until, seat_of, seat_table, start


@pytest.fixture
def app(database_url):
    app = create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "test",
            "DATABASE_URL": database_url,
            "INLINE_BOTS": True,
            "ALERTS_LOOPBACK_HTTP": True,  # the double is http on 127.0.0.1
            "ALERTS_INLINE": False,  # sent in the background, as served
        }
    )
    yield app
    assert app.extensions["skymo"].alerts.wait_idle(15)  # before the database goes
    db.close_all()


@pytest.fixture
def double():
    with PushDouble() as d:
        yield d


def subscribe(b, device, lang=None):
    b.get(f"/t/{b.code}")
    if lang:
        b.client.set_cookie("lang", lang)
    return b.client.post(
        f"/t/{b.code}/alerts", json=device.subscription(), headers={"X-CSRF-Token": b.csrf}
    )


def play_to(code, people, phase, limit=200):
    rng = random.Random(5)
    players = [Player(b, b.name, rng) for b in people]
    for _ in range(limit):
        if game_of(code).phase == phase:
            return
        for p in players:
            if p.act():
                break
    raise AssertionError(f"never reached {phase}")


def to_bobs_turn(ann, bob):
    """The round's reveals, then Ann's turn if she starts: Bob's turn."""
    play_to(ann.code, [ann, bob], "play")
    bob_id = seat_of(ann.code, "Bob").player_id
    if game_of(ann.code).round.turn != bob_id:
        Player(ann, "Ann", random.Random(1)).act()
        Player(ann, "Ann", random.Random(1)).act()
    assert game_of(ann.code).round.turn == bob_id


def test_a_player_not_looking_is_told_a_round_starts_and_their_turn(app, browser, double):
    ann, bob = seat_table(browser)
    device = double.device("bob")
    assert subscribe(bob, device).status_code == 200
    start(ann)
    pushes = double.wait(1)
    assert len(pushes) == 1
    path, headers, body = pushes[0]
    assert path == "/push/bob"
    assert headers["content-encoding"] == "aes128gcm"
    assert headers["authorization"].startswith("vapid t=")
    shown = device.read(body)
    assert shown == {
        "title": f"Skymo · table {ann.code}",
        "body": f"Round 1 begins at table {ann.code}.",
        "url": f"/t/{ann.code}",
        "tag": f"skymo-{ann.code}",
    }
    to_bobs_turn(ann, bob)
    pushes = double.wait(2)
    assert len(pushes) == 2
    assert device.read(pushes[1][2])["body"] == f"Your turn at table {ann.code}."
    time.sleep(0.3)
    assert len(double.received) == 2  # Ann's turns told Bob nothing


def test_the_text_is_in_the_language_of_the_page_that_asked(app, browser, double):
    ann, bob = seat_table(browser)
    device = double.device("bob")
    assert subscribe(bob, device, lang="fr").status_code == 200
    start(ann)
    shown = device.read(double.wait(1)[0][2])
    assert shown["body"] == f"La manche 1 commence à la table {ann.code}."


def test_no_alert_while_a_page_of_the_player_is_visible(app, browser, double, hub):
    ann, bob = seat_table(browser)
    device = double.device("bob")
    subscribe(bob, device)
    seat = seat_of(ann.code, "Bob")
    page = Connection(code=ann.code, seat_id=seat.id, csrf="", send=lambda html: None)
    hub.add(page)
    start(ann)
    time.sleep(0.5)
    assert double.received == []
    page.visible = False  # the page said "hidden" (its phone locked)
    to_bobs_turn(ann, bob)
    assert len(double.wait(1)) == 1


def test_each_moment_is_sent_once_even_when_processes_race(app, browser, double):
    ann, bob = seat_table(browser)
    device = double.device("bob")
    subscribe(bob, device)
    with app.app_context(), db.connection_context():
        snap = app.extensions["skymo"].tables.store.current(ann.code)
    # Two processes' senders for one table's moment (the lobby has none: a made one).
    seat = seat_of(ann.code, "Bob")
    found = [alerting.Moment(seat.id, alerting.TURN, "g:r1:t3", 1)]
    wired = app.extensions["skymo"].alerts
    senders = [
        alerting.Alerts(app, wired.keys, wired.subject, lambda code, seat: False) for _ in range(4)
    ]
    counts = []
    threads = [
        threading.Thread(target=lambda s=s: counts.append(s.send_all(snap.code, found)))
        for s in senders
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sorted(counts) == [0, 0, 0, 1]
    assert len(double.wait(1)) == 1
    time.sleep(0.2)
    assert len(double.received) == 1


@pytest.mark.parametrize("gone", [404, 410])
def test_an_expired_subscription_is_removed(app, browser, double, gone):
    ann, bob = seat_table(browser)
    subscribe(bob, double.device("bob"))
    double.status = gone
    start(ann)
    double.wait(1)
    deadline = time.monotonic() + 5
    while PushSubscription.select().count() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert PushSubscription.select().count() == 0


def test_a_move_never_waits_for_the_push_service(app, browser, double):
    ann, bob = seat_table(browser)
    subscribe(bob, double.device("bob"))
    double.delay = 3.0
    began = time.monotonic()
    start(ann)
    assert time.monotonic() - began < 1.5
    assert len(double.wait(1)) == 1


def test_turning_it_off_removes_the_subscription(app, browser, double):
    ann, bob = seat_table(browser)
    device = double.device("bob")
    subscribe(bob, device)
    assert PushSubscription.select().count() == 1
    off = bob.client.post(
        f"/t/{bob.code}/alerts/off",
        json={"endpoint": device.endpoint},
        headers={"X-CSRF-Token": bob.csrf},
    )
    assert off.status_code == 200
    assert PushSubscription.select().count() == 0
    start(ann)
    time.sleep(0.3)
    assert double.received == []


def test_leaving_the_seat_or_closing_the_table_removes_it(app, browser, double):
    ann, bob, cat = seat_table(browser, ("Ann", "Bob", "Cat"))
    subscribe(bob, double.device("bob"))
    subscribe(ann, double.device("ann"))
    code = ann.code
    ids = {b.name: seat_of(code, b.name).id for b in (ann, bob, cat)}
    leave = lambda b: b.post(f"/t/{code}/seats/{ids[b.name]}/remove")  # noqa: E731
    assert leave(bob).status_code == 303
    assert [s.seat_id for s in PushSubscription.select()] == [ids["Ann"]]
    subscribe(cat, double.device("cat"))
    assert leave(ann).status_code == 303
    assert [s.seat_id for s in PushSubscription.select()] == [ids["Cat"]]
    assert leave(cat).status_code == 303  # the last person: the table closes
    assert PushSubscription.select().count() == 0


def test_bad_subscriptions_and_visitors_get_a_clear_refusal(app, browser, double):
    ann, bob = seat_table(browser)
    bob.get(f"/t/{bob.code}")
    post = lambda body: bob.client.post(  # noqa: E731
        f"/t/{bob.code}/alerts", json=body, headers={"X-CSRF-Token": bob.csrf}
    )
    good = double.device("bob").subscription()
    for body in (
        {},
        {"endpoint": good["endpoint"]},
        {**good, "endpoint": "http://10.0.0.1/push"},  # not loopback
        {**good, "endpoint": "ftp://push.example.org/x"},
        {**good, "keys": {"p256dh": "x" * 500, "auth": "a"}},
        {**good, "keys": "nope"},
    ):
        answer = post(body)
        assert answer.status_code == 400, body
        assert answer.get_json()["error"] == "This browser's push subscription could not be read."
    assert PushSubscription.select().count() == 0
    visitor = browser()
    visitor.get(f"/t/{ann.code}")
    refused = visitor.client.post(
        f"/t/{ann.code}/alerts", json=good, headers={"X-CSRF-Token": visitor.csrf}
    )
    assert refused.status_code == 403
    assert PushSubscription.select().count() == 0


def test_the_page_gets_the_server_key(app, browser):
    ann, _ = seat_table(browser)
    found = ann.client.get(f"/t/{ann.code}/alerts").get_json()
    assert len(found["key"]) == 87  # a P-256 point, base64url
    assert found["on"] and found["off"] and found["failed"]


def test_no_face_down_value_in_any_alert(app, browser, double):
    ann, bob = seat_table(browser)
    device = double.device("bob")
    subscribe(bob, device)
    start(ann)
    rng = random.Random(2)
    play_until([Player(b, b.name, rng) for b in (ann, bob)])
    for _, _, body in double.wait(2):
        shown = device.read(body)
        assert set(shown) == {"title", "body", "url", "tag"}
        words = shown["body"].replace(ann.code, "")
        assert not any(ch.isdigit() for ch in words.replace("Round 1", ""))


def test_a_deleted_seat_takes_its_subscriptions(app, browser, double):
    ann, bob = seat_table(browser)
    subscribe(bob, double.device("bob"))
    with app.app_context(), db.connection_context():
        Seat.delete().where(Seat.id == seat_of(ann.code, "Bob").id).execute()
    assert PushSubscription.select().count() == 0


def test_the_socket_hears_the_pages_visibility_and_drops_the_rest(hub):
    page = Connection(code="ABC", seat_id=7, csrf="", send=lambda html: None)
    hub.add(page)
    said = ["hidden", "anything else", b"\x00binary"]

    class Socket:
        def receive(self, timeout=None):
            return said.pop(0) if said else None

    ws.drain(Socket(), lambda visible: hub.shown(page, visible))
    assert not hub.looking("ABC", 7)
    said.append("visible")
    ws.drain(Socket(), lambda visible: hub.shown(page, visible))
    assert hub.looking("ABC", 7)


def test_a_deleted_account_takes_its_subscriptions(app, browser, double):
    make_user("bob")
    ann, bob = browser(), browser()
    signin(bob, "bob")
    code = ann.create("Ann")
    bob.join(code, "Bob")
    subscribe(bob, double.device("bob"))
    start(ann)
    assert bob.post(f"/t/{code}/leave").status_code == 303  # a game is left before deleting
    assert PushSubscription.select().count() == 1
    assert bob.post("/account/delete", {"delete_password": PASSWORD}).status_code == 200
    assert PushSubscription.select().count() == 0


def test_a_push_service_that_fails_otherwise_keeps_the_subscription(app, browser, double):
    ann, bob = seat_table(browser)
    subscribe(bob, double.device("bob"))
    double.status = 500
    start(ann)
    double.wait(1)
    time.sleep(0.3)
    assert PushSubscription.select().count() == 1


def test_a_seat_keeps_its_newest_devices_only(app, browser, double):
    ann, bob = seat_table(browser)
    for n in range(storage_alerts.DEVICES + 3):
        assert subscribe(bob, double.device(f"bob{n}")).status_code == 200
    subscribe(bob, double.device("bob4"))  # the same device again: renewed, not added
    kept = sorted(s.endpoint.rsplit("/", 1)[1] for s in PushSubscription.select())
    assert len(kept) == storage_alerts.DEVICES
    assert "bob4" in kept and "bob0" not in kept

"""The hub's sockets: each sends from its own queue, so a peer that stops reading never
delays the player who moved, and is dropped once its queue is full."""

from __future__ import annotations

import re
import threading
import time

from app.live import hub as hub_module
from app.live.hub import Connection, Hub
from app.live.presence import Presence
from app.web import render
from tests.web.web_helpers import seat_of


def test_a_stalled_peer_does_not_delay_the_mover_and_is_dropped(hub, browser, monkeypatch):
    monkeypatch.setattr(hub_module, "QUEUE_SIZE", 4)
    ann = browser()
    code = ann.create("Ann")
    ann.post(f"/t/{code}/rules", {"initial_flips": "0"})
    ann.post(f"/t/{code}/bots", {"bot": "greedy"})
    ann.post(f"/t/{code}/start", {"version": ann.version()})
    release = threading.Event()
    sent = []

    def stalled_send(html):  # a phone that stopped reading: the write never returns
        sent.append(html)
        release.wait(30)

    closed = threading.Event()
    watcher = Connection(code, None, "", stalled_send, queued=True, close=closed.set)
    fine = []
    ann_seat = seat_of(code, "Ann").id
    ann_socket = Connection(code, ann_seat, "", fine.append, queued=True)
    hub.add(watcher)
    hub.add(ann_socket)
    for conn in (watcher, ann_socket):  # each socket's handler sends from its queue
        threading.Thread(target=conn.pump, daemon=True).start()
    try:
        answers = []
        for _ in range(8):
            start = time.monotonic()
            response = ann.move("draw")
            answers.append(time.monotonic() - start)
            assert response.status_code == 303, response.data[:300]
            assert ann.move("keep_drawn", (0, 0)).status_code == 303
            if watcher not in hub.connections(code):
                break
        # Every answer came at once (a blocked send would have held it for good).
        assert max(answers) < 2.0, answers
        # The stalled socket got one push, then its queue filled up and it was dropped.
        assert watcher not in hub.connections(code)
        assert closed.is_set() and len(sent) == 1
        # The others still get every push.
        newest = f'data-version="{ann.version()}"'
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not (fine and newest in fine[-1]):
            time.sleep(0.05)
        assert fine and newest in fine[-1]
    finally:
        release.set()
        hub.remove(watcher)
        hub.remove(ann_socket)


def test_a_push_keeps_the_name_a_visitor_is_typing(hub, browser):
    """Someone else joining pushes the lobby to every socket, the join form included: the
    visitor's name field is kept as typed (hx-preserve), never reset by a push."""
    ann, cleo, dan = browser(), browser(), browser()
    code = ann.create("Ann")
    page = cleo.get(f"/t/{code}").data.decode()
    field = re.search(r'<input id="join-name"[^>]*>', page).group(0)
    assert "hx-preserve" not in field  # the page's own form is plain
    pushes = []
    watcher = Connection(code, None, cleo.csrf, pushes.append)
    hub.add(watcher)
    try:
        dan.get(f"/t/{code}")
        dan.post(f"/t/{code}/join", {"name": "Dan"})
    finally:
        hub.remove(watcher)
    assert pushes and "Dan" in pushes[-1]
    field = re.search(r'<input id="join-name"[^>]*>', pushes[-1]).group(0)
    assert "hx-preserve" in field
    # A refused name still comes back marked invalid in the answer (not preserved).
    answer = cleo.post(f"/t/{code}/join", {"name": ""}, headers={"HX-Request": "true"})
    field = re.search(r'<input id="join-name"[^>]*>', answer.data.decode()).group(0)
    assert 'aria-invalid="true"' in field and "hx-preserve" not in field


def test_a_socket_is_not_handed_again_the_table_it_shows():
    """The same HTML at the same version again (a resync, a presence change that shows
    nothing new) would reset what the player began on the page: it is not sent. New HTML
    at that version is (a presence mark), and so is anything after the page's own answer
    (it shows the answer, not the push) and every reaction beside the table."""
    sent = []
    conn = Connection("AGAIN", None, "", sent.append)
    assert conn.offer("<p>table</p>", 4)
    assert conn.offer("<p>table</p>", 4)
    assert sent == ["<p>table</p>"]
    assert conn.offer("<p>table, Ann away</p>", 4)
    assert conn.offer("<p>reaction</p>", 4, part=True)
    assert conn.offer("<p>reaction</p>", 4, part=True)  # the same reaction, sent again
    assert conn.offer("<p>table, Ann away</p>", 4)  # a reaction does not change the table
    assert sent == ["<p>table</p>", "<p>table, Ann away</p>", "<p>reaction</p>", "<p>reaction</p>"]
    conn.answered(5)
    assert conn.offer("<p>table at 5</p>", 5)
    assert conn.offer("<p>table at 5</p>", 5)
    assert conn.offer("<p>table at 4</p>", 4)  # older: never sent
    assert sent[4:] == ["<p>table at 5</p>"]


def test_publishing_an_unchanged_table_sends_its_sockets_nothing(hub, app, browser):
    ann, bob = browser(), browser()
    code = ann.create("Ann")
    bob.get(f"/t/{code}")
    bob.post(f"/t/{code}/join", {"name": "Bob"})
    pushes = []
    watcher = Connection(code, None, bob.csrf, pushes.append)
    hub.add(watcher)
    try:
        with app.app_context():
            hub.publish(code)
            hub.publish(code)  # nothing changed: as after a resync
        assert len(pushes) == 1 and "Bob" in pushes[0]
        assert ann.post(f"/t/{code}/bots", {"bot": "greedy"}).status_code == 303
    finally:
        hub.remove(watcher)
    assert len(pushes) == 2


def test_a_push_is_written_at_once_when_the_socket_takes_it():
    """The publisher writes what the socket takes without waiting; only the rest waits in
    the queue for the socket's sender (a woken sender waits behind every request)."""
    written, sent = [], []

    def write_now(html):
        written.append(html)
        return b"rest" if "part" in html else None

    conn = Connection("DIRECT", None, "", sent.append, queued=True, write_now=write_now)
    conn.start()
    assert conn.offer("<p>whole</p>", 1)
    assert written == ["<p>whole</p>"] and conn._queue.empty()
    assert conn.offer("<p>part</p>", 2)  # the socket took part of it: the rest is queued
    assert conn.offer("<p>next</p>", 3)  # behind the rest, never before it
    assert written == ["<p>whole</p>", "<p>part</p>"]
    conn._queue.put(None)  # the end, after what is queued
    conn.pump()
    assert sent == [b"rest", "<p>next</p>"]


def test_a_ping_waits_behind_the_rest_of_a_partly_written_push():
    """The socket's reader writes its pings and pongs through the connection: while a
    push's frame is partly written, they wait behind its rest (a frame inside another
    would corrupt the stream); otherwise they go out at once."""
    sent, pinged = [], []
    conn = Connection("PING", None, "", sent.append, queued=True, write_now=lambda html: b"rest")
    conn.start()
    conn.write_frame(b"ping-1", pinged.append)  # nothing half written: at once
    assert pinged == [b"ping-1"] and conn._queue.empty()
    assert conn.offer("<p>part</p>", 1)  # the socket took part of the frame
    conn.write_frame(b"pong", pinged.append)
    assert pinged == [b"ping-1"]  # not written inside the push's frame
    conn._queue.put(None)
    conn.pump()
    assert sent == [b"rest", b"pong"]
    conn.write_frame(b"ping-2", pinged.append)  # the frame is whole again
    assert pinged == [b"ping-1", b"ping-2"]


def test_a_ping_never_waits_on_the_sender_and_a_push_never_cuts_into_it():
    """While the sender is writing (a send that may block on a slow reader), a ping is
    queued rather than waited for, and a push offered meanwhile is queued too."""
    sent, pinged, direct = [], [], []
    conn = Connection("BUSY", None, "", sent.append, queued=True, write_now=direct.append)
    conn.start()
    with conn.writing:  # the sender is in the middle of a send
        conn.write_frame(b"ping", pinged.append)
        assert conn.offer("<p>new</p>", 1)
    assert pinged == [] and direct == []
    conn._queue.put(None)
    conn.pump()
    assert sent == [b"ping", "<p>new</p>"]


def test_the_hub_says_when_its_first_socket_at_a_table_opens_and_its_last_closes():
    """The multi-process mode registers a process as a holder of the table then
    (app.cluster.fanout.Fanout.holding), before the socket is sent the table."""
    local = hub_module.Hub()
    calls = []
    local.on_holding(lambda code, held: calls.append((code, held, len(local.connections(code)))))
    one, two = (Connection("ABCDEF", None, "", lambda html: None) for _ in range(2))
    other = Connection("GHIJKL", None, "", lambda html: None)
    local.add(one)
    local.add(two)
    local.add(other)
    assert calls == [("ABCDEF", True, 1), ("GHIJKL", True, 1)]
    local.remove(one)
    local.remove(one)  # removed twice (closed, then dropped): said once
    assert calls[2:] == []
    local.remove(two)
    assert calls[2:] == [("ABCDEF", False, 0)]


def test_a_lobby_push_draws_no_qr_code_which_the_page_still_shows(hub, browser, monkeypatch):
    """The invite's QR code is drawn only where it is shown: the lobby page, not the
    pushes of its seats and buttons (with more lobbies than the codes' cache holds, each
    push drew one again)."""
    drawn = []
    real = render.qr_svg
    monkeypatch.setattr(render, "qr_svg", lambda url: drawn.append(url) or real(url))
    ann, bob = browser(), browser()
    code = ann.create("Ann")
    page = ann.get(f"/t/{code}").data.decode()
    qr = re.search(r'<figure class="qr"><svg.*?</svg>', page, re.S)
    assert qr is not None and len(drawn) == 1 and code in drawn[0]
    bob.get(f"/t/{code}")  # Bob's page shows it too
    drawn.clear()
    pushes = []
    watcher = Connection(code, None, ann.csrf, pushes.append)
    hub.add(watcher)
    try:
        bob.post(f"/t/{code}/join", {"name": "Bob"})
    finally:
        hub.remove(watcher)
    assert pushes and "Bob" in pushes[-1] and "<svg" not in pushes[-1]
    assert drawn == []


def test_a_quiet_socket_gets_an_empty_message_every_heartbeat():
    """A page cannot see the protocol's pings: after `heartbeat` seconds without a push
    its socket sends an empty message (htmx swaps nothing), so that a page hearing
    nothing knows its connection is dead. A push restarts the count."""
    sent = []
    conn = Connection("BEAT", None, "", sent.append, queued=True)
    conn.start()
    pump = threading.Thread(target=conn.pump, kwargs={"heartbeat": 0.05}, daemon=True)
    pump.start()
    time.sleep(0.13)
    assert sent and set(sent) == {hub_module.HEARTBEAT} and 2 <= len(sent) <= 3, sent
    conn.offer("<p>table</p>", 1)
    time.sleep(0.02)
    assert sent[-1] == "<p>table</p>"
    conn.stop()
    pump.join(1)
    assert not pump.is_alive()


def test_a_socket_lost_without_a_goodbye_ends_its_seats_presence_at_once():
    """A page's requests count as presence for a minute (a player without JavaScript has
    no socket); a socket that died (no close from the page) ends it at once, so that the
    others see the connection lost and the away countdown starts."""
    presence = Presence()
    for seat, lost in ((1, True), (2, False)):
        presence.touch("LOST", seat)  # the page's request
        presence.opened("LOST", seat)  # its socket
        presence.closed("LOST", seat, lost=lost)
    assert presence.present("LOST") == {2}
    assert presence.away_since("LOST", 1) is not None
    assert presence.away_since("LOST", 2) is None


def test_a_seat_is_looking_while_one_of_its_pages_is_visible():
    hub = Hub()
    told = []
    hub.on_looking(lambda code, seat, looking: told.append((code, seat, looking)))
    phone = Connection(code="ABC", seat_id=7, csrf="", send=lambda html: None)
    laptop = Connection(code="ABC", seat_id=7, csrf="", send=lambda html: None)
    hub.add(phone)
    hub.add(laptop)
    assert hub.looking("ABC", 7) and not hub.looking("ABC", 8)
    hub.shown(phone, False)
    assert hub.looking("ABC", 7)  # the laptop still shows the table
    hub.shown(laptop, False)
    assert not hub.looking("ABC", 7)
    assert hub.looking_seats() == []
    hub.shown(phone, True)
    assert hub.looking_seats() == [("ABC", 7)]
    hub.remove(phone)
    assert told == [("ABC", 7, True), ("ABC", 7, False), ("ABC", 7, True), ("ABC", 7, False)]

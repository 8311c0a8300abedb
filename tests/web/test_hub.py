"""The hub's sockets: each sends from its own queue, so a peer that stops reading never
delays the player who moved, and is dropped once its queue is full."""

from __future__ import annotations

import threading
import time

from web_helpers import seat_of

from app import hub as hub_module
from app.hub import Connection, hub


def test_a_stalled_peer_does_not_delay_the_mover_and_is_dropped(browser, monkeypatch):
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

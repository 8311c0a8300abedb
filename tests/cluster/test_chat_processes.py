"""The table chat with several processes (PostgreSQL + Redis): a message sent through one
process reaches the sockets another process holds, as one out-of-band fragment, and a
mute made through one process hides the sender on the viewer's socket in the other."""

from __future__ import annotations

import contextlib
import time

import websocket

from tests.cluster import people
from tests.cluster.test_processes import receive_version, seat_table


def next_chat_push(ws, until: float = 3.0) -> str | None:
    """The next chat fragment the socket receives within `until` seconds, if any."""
    deadline = time.monotonic() + until
    while time.monotonic() < deadline:
        ws.settimeout(max(0.05, deadline - time.monotonic()))
        with contextlib.suppress(websocket.WebSocketTimeoutException):
            html = ws.recv()
            if "beforeend:#chat-log" in html:
                return html
    return None


def test_a_message_and_a_mute_reach_the_other_process(cluster, pg_url):
    a, b = cluster("A"), cluster("B")
    ann, bob = people.Person(a.url), people.Person(b.url)
    code = seat_table(ann, bob, b, pg_url)
    bob_ws = bob.socket()
    try:
        receive_version(bob_ws, 0, 3)
        assert ann.post(f"/t/{code}/chat", {"text": "<b>hi</b> from A"})[0] == 303
        html = next_chat_push(bob_ws)
        assert html is not None, "the message did not reach B's socket"
        assert "&lt;b&gt;hi&lt;/b&gt; from A" in html and 'id="table"' not in html
        # Bob mutes Ann through A: his socket on B hides her next message.
        page = bob.twin(a.url).get(f"/t/{code}")
        ann_seat = page.split('name="mute" value="', 1)[1].split('"', 1)[0]
        mute = {"mute": ann_seat}
        assert bob.twin(a.url).post(f"/t/{code}/chat/mute", mute)[0] == 303
        time.sleep(0.5)  # the mute's event travels through Redis
        assert ann.post(f"/t/{code}/chat", {"text": "muted"})[0] == 303
        assert next_chat_push(bob_ws, 1.5) is None
        assert bob.post(f"/t/{code}/chat", {"text": "still here"})[0] == 303
        assert "still here" in (next_chat_push(bob_ws) or "")
    finally:
        bob_ws.close()

"""app.cluster.broker against a real Redis: fan-out between processes (two brokers stand in for
two processes), reconnection after the listener's connection is killed, Redis
unreachable, and presence with expiry, alone and behind app.live.presence."""

from __future__ import annotations

import queue
import threading
import time

import orjson
import pytest
import redis

from app.cluster import broker as broker_module
from app.cluster.broker import Broker
from app.cluster.fanout import Fanout
from app.cluster.presence import SharedPresence
from app.live.presence import Presence
from tests.cluster.conftest import REDIS_URL


@pytest.fixture
def pair(redis_prefix):
    a, b = Broker(REDIS_URL, redis_prefix), Broker(REDIS_URL, redis_prefix)
    yield a, b
    a.stop()
    b.stop()


def listen(b: Broker):
    got, resyncs = queue.Queue(), queue.Queue()
    b.listen(
        lambda code, what, version, state: got.put((code, what, version, state)),
        lambda: resyncs.put(1),
    )
    assert resyncs.get(timeout=5) == 1, "the first connection resyncs too"
    assert b.listening.wait(5)
    return got, resyncs


def kill_listener(prefix: str) -> int:
    admin = redis.Redis.from_url(REDIS_URL)
    killed = 0
    for client in admin.client_list():
        if client["name"].startswith(f"{prefix}listener."):
            killed += admin.client_kill_filter(_id=client["id"])
    return killed


def test_a_change_published_by_one_process_reaches_the_other(pair):
    a, b = pair
    got, _ = listen(b)
    own, _ = listen(a)
    assert a.publish("ABCDEF", "table", 7)
    assert got.get(timeout=2) == ("ABCDEF", "table", 7, None)
    assert b.hold(["ABCDEF"]) == ["ABCDEF"]  # B holds a socket there
    assert a.hold(["ABCDEF"]) == ["ABCDEF"]  # and so does A
    state = {"t": {"code": "ABCDEF", "version": 8, "state": {"rounds": []}}, "s": []}
    assert a.publish("ABCDEF", "table", 8, state=state)
    assert got.get(timeout=2) == ("ABCDEF", "table", 8, state)
    with pytest.raises(queue.Empty):
        own.get(timeout=0.3)  # a process does not hear its own changes back


def test_a_committed_change_reaches_only_the_processes_holding_a_socket_there(pair):
    a, b = pair
    got, _ = listen(b)
    state = {"t": {"code": "ABCDEF", "version": 8, "state": {"rounds": []}}, "s": []}
    assert a.publish("ABCDEF", "table", 8, state=state)
    assert a.publish("ABCDEF", "presence", None)  # presence: every process hears it
    assert got.get(timeout=2) == ("ABCDEF", "presence", None, None)
    assert b.hold(["ABCDEF", "GHIJKL"]) == ["ABCDEF", "GHIJKL"]
    assert b.hold(["ABCDEF"]) == []  # already registered: nothing was missed
    assert a.publish("ABCDEF", "table", 9, state=state)
    assert got.get(timeout=2)[:3] == ("ABCDEF", "table", 9)
    b.unhold("ABCDEF")  # its last socket there closed
    assert a.publish("ABCDEF", "table", 10, state=state)
    assert a.publish("GHIJKL", "table", 3, state=state)
    assert got.get(timeout=2)[:3] == ("GHIJKL", "table", 3)
    assert got.empty()


def test_a_holder_that_stopped_refreshing_is_dropped(pair, redis_prefix):
    a, b = pair
    listen(b)
    b.hold(["ABCDEF"], now=time.time() - broker_module.LIVE_TTL - broker_module.HOLDER_STALE - 1)
    a.hold(["ABCDEF"])
    state = {"t": {"code": "ABCDEF", "version": 8, "state": {"rounds": []}}, "s": []}
    assert a.publish("ABCDEF", "table", 8, state=state)
    holders = redis.Redis.from_url(REDIS_URL).zrange(f"{redis_prefix}at:ABCDEF", 0, -1)
    assert holders == [a.process.encode()]


def test_changes_announced_at_once_all_arrive_in_order_and_nothing_waits(pair):
    """Publishes made while another one waits for Redis go in that one's next batch."""
    a, b = pair
    got, _ = listen(b)
    batches = []
    send = a._send

    def slow_send(batch):
        batches.append(len(batch))
        time.sleep(0.01)  # Redis answering slowly: the others' announcements wait
        return send(batch)

    a._send = slow_send
    start = threading.Barrier(20)

    def announce(table: int) -> None:
        start.wait(5)
        for version in range(1, 6):
            assert a.publish(f"T{table:05d}", "table", version)

    threads = [threading.Thread(target=announce, args=(t,)) for t in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    heard: dict[str, list[int]] = {}
    for _ in range(100):
        code, _, version, _ = got.get(timeout=5)
        heard.setdefault(code, []).append(version)
    assert heard == {f"T{t:05d}": [1, 2, 3, 4, 5] for t in range(20)}
    # The sender may still be closing its last round trip when the listener has heard
    # it (a busy machine): it must be done soon after, with nothing left behind.
    deadline = time.monotonic() + 5
    while a._sending and time.monotonic() < deadline:
        time.sleep(0.01)
    assert got.empty() and not a._sending and a._outbox == []
    assert sum(batches) == 100 and len(batches) < 100  # some went together (a pipeline)


def test_the_listener_reconnects_and_resyncs_after_its_connection_is_killed(pair, redis_prefix):
    a, b = pair
    got, resyncs = listen(b)
    assert kill_listener(redis_prefix) == 1
    assert resyncs.get(timeout=5) == 1  # reconnected: every table of B is pushed again
    assert b.listening.wait(5)
    assert a.publish("ABCDEF", "lobby", 9)
    assert got.get(timeout=2) == ("ABCDEF", "lobby", 9, None)


def test_without_redis_publishing_fails_fast_and_says_so():
    down = Broker("redis://127.0.0.1:1/0", "skymo-down:")
    started = time.monotonic()
    assert down.publish("ABCDEF", "table", 1) is False
    assert down.publish("ABCDEF", "table", 2) is False  # skipped: Redis failed a moment ago
    assert time.monotonic() - started < 3


def test_presence_is_shared_and_expires_with_its_process(pair, monkeypatch):
    a, b = pair
    now = time.time()
    a.socket_held([("ABCDEF", 5), ("ABCDEF", 6)], now=now)
    b.socket_held([("ABCDEF", 6)], now=now)
    live, seen = b.table_presence("ABCDEF")
    assert set(live) == {5, 6} and live[5] == pytest.approx(now + broker_module.LIVE_TTL)
    assert seen == {}
    # A closes seat 6's socket: B still holds one, and seat 6 was seen now.
    a.socket_released("ABCDEF", 6, now=now)
    live, seen = b.table_presence("ABCDEF")
    assert set(live) == {5, 6} and seen == {6: pytest.approx(now)}
    # A request presence lasts a minute, and an earlier time never moves it back.
    b.seen("ABCDEF", 7, now + 60)
    b.seen("ABCDEF", 7, now)
    assert b.table_presence("ABCDEF")[1][7] == pytest.approx(now + 60)
    # A dies: nothing refreshes seat 5, and after LIVE_TTL exactly one process reaps it.
    later = now + broker_module.LIVE_TTL + 1
    b.socket_held([("ABCDEF", 6)], now=later - 1)  # B is alive: it keeps refreshing
    assert b.reap(now=later) == [("ABCDEF", 5, pytest.approx(now + broker_module.LIVE_TTL))]
    assert a.reap(now=later) == []
    live, seen = b.table_presence("ABCDEF")
    assert set(live) == {6} and seen[5] == pytest.approx(now + broker_module.LIVE_TTL)


def shared_presence(broker: Broker) -> Presence:
    """app.live.presence as one process of the multi-process mode sees it."""
    return Presence(SharedPresence(broker))


def test_each_process_sees_the_sockets_and_requests_of_the_others(pair):
    a, b = pair
    on_a, on_b = shared_presence(a), shared_presence(b)
    on_a.opened("ABCDEF", 5)
    on_b.touch("ABCDEF", 6)  # a request without a socket: present for a minute
    for presence in (on_a, on_b):
        presence.shared.CACHE_SECONDS = 0
        assert presence.present("ABCDEF") == {5, 6}
    assert on_b.absent_from("ABCDEF", 5) is None  # a socket open in the other process
    assert on_a.absent_from("ABCDEF", 6) == pytest.approx(time.time() + 60, abs=2)
    on_a.closed("ABCDEF", 5)
    assert on_b.absent_from("ABCDEF", 5) == pytest.approx(time.time(), abs=2)
    assert on_b.present("ABCDEF") == {6}


def test_requests_of_a_seat_with_a_socket_open_are_written_when_it_closes(pair):
    a, b = pair
    on_a, on_b = shared_presence(a), shared_presence(b)
    on_b.shared.CACHE_SECONDS = 0
    writes = []
    seen = a.seen
    a.seen = lambda code, seat, until: writes.append(seat) or seen(code, seat, until)
    on_a.opened("ABCDEF", 5)
    on_a.touch("ABCDEF", 5)  # its page's requests: the socket already says "present"
    on_a.touch("ABCDEF", 5)
    assert writes == []
    assert on_b.absent_from("ABCDEF", 5) is None
    on_a.closed("ABCDEF", 5)  # the page is gone: present for the minute its request gave
    assert writes == [5]
    assert on_b.absent_from("ABCDEF", 5) == pytest.approx(time.time() + 60, abs=2)
    assert on_b.present("ABCDEF") == {5}
    on_a.touch("ABCDEF", 5)  # no socket open: a request is written at once
    assert writes == [5, 5]


def test_a_heartbeat_refreshes_every_socket_of_its_process(pair):
    a, b = pair
    now = time.time()
    a.socket_held([("AAAAAA", 1), ("AAAAAA", 2), ("BBBBBB", 3)], now=now)
    b.socket_held([("AAAAAA", 2)], now=now)
    later = now + 10
    a.socket_held([("AAAAAA", 1), ("AAAAAA", 2), ("BBBBBB", 3)], now=later)
    assert a.table_presence("AAAAAA")[0] == {
        1: pytest.approx(later + broker_module.LIVE_TTL),
        2: pytest.approx(later + broker_module.LIVE_TTL),
    }
    assert a.table_presence("BBBBBB")[0] == {3: pytest.approx(later + broker_module.LIVE_TTL)}
    # B stopped refreshing seat 2 at AAAAAA: only its entry is reaped, A's stay.
    assert a.reap(now=now + broker_module.LIVE_TTL + 1) == [
        ("AAAAAA", 2, pytest.approx(now + broker_module.LIVE_TTL))
    ]
    assert set(a.table_presence("AAAAAA")[0]) == {1, 2}


def test_a_fresh_read_of_presence_travels_with_a_change_and_spares_a_redis_read(pair):
    a, b = pair
    on_a, on_b = shared_presence(a), shared_presence(b)
    on_a.opened("ABCDEF", 5)
    on_b.touch("ABCDEF", 6)
    assert on_a.present("ABCDEF") == {5, 6}  # A reads Redis for its change's push
    recent = orjson.loads(
        orjson.dumps(on_a.shared.recent("ABCDEF"), option=orjson.OPT_NON_STR_KEYS)
    )
    reads = []
    table_presence = b.table_presence
    b.table_presence = lambda code: reads.append(code) or table_presence(code)
    on_b.shared._cache.clear()
    on_b.shared.prime("ABCDEF", recent)  # B hears the change, with A's read
    assert on_b.present("ABCDEF") == {5, 6} and reads == []
    # A read older than the cache keeps is not taken: B reads Redis itself.
    on_b.shared._cache.clear()
    on_b.shared.prime("ABCDEF", [recent[0] - on_b.shared.CACHE_SECONDS - 1.0, {}, {}])
    assert on_b.present("ABCDEF") == {5, 6} and reads == ["ABCDEF"]
    on_a.shared.CACHE_SECONDS = 0.05
    on_a.shared._cache.clear()
    assert on_a.present("ABCDEF") == {5, 6}
    time.sleep(0.06)
    assert on_a.shared.recent("ABCDEF") is None  # too old to send


def test_a_read_of_presence_lasts_until_a_process_announces_a_change(pair):
    a, b = pair
    on_a, on_b = shared_presence(a), shared_presence(b)
    reads = []
    table_presence = b.table_presence
    b.table_presence = lambda code: reads.append(code) or table_presence(code)
    on_a.opened("ABCDEF", 5)
    assert on_b.present("ABCDEF") == {5} and on_b.present("ABCDEF") == {5}
    assert reads == ["ABCDEF"]  # one read serves the lookups that follow
    recent = on_b.shared.recent("ABCDEF")
    on_a.closed("ABCDEF", 5)  # announced (a "lobby" push without a read): B drops its read
    on_b.shared.heard("ABCDEF")
    on_b.shared.prime("ABCDEF", recent)  # a read from before that change is not taken
    assert on_b.absent_from("ABCDEF", 5) == pytest.approx(time.time(), abs=2)
    assert reads == ["ABCDEF", "ABCDEF"]
    on_b.opened("ABCDEF", 6)  # B's own write drops its read too
    assert on_b.present("ABCDEF") == {6} and len(reads) == 3


def test_a_read_of_presence_ends_when_one_of_its_times_runs_out(pair):
    """A "last seen" (or a socket's expiry) may have been moved on by another process
    without an announcement: the read that holds it is read again once it passes."""
    a, b = pair
    on_b = shared_presence(b)
    reads = []
    table_presence = b.table_presence
    b.table_presence = lambda code: reads.append(code) or table_presence(code)
    a.seen("ABCDEF", 7, time.time() + 0.4)  # another process's request
    assert on_b.present("ABCDEF") == {7} and reads == ["ABCDEF"]
    a.seen("ABCDEF", 7, time.time() + 60)  # a later request there: no announcement
    assert on_b.present("ABCDEF") == {7} and reads == ["ABCDEF"]
    time.sleep(0.45)
    assert on_b.present("ABCDEF") == {7} and reads == ["ABCDEF", "ABCDEF"]
    # Another process's socket, LIVE_TTL ahead: the read serves until it expires (its
    # heartbeat there is not announced), CACHE_SECONDS at most.
    a.socket_held([("ABCDEF", 5)])
    on_b.shared.heard("ABCDEF")
    assert on_b.present("ABCDEF") == {5, 7}
    read_at, _, _, lasts = on_b.shared._cache["ABCDEF"]
    assert lasts - read_at == pytest.approx(
        min(broker_module.LIVE_TTL, on_b.shared.CACHE_SECONDS), abs=0.5
    )


def test_a_socket_held_here_does_not_end_this_process_s_read_of_presence(pair):
    """This process's heartbeat moves its own sockets' expiry on (and their closing is
    announced): a read lasts CACHE_SECONDS however soon they expire in Redis. Another
    process, which cannot know the heartbeat came, reads again once the expiry passes."""
    a, b = pair
    on_a, on_b = shared_presence(a), shared_presence(b)
    on_b.opened("ABCDEF", 5)
    b.socket_held([("ABCDEF", 5)], now=time.time() - broker_module.LIVE_TTL + 0.5)
    assert on_b.present("ABCDEF") == {5} and on_a.present("ABCDEF") == {5}
    b_read, _, _, b_lasts = on_b.shared._cache["ABCDEF"]
    a_read, _, _, a_lasts = on_a.shared._cache["ABCDEF"]
    assert b_lasts - b_read == pytest.approx(on_b.shared.CACHE_SECONDS)
    assert a_lasts - a_read == pytest.approx(0.5, abs=0.2)
    on_b.closed("ABCDEF", 5)  # its closing is announced: B's read is made again
    assert on_b.shared.table("ABCDEF")[0] == {}  # no socket now (seen a while yet)


def test_after_the_listener_reconnects_every_read_of_presence_is_dropped(pair):
    a, b = pair
    on_a, on_b = shared_presence(a), shared_presence(b)
    on_a.opened("ABCDEF", 5)
    assert on_b.present("ABCDEF") == {5}
    recent = on_b.shared.recent("ABCDEF")
    on_a.closed("ABCDEF", 5)  # its announcement lost while the listener was away
    on_b.shared.drop_all()  # Fanout.resync, once connected again
    on_b.shared.prime("ABCDEF", recent)  # a read from before is not taken either
    assert on_b.present("ABCDEF") == set()


def test_without_redis_presence_is_this_processs_own():
    on_a = shared_presence(Broker("redis://127.0.0.1:1/0", "skymo-down:"))
    on_a.opened("ABCDEF", 5)  # nothing raises: a socket opens as usual
    assert on_a.present("ABCDEF") == {5}
    assert on_a.absent_from("ABCDEF", 5) is None
    on_a.closed("ABCDEF", 5)
    assert on_a.absent_from("ABCDEF", 5) == pytest.approx(time.time(), abs=2)


def test_more_callers_than_pooled_connections_wait_their_turn(redis_prefix, monkeypatch):
    """Under load more greenlets use Redis at once than the pool holds: they wait for a
    connection instead of failing (a failure skips Redis for a second: lost pushes)."""
    monkeypatch.setattr(broker_module, "POOL_SIZE", 4)
    b = Broker(REDIS_URL, redis_prefix)
    start, failures = threading.Barrier(40), []

    def seen(seat: int) -> None:
        start.wait(5)
        try:
            for _ in range(5):
                b.seen("POOLED", seat, time.time() + 60)
        except redis.RedisError as exc:
            failures.append(exc)

    threads = [threading.Thread(target=seen, args=(seat,)) for seat in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert failures == []
    assert len(b.table_presence("POOLED")[1]) == 40
    b.stop()


def test_a_request_of_a_seat_already_present_keeps_the_read_of_presence(pair):
    a, b = pair
    on_a, on_b = shared_presence(a), shared_presence(b)
    reads = []
    table_presence = b.table_presence
    b.table_presence = lambda code: reads.append(code) or table_presence(code)
    on_a.opened("ABCDEF", 5)  # seat 5's socket is in A, its requests come to B
    on_b.touch("ABCDEF", 6)
    assert on_b.present("ABCDEF") == {5, 6}
    reads.clear()
    # Seat 5's request (and seat 6's, later): both are present in B's read, so B
    # writes the time without reading Redis again, and its read has the time.
    on_b.touch("ABCDEF", 5)
    later = time.time() + 90
    on_b.seen("ABCDEF", 6, later)
    assert on_b.present("ABCDEF") == {5, 6} and reads == []
    assert on_b.absent_from("ABCDEF", 6) == pytest.approx(later, abs=0.01)
    assert a.table_presence("ABCDEF")[1][6] == pytest.approx(later, abs=0.01)  # in Redis
    # A seat missing from the read (coming back) is a change: the read is dropped.
    on_b.touch("ABCDEF", 7)
    assert on_b.present("ABCDEF") == {5, 6, 7} and reads == ["ABCDEF"]


class Holding:
    """What app.cluster.fanout.Fanout needs of the hub: this process's sockets by table."""

    def __init__(self, *codes):
        self.held = set(codes)

    def codes(self):
        return sorted(self.held)

    def connections(self, code):
        return ["socket"] if code in self.held else []


def test_a_process_registers_where_it_holds_sockets_and_catches_up_where_that_was_lost(
    pair, redis_prefix, monkeypatch
):
    a, _ = pair
    hub = Holding("ABCDEF")
    fanout = Fanout(None, a, hub, None)
    fanout.CATCH_UP_AFTER = ()
    reloads = []
    monkeypatch.setattr(fanout, "_catch_up", reloads.append)
    client = redis.Redis.from_url(REDIS_URL)
    holders = lambda code: client.zrange(f"{redis_prefix}at:{code}", 0, -1)  # noqa: E731
    fanout.holding("ABCDEF", True)
    assert holders("ABCDEF") == [a.process.encode()]
    fanout.holding("ABCDEF", False)  # a socket opened again as the last one closed
    assert holders("ABCDEF") == [a.process.encode()]
    fanout.refresh()  # the heartbeat: still registered, nothing missed
    assert reloads == []
    client.delete(f"{redis_prefix}at:ABCDEF")  # Redis restarted empty
    fanout.refresh()
    assert holders("ABCDEF") == [a.process.encode()] and reloads == ["ABCDEF"]
    hub.held.clear()
    fanout.holding("ABCDEF", False)
    assert holders("ABCDEF") == []


def test_a_seat_taken_in_one_process_drops_the_others_reads_of_presence(pair):
    """Changes of a table reach only the processes with a socket there, so every
    presence write that can change a mark or a timer is announced to every process."""
    a, b = pair
    on_a, on_b = shared_presence(a), shared_presence(b)
    fanout = Fanout(None, b, Holding(), None, on_b.shared)
    b.listen(fanout.received, fanout.resync)
    assert b.listening.wait(5)
    assert on_b.present("ABCDEF") == set()  # B's read, kept up to CACHE_SECONDS
    on_a.arrived("ABCDEF", 6)  # a seat taken in a change made by A
    deadline = time.monotonic() + 2
    while on_b.present("ABCDEF") != {6} and time.monotonic() < deadline:
        time.sleep(0.02)
    assert on_b.present("ABCDEF") == {6}


def test_a_table_no_other_process_holds_costs_no_publish_until_one_says_it_joined(pair):
    a, b = pair
    got, _ = listen(b)
    listen(a)  # A hears the others' announcements: only then does it trust its finding
    state = {"t": {"code": "ABCDEF", "version": 8, "state": {"rounds": []}}, "s": []}
    a.hold(["ABCDEF"])
    sends = []
    send = a._send
    a._send = lambda batch: sends.append(len(batch)) or send(batch)
    assert a.publish("ABCDEF", "table", 8, state=state)  # finds no other holder
    assert a.publish("ABCDEF", "table", 9, state=state)
    assert sends == [1]  # the second change was not sent at all
    assert b.hold(["ABCDEF"]) == ["ABCDEF"]  # B registers: until it says so, A skips it
    assert a.publish("ABCDEF", "table", 10, state=state) and sends == [1]
    assert b.publish("ABCDEF", "holding", None)
    deadline = time.monotonic() + 2
    while "ABCDEF" in a._alone and time.monotonic() < deadline:
        time.sleep(0.02)
    assert a.publish("ABCDEF", "table", 11, state=state)
    assert got.get(timeout=2)[:3] == ("ABCDEF", "table", 11)
    assert sends == [1, 1]
    # Trust lasts ALONE_TRUST at most.
    a._alone["GHIJKL"] = time.monotonic() - broker_module.ALONE_TRUST
    assert a.publish("GHIJKL", "table", 3, state=state) and sends == [1, 1, 1]


def test_an_announcement_of_a_join_heard_before_a_publishs_answer_wins(pair):
    a, _ = pair
    sent_at = time.monotonic()
    a._joins["ABCDEF"] = time.monotonic()  # heard while the publish waited for Redis
    a._found("ABCDEF", 0, sent_at)
    assert "ABCDEF" not in a._alone
    a._found("GHIJKL", 0, sent_at)
    assert "GHIJKL" in a._alone


def test_a_process_that_joins_a_table_says_so_and_pushes_it_again_later(pair, monkeypatch):
    a, b = pair
    listen(b)
    fanout = Fanout(None, a, Holding("ABCDEF"), None)
    fanout.CATCH_UP_AFTER = (0.05, 0.1)
    reloads = []
    monkeypatch.setattr(fanout, "_catch_up", reloads.append)
    b._alone["ABCDEF"] = time.monotonic()  # B found nobody else there a moment ago
    fanout.holding("ABCDEF", True)
    deadline = time.monotonic() + 2
    while "ABCDEF" in b._alone and time.monotonic() < deadline:
        time.sleep(0.02)
    assert "ABCDEF" not in b._alone  # B heard A join: it sends A its changes again
    time.sleep(0.3)
    assert reloads == ["ABCDEF", "ABCDEF"]
    fanout.holding("ABCDEF", True)  # registered already: nothing said, nothing pushed
    time.sleep(0.2)
    assert reloads == ["ABCDEF", "ABCDEF"]


def test_catching_up_pushes_a_table_only_to_sockets_behind_it(monkeypatch):
    from types import SimpleNamespace

    from flask import Flask

    class Sockets(Holding):
        def __init__(self, *versions):
            super().__init__("ABCDEF")
            self.conns = [SimpleNamespace(sent_version=v) for v in versions]

        def connections(self, code):
            return self.conns if code in self.held else []

    stored = SimpleNamespace(version=7)
    store = SimpleNamespace(row=lambda code: stored)
    hub = Sockets(7, 7)
    fanout = Fanout(Flask(__name__), None, hub, store)
    queued = []
    monkeypatch.setattr(fanout, "_queue", lambda code, what, reload=False: queued.append(reload))
    fanout._catch_up("ABCDEF")
    assert queued == []  # every socket has the table as stored: a push would only reset
    hub.conns[1].sent_version = 6
    fanout._catch_up("ABCDEF")
    assert queued == [True]
    hub.held.clear()
    fanout._catch_up("ABCDEF")
    assert queued == [True]

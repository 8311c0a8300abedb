"""Two server processes, A and B, on one PostgreSQL database and one Redis: every process
serves every table, pushes cross between them, each change and each automatic step
happens once, and a process (or Redis, or the listener's connection) going away loses
nothing."""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time

import psycopg
import pytest
import redis
import websocket

from app.cluster.fanout import Fanout
from app.engine import GAME_OVER, Game, replay
from tests.cluster import people
from tests.cluster.conftest import REDIS_URL, Relay

RULES = {"rows": "2", "cols": "3", "initial_flips": "1", "end_score": "10"}


def stored(pg_url: str, code: str) -> tuple[dict | None, int, str]:
    with psycopg.connect(pg_url) as con:
        state, version, status = con.execute(
            'SELECT state, version, status FROM "table" WHERE code = %s', (code,)
        ).fetchone()
    return (json.loads(state) if state else None), version, status


def receive_version(ws, version: int, until: float) -> float:
    """Wait for a pushed #table at `version` (or newer); the time it arrived."""
    deadline = time.monotonic() + until
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            pytest.fail(f"no push of version {version} within {until} s")
        ws.settimeout(left)
        try:
            html = ws.recv()
        except websocket.WebSocketTimeoutException:
            continue
        found = people.VERSION_OF_TABLE.search(html)
        if found and int(found.group(1)) >= version:
            return time.monotonic()


def seat_table(host, guest, guest_server, pg_url, bots=()):
    code = host.create("Ann")
    guest.base = guest_server.url
    guest.join(code, "Bob")
    assert host.post(f"/t/{code}/rules", RULES)[0] == 303
    for kind in bots:
        assert host.post(f"/t/{code}/bots", {"bot": kind})[0] == 303
    return code


def reveal(b, code: str, version: int, pos: str = "0-0"):
    return b.post(f"/t/{code}/move", {"type": "reveal", "pos": pos, "version": str(version)})


def test_a_move_on_one_process_reaches_the_other_within_a_second(cluster, pg_url):
    a, b = cluster("A"), cluster("B")
    ann, bob = people.Person(a.url), people.Person(b.url)
    code = seat_table(ann, bob, b, pg_url)
    ann_ws, bob_ws = ann.socket(), bob.socket()
    try:
        receive_version(ann_ws, 0, 2)
        receive_version(bob_ws, 0, 2)
        version = stored(pg_url, code)[1]
        assert ann.post(f"/t/{code}/start", {"version": str(version)})[0] == 303
        sent = time.monotonic()
        arrived = receive_version(bob_ws, version + 1, 2)  # A's change, on B's socket
        assert arrived - sent < 1.0
        assert reveal(bob, code, version + 1)[0] == 303  # B's change...
        sent = time.monotonic()
        arrived = receive_version(ann_ws, version + 2, 2)  # ...on A's socket
        assert arrived - sent < 1.0
    finally:
        ann_ws.close()
        bob_ws.close()


def race(posts: list[tuple[people.Person, str, dict]]) -> list[int]:
    """POST every (browser, path, form) at the same moment; their statuses."""
    go = threading.Barrier(len(posts))
    statuses: list[int] = [0] * len(posts)

    def post(i, browser, path, form):
        go.wait()
        statuses[i] = browser.post(path, form)[0]

    threads = [threading.Thread(target=post, args=(i, *p)) for i, p in enumerate(posts)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    return statuses


def test_the_same_version_posted_to_both_processes_is_applied_once(cluster, pg_url):
    a, b = cluster("A"), cluster("B")
    ann, bob = people.Person(a.url), people.Person(b.url)
    code = seat_table(ann, bob, b, pg_url)
    version = stored(pg_url, code)[1]
    assert ann.post(f"/t/{code}/start", {"version": str(version)})[0] == 303
    # Each person's session through both processes at once: the same browser's two tabs,
    # one on A and one on B, sending a move (two different ones) at the same version.
    on = {"Ann": (ann, ann.twin(b.url)), "Bob": (bob.twin(a.url), bob)}
    for _ in range(8):
        state, version, _ = stored(pg_url, code)
        game = Game.from_dict(state)
        mover = next(p for p in game.players if game.legal_actions(p.id))
        actions = game.legal_actions(mover.id)
        forms = [
            {**people.move_form(action), "version": str(version)}
            for action in (actions[0], actions[-1])
        ]
        path = f"/t/{code}/move"
        statuses = race([(on[mover.name][0], path, forms[0]), (on[mover.name][1], path, forms[1])])
        assert sorted(statuses) == [303, 409], statuses
        assert stored(pg_url, code)[1] == version + 1  # one change, one version


def test_a_table_of_bots_plays_every_move_once_with_both_processes_up(cluster, pg_url):
    env = {"SKYMO_BOT_DELAY": "0.05", "SKYMO_NEXT_ROUND_SECONDS": "0.2"}
    a, b = cluster("A", **env), cluster("B", **env)
    ann = people.Person(a.url)
    code = ann.create("Ann")
    assert ann.post(f"/t/{code}/rules", RULES)[0] == 303
    for kind in ("greedy", "random", "strong"):
        assert ann.post(f"/t/{code}/bots", {"bot": kind})[0] == 303
    # Counted from before the start, while nothing is due: the bots' first move falls due
    # 50 ms after Ann leaves, so a version read after her leave's answer could already
    # include it (seen once under load: 25 == 26, one bot move counted too few).
    before = stored(pg_url, code)[1]
    assert ann.post(f"/t/{code}/start", {"version": str(before)})[0] == 303
    assert ann.post(f"/t/{code}/leave", {})[0] in (303, 200)  # the bots play on alone
    deadline = time.time() + 90
    while stored(pg_url, code)[2] != "finished":
        assert time.time() < deadline, "the bots did not finish their game"
        time.sleep(0.2)
    state, final, _ = stored(pg_url, code)
    game = Game.from_dict(state)
    assert game.phase == GAME_OVER
    record = people.game_record(pg_url, code)
    assert replay(record).phase == GAME_OVER
    # Each automatic step is one version: a bot's move (one logged action) or a round
    # started by its timer. A step run twice would show as a version without its action.
    bot_moves = sum(
        1
        for rnd in state["rounds"]
        for e in rnd["log"]
        if e.get("player") != game.players[0].id and e["type"] in people.TURN_ACTIONS
    )
    # The start (the bots' first flips with it) and Ann's leave are one version each.
    assert final - before == 2 + bot_moves + len(state["rounds"]) - 1
    for server in (a, b):
        assert "Traceback" not in server.log_text()


def test_a_killed_process_hands_its_players_and_timers_to_the_other(cluster, pg_url):
    env = {"SKYMO_BOT_DELAY": "2"}
    a, b = cluster("A", **env), cluster("B", **env)
    ann, bob = people.Person(a.url), people.Person(b.url)
    code = seat_table(ann, bob, b, pg_url, bots=("greedy",))
    version = stored(pg_url, code)[1]
    assert ann.post(f"/t/{code}/start", {"version": str(version)})[0] == 303
    bob_ws = bob.socket()
    # First flips through B, until the bot's turn comes: B wrote when the bot moves.
    deadline = time.time() + 20
    while True:
        state, version, _ = stored(pg_url, code)
        game = Game.from_dict(state)
        turn = game.round.turn if game.phase == "play" else None
        if turn is not None and game.player(turn).bot:
            break
        assert time.time() < deadline
        mover = next((p for p in game.players if not p.bot and game.legal_actions(p.id)), None)
        browser = bob if mover.name == "Bob" else ann.twin(b.url)
        action = game.legal_actions(mover.id)[0]
        form = people.move_form(action)
        assert browser.post(f"/t/{code}/move", {**form, "version": str(version)})[0] == 303
    b.kill()
    bob_ws.close()
    # Bob's page reconnects to A and gets the table as it is now.
    bob.base = a.url
    ws = bob.socket()
    try:
        receive_version(ws, version, 3)
        # The bot's move, due 2 s after B's change, is made by A.
        receive_version(ws, version + 1, 5)
    finally:
        ws.close()
    assert stored(pg_url, code)[1] >= version + 1


def kill_listeners(prefix: str) -> int:
    admin = redis.Redis.from_url(REDIS_URL)
    killed = 0
    for client in admin.client_list():
        if client["name"].startswith(f"{prefix}listener."):
            killed += admin.client_kill_filter(_id=client["id"])
    return killed


def test_pushes_resume_after_the_redis_listeners_connection_is_killed(
    cluster, pg_url, redis_prefix
):
    a, b = cluster("A"), cluster("B")
    ann, bob = people.Person(a.url), people.Person(b.url)
    code = seat_table(ann, bob, b, pg_url)
    bob_ws = bob.socket()
    try:
        receive_version(bob_ws, 0, 2)
        assert kill_listeners(redis_prefix) == 2
        version = stored(pg_url, code)[1]
        # Right away: the message may be lost, the resync after reconnecting is not.
        assert ann.post(f"/t/{code}/start", {"version": str(version)})[0] == 303
        receive_version(bob_ws, version + 1, 3)
        # And the next change arrives the ordinary way.
        assert reveal(ann, code, version + 1)[0] == 303
        receive_version(bob_ws, version + 2, 1)
    finally:
        bob_ws.close()


def test_without_redis_moves_commit_and_pushes_resume_when_it_is_back(
    cluster, pg_url, redis_prefix
):
    relay = Relay(("127.0.0.1", 6379))
    via = f"redis://127.0.0.1:{relay.port}/0"
    a, b = cluster("A", SKYMO_REDIS_URL=via), cluster("B", SKYMO_REDIS_URL=via)
    ann, bob = people.Person(a.url), people.Person(b.url)
    try:
        code = seat_table(ann, bob, b, pg_url)
        bob_ws = bob.socket()
        receive_version(bob_ws, 0, 2)
        relay.cut()
        version = stored(pg_url, code)[1]
        started = time.monotonic()
        assert ann.post(f"/t/{code}/start", {"version": str(version)})[0] == 303
        assert reveal(ann, code, version + 1)[0] == 303
        assert time.monotonic() - started < 5
        assert stored(pg_url, code)[1] == version + 2  # committed without Redis
        assert f'data-version="{version + 2}"' in bob.get(f"/t/{code}")  # pages answer
        relay.restore()
        receive_version(bob_ws, version + 2, 10)  # the listeners resync by themselves
        bob_ws.close()
    finally:
        relay.close()


def test_the_sign_in_limit_counts_failures_on_every_process(cluster):
    a, b = cluster("A"), cluster("B")
    zed = people.Person(a.url)
    assert zed.post("/signup", {"username": "zed", "password": "correct horse"})[0] == 303
    # Five wrong passwords for zed, from different people, through both processes.
    for i in range(5):
        stranger = people.Person((a, b)[i % 2].url)
        assert stranger.post("/signin", {"username": "zed", "password": "wrong"})[0] == 401
    for server in (a, b):  # the sixth is refused everywhere, even with the right password
        late = people.Person(server.url)
        assert late.post("/signin", {"username": "zed", "password": "correct horse"})[0] == 429


def test_a_reaction_on_one_process_shows_on_the_others_sockets(cluster, pg_url):
    a, b = cluster("A"), cluster("B")
    ann, bob = people.Person(a.url), people.Person(b.url)
    code = seat_table(ann, bob, b, pg_url)
    assert ann.post(f"/t/{code}/start", {"version": str(stored(pg_url, code)[1])})[0] == 303
    bob_ws = bob.socket()
    try:
        receive_version(bob_ws, 0, 3)
        assert ann.post(f"/t/{code}/react", {"reaction": "party"})[0] == 303
        deadline = time.monotonic() + 3
        while True:
            assert time.monotonic() < deadline, "the reaction did not reach B's socket"
            bob_ws.settimeout(max(0.05, deadline - time.monotonic()))
            with contextlib.suppress(websocket.WebSocketTimeoutException):
                html = bob_ws.recv()
                if 'id="reaction-' in html and 'class="reaction"' in html:
                    assert "\N{PARTY POPPER}" in html
                    break
    finally:
        bob_ws.close()


def test_the_movers_own_socket_in_the_other_process_gets_no_push_of_its_answer(cluster, pg_url):
    # Ann moves through A from a page whose socket is held by B: the change's message
    # names her page, so B pushes it to Bob and to Ann's other tab, not to that page.
    a, b = cluster("A"), cluster("B")
    ann, bob = people.Person(a.url), people.Person(b.url)
    code = seat_table(ann, bob, b, pg_url)
    version = stored(pg_url, code)[1]
    assert ann.post(f"/t/{code}/start", {"version": str(version)})[0] == 303
    version += 1
    on_b = ann.twin(b.url)
    page = re.search(r'"X-Skymo-Page": "([\w-]+)"', on_b.get(f"/t/{code}")).group(1)
    sockets = [on_b.socket(query=f"?p={page}"), on_b.socket(), bob.socket()]
    try:
        for ws in sockets:
            receive_version(ws, version, 2)
        # B joined the table as these sockets opened: 1 s later it catches its sockets up
        # if the table moved past one of them (app.cluster.fanout.Fanout.CATCH_UP_AFTER). Made
        # just then, the move would reach every socket of B that way, this page's too,
        # before its message (naming the page) arrives: a race of that one second.
        time.sleep(Fanout.CATCH_UP_AFTER[0] + 0.5)
        status, _, _ = ann.request(
            "POST",
            f"/t/{code}/move",
            data={"csrf_token": ann.csrf, "type": "reveal", "pos": "0-0", "version": version},
            headers={"HX-Request": "true", "X-Skymo-Page": page},
        )
        assert status == 200
        receive_version(sockets[2], version + 1, 2)  # Bob's, pushed by B
        receive_version(sockets[1], version + 1, 2)  # Ann's other tab
        with pytest.raises(pytest.fail.Exception):
            receive_version(sockets[0], version + 1, 1)  # the page that got the answer
    finally:
        for ws in sockets:
            ws.close()

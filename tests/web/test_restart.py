"""Never lose a game: a real server process is killed (SIGKILL) in the middle of games,
once between moves and once while moves are in flight, and started again on the same
database. Every move the server acknowledged is still there, nothing else is, the
versions agree, the engine state replays, bots and timers carry on by themselves, and
every game can be played to its results afterwards."""

from __future__ import annotations

import random
import signal
import threading
import time
from dataclasses import dataclass, field

import pytest

from app.engine import GAME_OVER, PLAY, ROUND_OVER, SETUP, Game, replay
from tests.conftest import LiveServer
from tests.web.live_helpers import (
    STALE,
    VERSION,
    HttpBrowser,
    check_invariants,
    event_of,
    game_records,
    human_events,
    is_network_error,
    move_form,
    read_table,
    read_tables,
    seat_ids,
)


@dataclass
class Tab:
    """The test's own account of one table: who sits there and what the server
    acknowledged."""

    code: str
    people: dict[str, HttpBrowser]  # name -> browser
    pids: dict[str, str]  # name -> engine player id
    bot: str | None
    rng: random.Random
    acked: list[tuple] = field(default_factory=list)  # (player, event), in order
    last_version: int = 0  # the version right after the last acknowledged change
    inflight: tuple | None = None  # a move sent when the server died, not answered
    rejected: int = 0

    @property
    def humans(self) -> set[str]:
        return set(self.pids.values())

    def browser_of(self, pid: str) -> HttpBrowser:
        return next(self.people[n] for n, p in self.pids.items() if p == pid)


def setup_table(server, db, names, bot, rng, end_score) -> Tab:
    host, guest = (HttpBrowser(server.url) for _ in names)
    code = host.create(names[0])
    guest.join(code, names[1])
    # Small grids; a grace period long enough that nobody's turn is played for them.
    rules = {"rows": "2", "cols": "3", "initial_flips": "2", "end_score": str(end_score)}
    rules |= {"grace_seconds": "120", "rejoin_seconds": "1800", "show_running_score": "on"}
    assert host.post(f"/t/{code}/rules", rules)[0] == 303
    if bot:
        assert host.post(f"/t/{code}/bots", {"bot": bot})[0] == 303
    version = read_table(db, code)["version"]
    assert host.post(f"/t/{code}/start", {"version": str(version)})[0] == 303
    pids = seat_ids(db, code)
    tab = Tab(
        code, dict(zip(names, (host, guest), strict=True)), {n: pids[n] for n in names}, bot, rng
    )
    tab.last_version = read_table(db, code)["version"]
    return tab


def rebase(tabs, server) -> None:
    for tab in tabs:
        for b in tab.people.values():
            b.base = server.url


def choose(tab: Tab, state: dict):
    """A legal move of one of the table's people, or None (a bot's turn, round over)."""
    game = Game.from_dict(state)
    if game.phase not in (SETUP, PLAY):
        return None
    options = [(pid, a) for pid in sorted(tab.humans) for a in game.legal_actions(pid)]
    if not options:
        return None
    pid = tab.rng.choice(sorted({p for p, _ in options}))
    return pid, tab.rng.choice([a for p, a in options if p == pid])


def post_move(tab: Tab, db, *, threaded=False) -> str:
    """Play one move if a person can. 'moved', 'rejected', 'wait' (nothing to do yet) or
    'dead' (the server went away with the move in flight)."""
    row = read_table(db, tab.code)
    picked = choose(tab, row["state"])
    if picked is None:
        return "wait"
    pid, action = picked
    version = row["version"]
    data = {**move_form(action, tab.rng), "version": str(version)}
    htmx = tab.rng.random() < 0.3
    if threaded:
        tab.inflight = (pid, event_of(action))
    try:
        status, head, text = tab.browser_of(pid).post(f"/t/{tab.code}/move", data, htmx=htmx)
    except Exception as exc:
        if threaded and is_network_error(exc):
            return "dead"
        raise
    tab.inflight = None
    assert status < 500, (status, text[:500])
    if status == 303 or (htmx and status == 200 and STALE not in text):
        if htmx:
            assert int(VERSION.search(text).group(1)) >= version + 1
        tab.acked.append((pid, event_of(action)))
        tab.last_version = version + 1
        return "moved"
    # Only a change the test did not make (a timer) can beat a person's move.
    assert status == 409 or (htmx and STALE in text), (status, text[:500])
    tab.rejected += 1
    return "rejected"


def vote_next_round(tab: Tab, db) -> None:
    for b in tab.people.values():
        row = read_table(db, tab.code)
        if Game.from_dict(row["state"]).phase != ROUND_OVER:
            return
        status, head, text = b.post(f"/t/{tab.code}/next-round", {"version": str(row["version"])})
        assert status < 500, (status, text[:500])
        if status == 303:
            tab.last_version = row["version"] + 1


def play(
    tab: Tab, db, moves: int, until=None, deadline: float = 60.0, next_round: bool = True
) -> None:
    """Play `moves` moves (or until `until(row)` holds), waiting for bots as needed; at
    the end of a round, vote for the next one (or, with `next_round` false, stop). The
    deadline only catches a table that never gets there: a loaded machine running
    PostgreSQL needed more than 20 s for what takes 5 s when it is quiet."""
    end = time.time() + deadline
    done = 0
    while time.time() < end:
        row = read_table(db, tab.code)
        if until is not None and until(row):
            return
        if until is None and done >= moves:
            return
        phase = Game.from_dict(row["state"]).phase
        if phase == GAME_OVER:
            return
        if phase == ROUND_OVER:
            if not next_round:
                return
            vote_next_round(tab, db)
            continue
        result = post_move(tab, db)
        if result == "moved":
            done += 1
        elif result == "wait":
            time.sleep(0.02)  # a bot's turn
    raise AssertionError(f"table {tab.code} did not get there in time")


def check_persisted(tab: Tab, db) -> dict:
    """The stored table holds exactly the acknowledged moves (and at most the one that
    was in flight), at a version that agrees."""
    row = read_table(db, tab.code)
    state = row["state"]
    events = human_events(state, tab.humans)
    applied = 0
    if events != tab.acked:
        assert tab.inflight is not None and events == tab.acked + [tab.inflight], (
            f"table {tab.code}: stored moves differ from the acknowledged ones:\n"
            f"stored {events[len(tab.acked) - 3 :]}\nacked {tab.acked[-3:]}\n"
            f"in flight {tab.inflight}"
        )
        tab.acked.append(tab.inflight)
        applied = 1
    tab.inflight = None
    expected = tab.last_version + applied
    if tab.bot is None:
        extra = row["version"] - expected
        # The only change nobody acknowledged: a round started by its timer.
        game = Game.from_dict(state)
        fresh = game.phase == SETUP and len(game.rounds) > 1
        fresh = fresh and not any(e.get("player") in tab.humans for e in state["rounds"][-1]["log"])
        assert extra == 0 or (extra == 1 and fresh), (tab.code, row["version"], expected)
    else:
        assert row["version"] >= expected, (tab.code, row["version"], expected)
    tab.last_version = max(tab.last_version, row["version"]) if tab.bot else row["version"]
    check_invariants(state)  # the cards, and replay(to_record(Game.from_dict(state)))
    return row


def wait_for(predicate, timeout=10.0, what="a change"):
    end = time.time() + timeout
    while time.time() < end:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(params=["sqlite", "postgres"])
def server_db(request, tmp_path):
    """(database as the helpers read it, the server's environment for it)."""
    if request.param == "sqlite":
        yield tmp_path / "skymo.db", {}
        return
    from tests.cluster.conftest import fresh_postgres

    with fresh_postgres() as url:
        yield url, {"SKYMO_DATABASE_URL": url}


def test_a_killed_server_loses_no_acknowledged_move(tmp_path, server_db):
    db, db_env = server_db
    rng = random.Random(20240607)
    server = LiveServer(
        tmp_path, SKYMO_BOT_DELAY="0.5", SKYMO_NEXT_ROUND_SECONDS="600", **db_env
    ).start()
    servers = [server]
    try:
        tabs = [
            setup_table(server, db, ("Ann", "Bob"), None, random.Random(1), 10),
            setup_table(server, db, ("Cat", "Dan"), "greedy", random.Random(2), 10),
            setup_table(server, db, ("Eve", "Fay"), None, random.Random(3), 1000),
            setup_table(server, db, ("Gus", "Hal"), "random", random.Random(4), 60),
        ]
        plain, botted, timed, waiting = tabs

        # 1. Part of each game, one move at a time; one table reaches the end of a round
        #    (its next round waits for a timer) and one hands the turn to its bot...
        # (The timed table stays in its first round: a second one could end its game.)
        for tab in tabs:
            play(tab, db, rng.randint(4, 10), next_round=tab is not timed)
        play(timed, db, 0, until=lambda row: Game.from_dict(row["state"]).phase == ROUND_OVER)

        def bots_turn(row):
            game = Game.from_dict(row["state"])
            return game.phase == PLAY and game.round.turn not in waiting.humans

        play(waiting, db, 0, until=bots_turn)
        # ...and the server dies at once, before the bot (0.5 s) plays.
        server.stop(signal.SIGKILL)
        for tab in tabs:
            check_persisted(tab, db)
        assert bots_turn(read_table(db, waiting.code)), "the bot moved before the kill"
        assert Game.from_dict(read_table(db, timed.code)["state"]).phase == ROUND_OVER
        before = read_tables(db)

        # 2. A new process on the same database: bots and timers resume by themselves.
        server = LiveServer(
            tmp_path, SKYMO_BOT_DELAY="0.05", SKYMO_NEXT_ROUND_SECONDS="1", **db_env
        )
        servers.append(server.start())
        rebase(tabs, server)
        wait_for(lambda: not bots_turn(read_table(db, waiting.code)), what="the bot's move")
        wait_for(
            lambda: Game.from_dict(read_table(db, timed.code)["state"]).phase == SETUP,
            what="the next round's timer",
        )
        assert len(read_table(db, timed.code)["state"]["rounds"]) == 2
        for tab in (plain, botted):
            status, text = tab.people[next(iter(tab.people))].get(f"/t/{tab.code}")
            assert status == 200
            if tab.bot is None:
                assert f'data-version="{before[tab.code]["version"]}"' in text
        for tab in tabs:
            check_persisted(tab, db)

        # 3. Moves from four threads at once, and the server is killed in the middle.
        stop = threading.Event()
        failures = []

        def player(tab):
            try:
                while not stop.is_set():
                    result = post_move(tab, db, threaded=True)
                    if result == "dead":
                        return
                    if result == "wait":
                        time.sleep(0.01)
            except Exception as exc:  # pragma: no cover - reported below
                failures.append((tab.code, exc))

        acked_before = sum(len(tab.acked) for tab in tabs)
        threads = [threading.Thread(target=player, args=(tab,)) for tab in tabs]
        for t in threads:
            t.start()
        time.sleep(rng.uniform(0.4, 0.9))
        server.stop(signal.SIGKILL)
        stop.set()
        for t in threads:
            t.join(30)
        assert not failures, failures
        assert sum(len(tab.acked) for tab in tabs) > acked_before, "no move got through"
        for tab in tabs:
            check_persisted(tab, db)

        # 4. Start again and play every game to its results.
        server = LiveServer(
            tmp_path, SKYMO_BOT_DELAY="0.05", SKYMO_NEXT_ROUND_SECONDS="1", **db_env
        )
        servers.append(server.start())
        rebase(tabs, server)
        for tab in tabs:
            play(tab, db, 0, until=lambda row: row["status"] == "finished", deadline=150)
        records = game_records(db)
        for tab in tabs:
            row = check_persisted(tab, db)
            game = Game.from_dict(row["state"])
            assert game.phase == GAME_OVER
            record = records[(tab.code, 1)]
            assert replay(record).phase == GAME_OVER
            assert human_events(row["state"], tab.humans) == tab.acked
            for b in tab.people.values():
                status, text = b.get(f"/t/{tab.code}")
                assert status == 200 and "is-finished" in text
                assert b.get(f"/t/{tab.code}/games/1")[0] == 200  # the results page
    finally:
        for s in servers:
            s.stop()
        log = tmp_path / "server.log"
        text = log.read_text(errors="replace") if log.exists() else ""
        assert "Traceback" not in text, text[-3000:]

"""The Due table on PostgreSQL: a later version's due time is never overwritten by an
earlier one, a due step is claimed by one process only, however many poll at once, and
a process polls when a step it wrote falls due (at least every second otherwise)."""

from __future__ import annotations

import json
import threading
import time
from types import SimpleNamespace

import psycopg
import pytest
from flask import Flask

from app.cluster import due
from app.cluster.due import LEASE_SECONDS, claim_due, write_due
from app.engine import PLAY, SETUP, Game, TakeDiscard
from app.storage import models
from app.storage.models import Due, Table, db
from app.storage.table_rows import ROW_TO_CHANGE
from tests.cluster import people
from tests.cluster.conftest import Relay


@pytest.fixture
def pg_db(pg_url):
    previous = db.obj
    db.initialize(models.open_database(pg_url, pool_size=16))
    models.create_schema()
    with db.connection_context():
        for code in ("AAAAAA", "BBBBBB", "CCCCCC"):
            Table.create(code=code, rules={})
    yield
    db.close_all()
    db.initialize(previous)


def due_rows() -> dict[str, tuple[float, int]]:
    with db.connection_context():
        return {d.table_id: (d.at, d.version) for d in Due.select()}


def test_a_due_time_from_an_older_version_never_replaces_a_newer_one(pg_db):
    with db.connection_context():
        write_due("AAAAAA", 5, 100.0)
        write_due("AAAAAA", 4, 50.0)  # late, from an older snapshot: ignored
        assert due_rows()["AAAAAA"] == (100.0, 5)
        write_due("AAAAAA", 5, 120.0)  # same version (presence changed): taken
        write_due("AAAAAA", 6, 90.0)
        assert due_rows()["AAAAAA"] == (90.0, 6)
        write_due("AAAAAA", 5, None)  # an older "nothing due" deletes nothing
        assert "AAAAAA" in due_rows()
        write_due("AAAAAA", 6, None)
        assert "AAAAAA" not in due_rows()


def test_a_due_row_written_while_a_change_holds_its_table_neither_waits_nor_deadlocks(pg_db):
    """A change writes its table's due row before it commits, holding the table's row; a
    first due row written meanwhile from outside (someone left) checks its foreign key
    on that row. Under FOR UPDATE that check waited for the change, and the change for
    the row it had inserted: PostgreSQL ended one of them a second later (deadlock)."""
    errors: list[Exception] = []
    locked = threading.Event()
    times: dict[str, float] = {}

    def change():
        try:
            with db.atomic():
                assert ROW_TO_CHANGE.first(Table, "AAAAAA") is not None
                locked.set()
                time.sleep(0.5)  # the other write comes meanwhile
                times["change writes"] = time.monotonic()
                write_due("AAAAAA", 2, 200.0, defer=True)
        except Exception as exc:
            errors.append(exc)

    def wake():
        locked.wait(5)
        try:
            write_due("AAAAAA", 1, 100.0)
            times["wake wrote"] = time.monotonic()
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=change), threading.Thread(target=wake)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not errors
    assert times["wake wrote"] < times["change writes"]  # it did not wait for the change
    assert due_rows()["AAAAAA"] == (200.0, 2)


def test_each_due_step_is_claimed_once_by_processes_polling_together(pg_db):
    now = time.time()
    with db.connection_context():
        write_due("AAAAAA", 1, now - 1)
        write_due("BBBBBB", 1, now - 0.5)
        write_due("CCCCCC", 1, now + 60)  # not due yet
    claims: list[list[str]] = []
    barrier = threading.Barrier(8)

    def poller():
        barrier.wait()
        with db.connection_context():
            claims.append(claim_due(now))

    threads = [threading.Thread(target=poller) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    claimed = sorted(code for batch in claims for code in batch)
    assert claimed == ["AAAAAA", "BBBBBB"]
    # Leased: nobody claims them again until the lease runs out...
    with db.connection_context():
        assert claim_due(now + 1) == []
        assert sorted(claim_due(now + LEASE_SECONDS + 1)) == ["AAAAAA", "BBBBBB"]
    # ...and the lease keeps the version, so the step's own write replaces it.
    assert due_rows()["AAAAAA"][1] == 1


def test_a_process_polls_when_a_step_it_wrote_falls_due_and_each_second_for_others(
    pg_db, monkeypatch
):
    """No poll every 0.1 s while nothing is due: the writer of a step looks for it when it
    falls due, and every process looks at least every IDLE_POLL_SECONDS (a step written
    by a process that died, or whose poll is late)."""
    polls: list[float] = []
    claim = due.claim_due
    monkeypatch.setattr(due, "claim_due", lambda now: polls.append(now) or claim(now))
    ran: dict[str, float] = {}
    snap = SimpleNamespace(code="AAAAAA", version=1, extra={})
    when = time.time() + 0.5
    scheduler = due.DueScheduler(
        lambda s: (when, "bot", None),
        lambda code: ran.setdefault(code, time.time()) is not None,
        lambda code: snap,
    )
    scheduler._app = Flask(__name__)
    threading.Thread(target=scheduler._loop, daemon=True).start()
    try:
        time.sleep(0.2)  # the first poll found nothing: the next one is a second away
        with db.connection_context():
            scheduler.wake("AAAAAA", snap)  # this process's step, due in 0.3 s
        time.sleep(0.6)
        # Run when due (the next idle poll would have come 0.5 s later).
        assert when <= ran["AAAAAA"] <= when + 0.35
        with db.connection_context():
            write_due("BBBBBB", 1, time.time())  # another process's step, due now
        time.sleep(due.IDLE_POLL_SECONDS + 0.3)
        assert "BBBBBB" in ran
        # Polled about once a second, and when the step came due (not 20 times).
        assert len(polls) <= 8
    finally:
        scheduler.stop()


# ----- the database lost between a move and its follow-up ----------------------------------
RULES = {"rows": "2", "cols": "3", "initial_flips": "1", "end_score": "100"}


def due_row(pg_url: str, code: str) -> tuple[float, int] | None:
    with psycopg.connect(pg_url) as con:
        return con.execute("SELECT at, version FROM due WHERE table_id = %s", (code,)).fetchone()


def stored(pg_url: str, code: str) -> tuple[dict | None, int]:
    with psycopg.connect(pg_url) as con:
        state, version = con.execute(
            'SELECT state, version FROM "table" WHERE code = %s', (code,)
        ).fetchone()
    return (json.loads(state) if state else None), version


def own_turn(person: people.Person, pg_url: str, code: str, name: str):
    """Play `name`'s first flips until it is their turn, nothing drawn: (their player id,
    the game, its version)."""
    deadline = time.monotonic() + 20
    while True:
        assert time.monotonic() < deadline, f"never {name}'s turn"
        state, version = stored(pg_url, code)
        game = Game.from_dict(state)
        me = next(p.id for p in game.players if p.name == name)
        if game.phase == PLAY and game.round.turn == me and game.round.drawn is None:
            return me, game, version
        actions = game.legal_actions(me)
        if actions and game.phase == SETUP:
            form = {**people.move_form(actions[0]), "version": str(version)}
            assert person.post(f"/t/{code}/move", form)[0] in (303, 409)
        else:
            time.sleep(0.05)


@pytest.mark.parametrize("waiting", ["dropped", "committed"])
def test_a_bots_turn_survives_the_database_lost_between_the_move_and_its_follow_up(
    cluster, pg_url, waiting
):
    """A move that commits has its follow-up (the bot's turn, in the same transaction),
    one that does not has neither, and the bot moves within seconds of the database's
    return. Ann's move (the bot's turn next) is held up by a lock on `due`, then the
    database goes away (the relay is cut) and comes back 5 s later; the statements that
    waited for the lock either never run (`dropped`: the server's backends end, as when
    it stops) or run to the end unheard (`committed`: the lock is released first).
    Before, with `dropped`, the move was answered (its follow-up was a statement of its
    own, after the commit) and the table stayed on the bot's turn with no due row."""
    relay = Relay(("127.0.0.1", 5432))
    via = pg_url.replace("127.0.0.1:5432", f"127.0.0.1:{relay.port}")
    env = {"SKYMO_DATABASE_URL": via, "SKYMO_BOT_DELAY": "0.2", "SKYMO_NEXT_ROUND_SECONDS": "1"}
    try:
        ann = people.Person(cluster("A", **env).url)
        code = ann.create("Ann")
        assert ann.post(f"/t/{code}/rules", RULES)[0] == 303
        assert ann.post(f"/t/{code}/bots", {"bot": "greedy"})[0] == 303
        assert ann.post(f"/t/{code}/start", {"version": str(stored(pg_url, code)[1])})[0] == 303
        ann_id, game, version = own_turn(ann, pg_url, code, "Ann")
        take = next(a for a in game.legal_actions(ann_id) if isinstance(a, TakeDiscard))
        form = {**people.move_form(take), "version": str(version)}
        answer: list = []

        def move():
            try:
                answer.append(ann.post(f"/t/{code}/move", form)[0])
            except OSError as exc:
                answer.append(exc)

        mover = threading.Thread(target=move)
        with psycopg.connect(pg_url) as locker:
            locker.execute("LOCK TABLE due IN EXCLUSIVE MODE")  # until this transaction ends
            mover.start()
            time.sleep(1.0)  # the move waits for the lock (its commit, or its follow-up)
            relay.cut()
            if waiting == "committed":
                locker.commit()
                time.sleep(0.5)
            locker.execute(
                "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        time.sleep(5)
        relay.restore()
        back = time.monotonic()
        mover.join(20)
        assert answer, "the move was never answered"
        now = stored(pg_url, code)[1]
        if answer[0] == 303:
            assert now == version + 1
        if now == version:  # not made: nothing of it is left behind
            row = due_row(pg_url, code)
            assert row is None or row[1] <= version
            return
        # Made (answered or not): the table moves on by itself, soon.
        while stored(pg_url, code)[1] <= version + 1:
            assert time.monotonic() - back < 6, (
                f"the table stayed at version {version + 1} after the database came back "
                f"(the move's answer: {answer[0]}; due row: {due_row(pg_url, code)})"
            )
            time.sleep(0.1)
    finally:
        relay.close()


def test_due_rows_not_written_while_the_database_was_away_are_written_when_it_is_back(pg_url):
    """A table whose due row could not be written (a presence change while the database
    was away) is looked at again once a poll succeeds, and so is every table with a
    socket in the process: nothing waits for a restart."""
    relay = Relay(("127.0.0.1", 5432))
    via = pg_url.replace("127.0.0.1:5432", f"127.0.0.1:{relay.port}")
    previous = db.obj
    db.initialize(models.open_database(via, pool_size=4))
    scheduler = None
    try:
        models.create_schema()
        with db.connection_context():
            for code in ("AAAAAA", "BBBBBB"):
                Table.create(code=code, rules={})
        later = time.time() + 60
        snaps = {c: SimpleNamespace(code=c, version=1, extra={}) for c in ("AAAAAA", "BBBBBB")}
        scheduler = due.DueScheduler(
            lambda snap: (later, "forfeit", None),
            lambda code: False,
            snaps.get,
            served=lambda: ["BBBBBB"],  # a table with a socket here
        )
        scheduler._app = Flask(__name__)
        threading.Thread(target=scheduler._loop, daemon=True).start()
        relay.cut()
        scheduler.wake("AAAAAA")  # someone left: a timer to write, and no database
        time.sleep(1.5)  # polls fail meanwhile
        with psycopg.connect(pg_url) as con:
            assert con.execute("SELECT count(*) FROM due").fetchone()[0] == 0
        relay.restore()
        deadline = time.monotonic() + 5
        while True:
            with psycopg.connect(pg_url) as con:
                rows = dict(con.execute("SELECT table_id, at FROM due").fetchall())
            if rows == {"AAAAAA": later, "BBBBBB": later}:
                break
            assert time.monotonic() < deadline, rows
            time.sleep(0.1)
    finally:
        if scheduler is not None:
            scheduler.stop()
        db.close_all()
        db.initialize(previous)
        relay.close()

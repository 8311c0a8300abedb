"""A change on PostgreSQL starts from the newest snapshot its process knows (no row
read), and is made again on the locked row when another process changed the table
first (app.tables.step.change, app.storage.table_rows.VERSION_GUARD)."""

from __future__ import annotations

import psycopg
import pytest

from app import create_app
from app.storage.models import Table, db
from app.storage.table_store import store
from app.tables import service, step


@pytest.fixture
def app(pg_url):
    app = create_app({"TESTING": True, "SECRET_KEY": "test", "DATABASE_URL": pg_url})
    yield app
    app.extensions["skymo"].scheduler.clear()  # no bot step may run on the next app's database
    db.close_all()


@pytest.fixture
def trips(monkeypatch):
    """The query strings sent to PostgreSQL (each one round trip)."""
    sent: list[str] = []
    execute = psycopg.Cursor.execute

    def counted(self, query, *args, **kwargs):
        sent.append(str(query))
        return execute(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", counted)
    return sent


def test_a_change_of_a_known_table_is_one_round_trip_and_a_conflict_is_made_again(app, trips):
    with app.app_context():
        Table.create(code="OPTIMI", rules={})
        store.current("OPTIMI")  # this process now knows version 0
        seen = []

        def hand_over(ch):
            seen.append(ch.table.host_seat)
            ch.table.host_seat = (ch.table.host_seat or 0) + 1

        trips.clear()
        snap = service.change("OPTIMI", hand_over)
        assert snap.version == 1 and seen == [None]
        assert len(trips) == 1  # BEGIN, the version guard, the UPDATE and the COMMIT
        assert trips[0].startswith("BEGIN; SELECT") and trips[0].endswith("COMMIT")

        # Another process changes the table: this one's snapshot is now behind.
        db.execute_sql(
            'UPDATE "table" SET version = version + 1, host_seat = 9 WHERE code = %s',
            ("OPTIMI",),
        )
        snap = service.change("OPTIMI", hand_over)
        # Tried on version 1 (rolled back), then made once on the stored version 2.
        assert seen == [None, 1, 9]
        assert snap.version == 3 and snap.table.host_seat == 10
        row = Table.get(Table.code == "OPTIMI")
        assert (row.version, row.host_seat) == (3, 10)


def test_a_refusal_on_a_snapshot_behind_is_decided_on_the_stored_table(app):
    with app.app_context():
        Table.create(code="REFUSE", rules={})
        store.current("REFUSE")
        db.execute_sql('UPDATE "table" SET version = 4, host_seat = 3 WHERE code = %s', ("REFUSE",))

        def needs_a_host(ch):
            if ch.table.host_seat is None:
                raise step.TableError("no host")
            ch.table.host_seat = 5

        # The known snapshot (version 0, no host) refuses; the stored one accepts, and
        # a page at the stored version is not stale.
        snap = service.change("REFUSE", needs_a_host, version=4)
        assert snap.version == 5 and snap.table.host_seat == 5


def test_a_known_snapshot_publishes_the_state_as_stored_when_its_game_is_unchanged(app, trips):
    """The cache keeps a row without its state (the game is kept): a change that leaves
    the game alone makes it again for the other processes' message, as stored."""
    from app.engine import Game, Player, RuleSet
    from app.storage.table_store import Snapshot, snapshot_message

    with app.app_context():
        game = Game([Player(f"p{k}", f"P{k}") for k in range(3)], RuleSet(), seed=7)
        table = Table.create(code="STATED", rules={}, status=Table.PLAYING)
        snap = Snapshot(table, [], game)
        with db.atomic():
            store.write(snap, True)  # the state as a move stores it
        stored = Table.get(Table.code == "STATED").state
        store.remember(snap)
        trips.clear()
        snap = service.change("STATED", lambda ch: setattr(ch.table, "host_seat", 1))
        assert len(trips) == 1  # from the known snapshot
        assert snapshot_message(snap)["t"]["state"] == stored

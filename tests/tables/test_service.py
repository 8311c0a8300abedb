"""The table service's change path (app.tables.service) on stand-in adapters: the ports
(app.tables.ports) are all it knows, so any store, publisher, scheduler and presence
that keep them will do. No database, no hub, no thread."""

from __future__ import annotations

import contextlib
from types import SimpleNamespace

import pytest
from flask import Flask
from flask_babel import Babel

from app.storage.models import Table
from app.storage.table_store import Snapshot, Stale, TableError
from app.tables.service import TableService, Timing
from app.tables.step import Unchanged


class Shelf:
    """A table store in a dict: rows are SimpleNamespaces, a write bumps the version."""

    def __init__(self, attempts=(False,)):
        self.rows = {"ABCDEF": SimpleNamespace(code="ABCDEF", version=3, status=Table.LOBBY)}
        self.log: list[str] = []
        self._attempts = attempts

    def attempts(self):
        return self._attempts

    @contextlib.contextmanager
    def locked(self, code):
        self.log.append(f"lock {code}")
        yield
        self.log.append("commit")

    def for_change(self, code, optimistic=False):
        self.log.append(f"load {'known' if optimistic else 'row'}")
        row = self.rows.get(code)
        return None if row is None else Snapshot(SimpleNamespace(**vars(row)), [], None)

    def write(self, snap, game_changed):
        snap.table.version += 1
        self.rows[snap.code] = snap.table
        self.log.append(f"write v{snap.table.version}")

    def remember(self, snap):
        self.log.append("remember")

    def forget(self, code):
        self.log.append("forget")

    def current(self, code):
        return self.for_change(code)


class Recorder:
    """Publisher, scheduler and presence at once, noting every call in order."""

    def __init__(self, log):
        self.log = log

    def publish(self, code, what="table", snapshot=None):
        self.log.append(f"publish {what} v{snapshot.version}")

    def broadcast(self, code, name, data):
        self.log.append(f"broadcast {name}")

    def prepare(self, code):
        self.log.append("prepare")

    def within(self, snap):
        self.log.append("within")

    def schedule(self, snap):
        self.log.append("schedule")

    def wake(self, code, snap=None):
        self.log.append("wake")

    def forget(self, code):
        self.log.append("presence forgets")


@pytest.fixture
def context():
    app = Flask(__name__)
    Babel(app)
    with app.app_context():
        yield


def service(store):
    other = Recorder(store.log)
    return TableService(store, other, other, other, Timing())


def host(ch):
    ch.table.host_seat = 7


def test_a_change_is_prepared_locked_written_committed_then_published_and_scheduled(context):
    store = Shelf()
    snap = service(store).change("abcdef ", host, version=3)
    assert snap.version == 4 and store.rows["ABCDEF"].host_seat == 7
    assert store.log == [
        "prepare",
        "lock ABCDEF",
        "load row",
        "write v4",
        "within",
        "commit",
        "remember",
        "publish table v4",
        "schedule",
    ]


@pytest.mark.parametrize("act", ["refuse", "nothing", "stale"])
def test_a_refused_stale_or_empty_change_writes_and_sends_nothing(context, act):
    store = Shelf()

    def refuse(ch):
        ch.table.host_seat = 9  # on the change's own copy: never written
        if act == "refuse":
            raise TableError("Only the host can do that.", 403)
        raise Unchanged

    if act == "refuse":
        with pytest.raises(TableError):
            service(store).change("ABCDEF", refuse)
    elif act == "stale":
        with pytest.raises(Stale):
            service(store).change("ABCDEF", refuse, version=2)
    else:
        assert service(store).change("ABCDEF", refuse) is None
    assert not hasattr(store.rows["ABCDEF"], "host_seat")
    assert not [e for e in store.log if e.startswith(("write", "publish", "schedule"))]


def test_a_missing_table_is_refused_with_a_404(context):
    with pytest.raises(TableError) as refused:
        service(Shelf()).change("NOSUCH", host)
    assert refused.value.status == 404


def test_a_closed_table_is_forgotten_by_the_store_and_presence_then_published(context):
    store = Shelf()
    service(store).change("ABCDEF", lambda ch: setattr(ch.table, "status", Table.CLOSED))
    tail = store.log[store.log.index("commit") + 1 :]
    assert tail == ["remember", "forget", "presence forgets", "publish table v4", "schedule"]


def test_a_store_that_tries_its_known_snapshot_first_falls_back_to_the_row(context):
    """A first, optimistic attempt refused (its snapshot may be too old) is decided
    again on the row as locked and read; one that commits is the only attempt."""
    store = Shelf(attempts=(True, False))
    calls = []

    def refuse_first(ch):
        calls.append(ch.table.version)
        if len(calls) == 1:
            raise TableError("no host")
        host(ch)

    snap = service(store).change("ABCDEF", refuse_first)
    assert snap.version == 4 and len(calls) == 2
    assert [e for e in store.log if e.startswith("load")] == ["load known", "load row"]
    store.log.clear()
    service(store).change("ABCDEF", host)
    assert [e for e in store.log if e.startswith("load")] == ["load known"]

"""A table's stored state is read with its row on every request at the table, but
decoded only when used (app.storage.models.LazyJSONField): a request whose game is cached never
decodes it, and what is read is what was stored."""

from __future__ import annotations

import orjson

from app import tables
from app.storage.models import Encoded, Table, db
from app.storage.table_store import ROW, snapshot_message
from tests.web.table_helpers import playing


def stored_state(code: str) -> str:
    """The state column's text as the database holds it."""
    return db.execute_sql('select state from "table" where code = ?', (code,)).fetchone()[0]


def test_a_row_read_decodes_the_state_only_when_it_is_used(app, browser):
    ann, _ = playing(browser)
    with app.app_context(), db.connection_context():
        text = stored_state(ann.code)
        row = ROW.first(Table, ann.code)
        assert type(row.__data__["state"]) is Encoded  # read, not decoded
        assert row.state == orjson.loads(text)  # decoded on first use...
        assert type(row.__data__["state"]) is dict  # ...once
        assert tables.store.current(ann.code).game.to_dict()["rules"] == row.state["rules"]


def test_a_row_saved_without_reading_its_state_keeps_it_as_stored(app, browser):
    ann, _ = playing(browser)
    with app.app_context(), db.connection_context():
        text = stored_state(ann.code)
        row = ROW.first(Table, ann.code)
        row.votes = {"next": [1]}
        row.save(only=[Table.votes, Table.state])  # the state written back unread
        assert stored_state(ann.code) == text
        assert ROW.first(Table, ann.code).state == orjson.loads(text)


def test_a_published_snapshot_carries_the_state_decoded(app, browser):
    ann, _ = playing(browser)
    with app.app_context(), db.connection_context():
        snap = tables.store.snapshot_of(ROW.first(Table, ann.code))  # the cached game
        assert type(snap.table.__data__["state"]) is Encoded
        message = orjson.loads(orjson.dumps(snapshot_message(snap)))
        assert message["t"]["state"] == snap.table.state
        assert isinstance(message["t"]["state"], dict)

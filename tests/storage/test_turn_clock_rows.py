"""The turn clock's columns (app.storage.models.Table.turn_clock and .clock): a stored
database gains them without altering a row (SQLite would rebuild a table for a NOT NULL
column, cascading its seats), and a table from before has no clock."""

from __future__ import annotations

from app import create_app
from app.storage.models import Seat, Table, db
from tests.web.web_helpers import parse, seat_table, start


def test_a_stored_database_gains_the_turn_clock_and_keeps_its_rows(app, browser, database_url):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    start(ann)
    with db.connection_context():  # as the database was before the turn clock
        db.execute_sql('ALTER TABLE "table" DROP COLUMN turn_clock')
        db.execute_sql('ALTER TABLE "table" DROP COLUMN clock')
    db.close_all()
    again = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": database_url})
    with again.app_context():
        row = Table.get_by_id(ann.code)
        assert row.turn_clock is None and row.clock is None  # from before: no clock
        assert Seat.select().where(Seat.table == ann.code).count() == 2
    client = again.test_client()
    page = parse(client.get(f"/t/{ann.code}").data)
    assert page.by_id("table") is not None and page.find("p", cls="clock") is None

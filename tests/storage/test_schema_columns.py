"""Columns added to a stored database when a new app opens it (app.storage.models'
migration): each one that is missing is added, the rows keep their values, and the app
reads the new column's absence as its default."""

from __future__ import annotations

import pytest

from app import create_app
from app.storage.models import Seat, Table, db
from tests.web.web_helpers import parse, seat_table, start


def reopened(database_url):
    db.close_all()
    return create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": database_url})


def test_a_stored_database_gains_the_lesson_column_and_its_tables_play_on(
    app, browser, database_url
):
    ann = seat_table(browser, ["Ann"], bots=["greedy"])[0]
    start(ann)
    with db.connection_context():  # as the database was before lessons
        db.execute_sql('ALTER TABLE "table" DROP COLUMN lesson')
    again = reopened(database_url)
    with again.app_context():
        row = Table.get_by_id(ann.code)
        assert row.lesson is None and row.status == Table.PLAYING
        assert Seat.select().where(Seat.table == ann.code).count() == 2
        columns = {c.name for c in db.get_columns("table")}
    assert "lesson" in columns
    page = parse(again.test_client().get(f"/t/{ann.code}").data)
    assert page.find("div", cls="board") is not None and page.by_id("hint") is None


@pytest.mark.parametrize("column", ["turn_clock", "min_finished"])
def test_every_added_column_of_a_table_comes_back(app, browser, database_url, column):
    ann = seat_table(browser, ["Ann"])[0]
    with db.connection_context():
        db.execute_sql(f'ALTER TABLE "table" DROP COLUMN {column}')
    again = reopened(database_url)
    with again.app_context():
        assert column in {c.name for c in db.get_columns("table")}
        assert Table.get_by_id(ann.code).status == Table.LOBBY

"""A table's rows as the store reads and writes them: the SQL every move runs (built
once: app.storage.queries.Prepared), a row's changed fields written, the stored state of a
game, rows made from another process's message, and a request's pooled connection given
back before it queues for a table (app.storage.table_store keeps the snapshots and the locks)."""

from __future__ import annotations

import datetime as dt

import peewee as pw
from playhouse.shortcuts import model_to_dict

from app.engine import GAME_OVER, Game
from app.storage.models import PastRound, Seat, Table, db
from app.storage.queries import Prepared, for_update

# The queries every move makes (app.storage.queries.Prepared).
ROW = Prepared(lambda code: Table.select().where(Table.code == code))
ROW_TO_CHANGE = Prepared(lambda code: for_update(Table.select().where(Table.code == code)))
_UPDATES: dict[tuple[str, ...], Prepared] = {}
# An error (division by zero: app.storage.pool.Conflict) unless the row is at that version.
VERSION_GUARD = Prepared(
    lambda version, code: for_update(
        Table.select(pw.SQL("1") / pw.Cast(Table.version == version, "int")).where(
            Table.code == code
        )
    )
)


def save_row(table: Table) -> None:
    """`table.save()` for a stored row: its changed fields (Peewee's `dirty_fields`), by
    SQL built once per set of changed fields, sent with the COMMIT on PostgreSQL (one
    round trip for both). The row stays as it is: a committed row is never saved again
    (the next change reads or makes its own)."""
    fields = table.dirty_fields
    if not fields:
        return
    names = tuple(f.name for f in fields)
    update = _UPDATES.get(names)
    if update is None:
        update = _UPDATES[names] = Prepared(
            lambda *values: Table.update(
                {f: pw.Value(v, converter=None) for f, v in zip(fields, values, strict=False)}
            ).where(Table.code == values[-1])
        )
    update.defer(*[f.db_value(getattr(table, f.name)) for f in fields], table.code)


SEATS = Prepared(
    lambda code, left: (
        Seat.select().where((Seat.table == code) & (Seat.left == left)).order_by(Seat.position)
    )
)
PAST_ROUNDS = Prepared(
    lambda code, number: (
        PastRound.select(PastRound.data)
        .where((PastRound.table == code) & (PastRound.game_number == number))
        .order_by(PastRound.number)
    )
)


def seats_of(table: Table | str) -> list[Seat]:
    """The seats at a table, in lobby order (read again by every process that did not
    make a change, to push it: the SQL is built once)."""
    return SEATS.all(Seat, table if isinstance(table, str) else table.code, False)


def stored_state(game: Game | None, past: int) -> dict | None:
    """A table row's state for `game`, whose first `past` rounds are PastRound rows (a
    finished game's are all in its row)."""
    if game is None:
        return None
    if game.phase == GAME_OVER:
        return game.to_dict()
    state = game.to_dict(first_round=past)
    state["past_rounds"] = past
    return state


def row_values(row: pw.Model, *leave_out: pw.Field) -> dict:
    """A row's fields as stored (a foreign key as its id), but `leave_out`."""
    return model_to_dict(row, recurse=False, exclude=list(leave_out))


def row_from(model, data: dict, dates: tuple[str, ...]):
    """A model instance from a snapshot message's fields (`row_values`, through JSON)."""
    data = dict(data)
    for name in dates:
        if isinstance(data.get(name), str):
            data[name] = dt.datetime.fromisoformat(data[name])
    return model(**data)


def release_connection() -> None:
    """Give a request's pooled connection back before queueing for a table: under load
    hundreds of requests may wait for one and would hold the whole pool. Only a plain
    open connection (a request's, or a timer's step: app.live.scheduler), not one
    inside a transaction. Nothing that queues for a table holds a connection_context:
    Peewee's would lose track of the connection closed here."""
    if not db.is_closed() and not db.in_transaction():
        db.close()

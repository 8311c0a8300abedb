"""Queries of a fixed shape, their SQL built once (the ones every move makes), and row
locks where many processes write."""

from __future__ import annotations

import peewee as pw

from app.storage.models import db, on_postgres


class Prepared:
    """A query of a fixed shape whose SQL is built once per kind of database. Peewee
    builds a query's SQL on every execution, which costs several times more than SQLite
    takes to run a small one: the queries every move makes are kept this way.

    `build(*params)` makes the query; it is called with the parameters in the order its
    SQL takes them (checked when the SQL is built), and only to build the SQL."""

    def __init__(self, build):
        self.build = build
        self._sql: dict[type, str] = {}

    def sql(self, params: tuple) -> str:
        kind = type(db.obj)  # the SQL differs by dialect only
        found = self._sql.get(kind)
        if found is None:
            found, built = self.build(*params).sql()
            if list(built) != list(params):
                raise ValueError(f"the parameters {params!r} are not the SQL's {built!r}")
            self._sql[kind] = found
        return found

    def first(self, model: type[pw.Model], *params):
        """The first row as a `model` instance (None if there is none)."""
        return next(iter(model.raw(self.sql(params), *params)), None)

    def all(self, model: type[pw.Model], *params) -> list:
        """Every row, as `model` instances."""
        return list(model.raw(self.sql(params), *params))

    def execute(self, *params) -> int:
        """Run it (an UPDATE or DELETE): the number of rows changed."""
        return db.execute_sql(self.sql(params), params).rowcount

    def defer(self, *params) -> None:
        """Run it, in a transaction on PostgreSQL with the next statement or the COMMIT
        (app.storage.pool): for a write whose row count nobody reads."""
        defer = getattr(db.obj, "defer", None)
        if defer is None:
            db.execute_sql(self.sql(params), params)
        else:
            defer(self.sql(params), params)


def for_update(query):
    """`query` locking the rows it reads until the transaction ends, on PostgreSQL (where
    many processes write); SQLite has one writer, and its write transaction is the lock.

    FOR NO KEY UPDATE: their keys stay, so a row referring to one (a table's due row)
    is inserted elsewhere without waiting for the lock. Waiting, such an insert
    deadlocked with the change holding the lock, which writes that due row too."""
    return query.for_update("FOR NO KEY UPDATE") if on_postgres() else query

"""Storage: Peewee models on SQLite by default, or PostgreSQL (psycopg 3, pooled) when
SKYMO_DATABASE_URL is a postgresql:// URL (the multi-process mode).

A table's engine state and its version are written in the same transaction as the move
that changed them, so a restart resumes every table at its last accepted move. Every
query here runs on both databases: no SQL of one dialect only."""

from __future__ import annotations

import datetime as dt
import logging
import sqlite3
import time

import orjson
import peewee as pw
from flask import render_template
from playhouse.db_url import connect, parse
from playhouse.pool import MaxConnectionsExceeded, PooledSqliteDatabase

from app.settings import is_postgres
from app.storage.pool import PooledPostgres

db = pw.DatabaseProxy()
log = logging.getLogger(__name__)

# Stored in place of a deleted account's name (results, seats); shown translated
# (app.i18n.person).
DELETED_NAME = "deleted player"


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


class JSONField(pw.TextField):
    """JSON in a text column (orjson: a table's state is encoded on every move)."""

    def db_value(self, value):
        if value is None:
            return None
        try:
            return orjson.dumps(value).decode()
        except orjson.JSONEncodeError:  # a key that is not a string: the option for it
            # costs a third more on every state written, which has none
            return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()

    def python_value(self, value):
        return None if value is None else orjson.loads(value)


class BaseModel(pw.Model):
    class Meta:
        database = db


class Table(BaseModel):
    """One table at /t/<code>: its lobby settings and, once started, the game."""

    LOBBY, PLAYING, FINISHED, CLOSED = "lobby", "playing", "finished", "closed"

    code = pw.CharField(primary_key=True, max_length=12)
    status = pw.CharField(default=LOBBY, index=True)
    public = pw.BooleanField(default=False)
    rules = JSONField()  # RuleSet.to_dict()
    state = JSONField(null=True)  # Game.to_dict() while a game exists
    version = pw.IntegerField(default=0)  # bumped by every accepted change
    game_number = pw.IntegerField(default=0)  # 1 for the first game, 2 for a rematch...
    host_seat = pw.IntegerField(null=True)
    grace_seconds = pw.IntegerField(default=15)
    rejoin_seconds = pw.IntegerField(default=180)
    # Per-round and per-game choices of the players: next-round presses, rematch opt-ins.
    votes = JSONField(default=dict)
    # The host's setting: the table's chat is open. Nullable so that adding the column
    # to a stored database alters no table (SQLite would rebuild it, cascading its seats).
    chat = pw.BooleanField(default=True, null=True)
    # The host's turn clock: seconds a player has for a turn (None: no clock). The
    # clock's state (when the turn began, each player's timed-out turns in a row, who
    # is treated as absent) is `clock` (app.tables.clock). Nullable, as `chat`.
    turn_clock = pw.IntegerField(null=True)
    clock = JSONField(null=True)
    # The host's setting: only accounts that finish at least this share (percent) of
    # their recent games may join. Nullable (None: anyone), like `chat`.
    min_finished = pw.IntegerField(null=True)
    # A lesson's table (/learn): one learner and a bot on a fixed deal, with hints; its
    # game counts in no stats or rating. Nullable, as `chat`.
    lesson = pw.BooleanField(default=False, null=True)
    created_at = pw.DateTimeField(default=utcnow)
    updated_at = pw.DateTimeField(default=utcnow, index=True)

    class Meta:
        # A move writes its state, version and time, not every column again (fields are
        # always assigned, never changed in place, so Peewee sees what changed).
        only_save_dirty = True


class User(BaseModel):
    """An optional account: stats, history and a place on the leaderboard."""

    username = pw.CharField(max_length=20)
    username_lower = pw.CharField(max_length=20, unique=True)  # unique regardless of case
    password_hash = pw.CharField(max_length=255)  # argon2
    # Part of the flask-login id: changing it (new password) signs out every other session.
    login_nonce = pw.CharField(max_length=32)
    created_at = pw.DateTimeField(default=utcnow)
    language = pw.CharField(max_length=8, null=True)  # chosen with ?lang=; None: not chosen
    theme = pw.CharField(max_length=8, null=True)  # "light" or "dark"; None: the device's


class Seat(BaseModel):
    """A person or a bot sitting at a table, in lobby order (`position`)."""

    table = pw.ForeignKeyField(Table, backref="seats", on_delete="CASCADE")
    position = pw.IntegerField()
    name = pw.CharField(max_length=40)
    bot = pw.CharField(null=True)  # bot policy name, or None for a person
    token = pw.CharField(unique=True, max_length=64)  # the guest's secret, kept in their cookie
    left = pw.BooleanField(default=False)  # removed from the lobby
    joined_at = pw.DateTimeField(default=utcnow)
    user = pw.ForeignKeyField(User, null=True, backref="seats", on_delete="SET NULL")

    class Meta:
        indexes = ((("table", "position"), False),)

    @property
    def player_id(self) -> str:
        return f"s{self.id}"


class GameRecord(BaseModel):
    """A finished game's `skymo.game/1` record, kept for results pages and downloads."""

    table = pw.ForeignKeyField(Table, backref="records", on_delete="CASCADE")
    number = pw.IntegerField()
    record = JSONField()
    finished_at = pw.DateTimeField(default=utcnow)

    class Meta:
        indexes = ((("table", "number"), True),)


class PastRound(BaseModel):
    """A finished round of a table's current game, written once when the next round
    begins: the table row then keeps only the round in play (app.storage.table_store)."""

    table = pw.ForeignKeyField(Table, backref="past_rounds", on_delete="CASCADE")
    game_number = pw.IntegerField()
    number = pw.IntegerField()  # the round's number in its game
    data = JSONField()  # Round.to_dict()

    class Meta:
        indexes = ((("table", "game_number", "number"), True),)


class Result(BaseModel):
    """One player's result in one finished game (app.features.stats), written in the transaction
    that ends the game. `user` is None for guests, bots and deleted accounts."""

    table = pw.ForeignKeyField(Table, backref="results", on_delete="CASCADE")
    number = pw.IntegerField()  # the table's game number
    seat = pw.ForeignKeyField(Seat, backref="results", on_delete="CASCADE")
    user = pw.ForeignKeyField(User, null=True, backref="results", on_delete="SET NULL")
    name = pw.CharField(max_length=40)  # as shown in that game
    bot = pw.CharField(null=True)
    players = pw.IntegerField()  # how many took part
    rank = pw.IntegerField()
    total = pw.IntegerField()
    forfeited = pw.BooleanField(default=False)
    rounds_played = pw.IntegerField(default=0)  # scored rounds this player took part in
    rounds_ended = pw.IntegerField(default=0)
    rounds_penalised = pw.IntegerField(default=0)  # of the rounds this player ended
    columns_cleared = pw.IntegerField(default=0)
    rows_cleared = pw.IntegerField(default=0)
    score_sum = pw.IntegerField(default=0)  # sum of this player's round scores
    round_scores = JSONField(default=list)
    finished_at = pw.DateTimeField(default=utcnow, index=True)
    # The seat's account was rated for this game (app.features.rating): False for a
    # guest's seat, even once the guest's results move to a new account; None for a
    # result written before ratings (rated by a recompute if it has an account).
    rated = pw.BooleanField(null=True)

    class Meta:
        indexes = ((("table", "number", "seat"), True),)


class Rating(BaseModel):
    """An account's skill rating after one finished game (app.features.rating): its
    latest row is its rating now. Goes with the account, and with the game's table as
    its results do (a recompute from the results arrives at the same rows)."""

    user = pw.ForeignKeyField(User, backref="ratings", on_delete="CASCADE")
    table = pw.ForeignKeyField(Table, on_delete="CASCADE")
    number = pw.IntegerField()  # the table's game number
    mu = pw.DoubleField()
    sigma = pw.DoubleField()
    games = pw.IntegerField()  # rated games so far, this one included
    finished_at = pw.DateTimeField(default=utcnow)

    class Meta:
        indexes = ((("user", "table", "number"), True),)


class Entry(BaseModel):
    """An account's seat in a game that started (app.features.reliability): `outcome`
    stays None while the game runs, and for good if it was abandoned."""

    FINISHED, FORFEITED = "finished", "forfeited"

    user = pw.ForeignKeyField(User, backref="entries", on_delete="CASCADE")
    table = pw.ForeignKeyField(Table, on_delete="CASCADE")
    number = pw.IntegerField()
    outcome = pw.CharField(max_length=12, null=True)
    started_at = pw.DateTimeField(default=utcnow)

    class Meta:
        indexes = ((("user", "table", "number"), True), (("user", "started_at"), False))


class ScoreSheet(BaseModel):
    """A score sheet for a game played with real cards (app.features.scoresheet). Kept for the
    device that started it (a token in its session) and for the account signed in;
    never part of the online stats or leaderboard."""

    code = pw.CharField(primary_key=True, max_length=12)  # also the read-only share link
    device = pw.CharField(max_length=64, index=True)
    user = pw.ForeignKeyField(User, null=True, backref="sheets", on_delete="SET NULL")
    players = JSONField()  # names, in the order they were entered
    end_score = pw.IntegerField(default=100)
    penalty = JSONField(null=True)  # Penalty fields, or None: no penalty
    version = pw.IntegerField(default=0)  # bumped by every change (pushes, stale forms)
    winners = JSONField(default=list)  # names, once the game is over (for the list)
    created_at = pw.DateTimeField(default=utcnow)
    updated_at = pw.DateTimeField(default=utcnow, index=True)


class SheetRound(BaseModel):
    """One round of a score sheet: each player's card total and who ended it. An undone
    round stays (undone) so its client id is still known: a late copy of it sent again
    from an offline queue is not counted twice."""

    sheet = pw.ForeignKeyField(ScoreSheet, backref="rounds", on_delete="CASCADE")
    number = pw.IntegerField()
    client_id = pw.CharField(max_length=64)
    raw = JSONField()  # card totals, in the sheet's player order
    ender = pw.IntegerField(null=True)  # index into the players, or None: nobody
    undone = pw.BooleanField(default=False)
    created_at = pw.DateTimeField(default=utcnow)

    class Meta:
        indexes = ((("sheet", "client_id"), True),)


class Due(BaseModel):
    """When a table's next automatic step (bot move, away player's turn, forfeit, next
    round, lobby upkeep) falls due, for the multi-process scheduler: a process claims a
    due row with FOR UPDATE SKIP LOCKED, so each step runs in one process only, and
    the table's version check keeps it exactly-once."""

    table = pw.ForeignKeyField(Table, primary_key=True, on_delete="CASCADE")
    at = pw.DoubleField(index=True)  # seconds since the epoch
    version = pw.IntegerField(default=0)  # the table version `at` was worked out from


class ChatMessage(BaseModel):
    """A line of a table's chat (app.storage.chat): typed text, or a quick phrase's key
    (shown in each reader's language). Kept for the table's life: removed when it closes,
    with its seat, or with the table row."""

    table = pw.ForeignKeyField(Table, backref="chat_messages", on_delete="CASCADE")
    seat = pw.ForeignKeyField(Seat, backref="chat_messages", on_delete="CASCADE")
    text = pw.CharField(max_length=1000, null=True)  # as typed, cleaned (None: a phrase)
    phrase = pw.CharField(max_length=20, null=True)  # a quick phrase's key
    sent_at = pw.DateTimeField(default=utcnow)

    class Meta:
        indexes = ((("table", "id"), False),)


class ChatReport(BaseModel):
    """A chat message someone reported, for the operator (`python -m app.cli.moderation`).
    It keeps what was shown (the words, the sender's name, the table's code) as plain
    values: the evidence outlives the message, which goes with its table."""

    message_id = pw.IntegerField()
    table_code = pw.CharField(max_length=12, index=True)
    sender = pw.CharField(max_length=40)  # the sender's name at the time
    text = pw.CharField(max_length=1000)  # the message as shown (a phrase: its English)
    # Who reported: "s<seat id>" (a player), "u<account id>" or "v<random>" (a spectator,
    # by their session). One report per message and reporter.
    reporter = pw.CharField(max_length=40)
    reporter_user = pw.ForeignKeyField(User, null=True, on_delete="SET NULL")
    reported_at = pw.DateTimeField(default=utcnow, index=True)

    class Meta:
        indexes = ((("message_id", "reporter"), True),)


class PushSubscription(BaseModel):
    """A device's "tell me when it's my turn" at one seat (app.storage.alerts): the push
    service's endpoint and keys the browser gave, in the language of the page that
    asked. Removed when turned off, when the push service says it expired, and with its
    seat's leaving, its table's closing or its account's deletion."""

    table = pw.ForeignKeyField(Table, null=True, backref="push_subscriptions", on_delete="CASCADE")
    seat = pw.ForeignKeyField(Seat, null=True, backref="push_subscriptions", on_delete="CASCADE")
    endpoint = pw.CharField(max_length=1000, null=True)
    p256dh = pw.CharField(max_length=200, null=True)  # the browser's public key
    auth = pw.CharField(max_length=100, null=True)  # the browser's auth secret
    locale = pw.CharField(max_length=8, null=True)
    # The last moment (a turn, a round, the end) this device was alerted of: claimed
    # by one update, so one process sends each alert once.
    moment = pw.CharField(max_length=100, null=True)
    created_at = pw.DateTimeField(default=utcnow, null=True)

    class Meta:
        indexes = ((("seat", "endpoint"), True),)


MODELS = [
    Table,
    User,
    Seat,
    GameRecord,
    PastRound,
    Result,
    Rating,
    Entry,
    ScoreSheet,
    SheetRound,
    Due,
    ChatMessage,
    ChatReport,
    PushSubscription,
]
SCHEMA_LOCK = 727_274  # the advisory lock id processes take while creating the schema


def on_postgres() -> bool:
    return isinstance(db.obj, pw.PostgresqlDatabase)


def _migrate(database) -> None:
    """Columns added after a database was created (create_tables adds only tables, and
    would fail creating the index of a missing column): runs before create_tables."""
    for model, name in (
        (User, "language"),
        (User, "theme"),
        (Table, "chat"),
        (Table, "turn_clock"),
        (Table, "clock"),
        (Result, "rated"),
        (Table, "min_finished"),
        (Table, "lesson"),
    ):
        _add_missing(database, model, name)
    seat = Seat._meta.table_name
    if database.table_exists(seat) and "user_id" not in {
        c.name for c in database.get_columns(seat)
    }:
        with database.atomic():
            User.create_table()
            _add_column(database, Seat, "user")


def _add_missing(database, model, name: str) -> None:
    """Add `model`'s column `name` to a stored table that lacks it."""
    table = model._meta.table_name
    if database.table_exists(table) and name not in {c.name for c in database.get_columns(table)}:
        with database.atomic():
            _add_column(database, model, name)


def _add_column(database, model, name: str) -> None:
    from playhouse.migrate import SchemaMigrator, migrate

    field = model._meta.fields[name]
    table = model._meta.table_name
    migrate(SchemaMigrator.from_database(database).add_column(table, field.column_name, field))


def open_database(url: str, pool_size: int = 32, wait: float = 30):
    """The Peewee database for a URL: PostgreSQL through psycopg 3 with Peewee's pool,
    SQLite (the default) pooled too; any other Peewee URL as Peewee opens it."""
    if is_postgres(url):
        params = parse(url)
        name = params.pop("database")
        # A statement or transaction waits up to `timeout` s, in turn, for a free one
        # of the pool's `max_connections` (each process has its own pool).
        return PooledPostgres(
            name, max_connections=pool_size, stale_timeout=300, timeout=wait, **params
        )
    database = connect(url)
    if isinstance(database, pw.SqliteDatabase):
        # WAL lets readers work during a write; busy_timeout waits for a lock instead
        # of failing a concurrent move. Transactions begin IMMEDIATE: a deferred one
        # that reads, then writes after another connection committed, fails at once
        # with "database is locked" (SQLITE_BUSY_SNAPSHOT ignores busy_timeout).
        # A pool: closing a connection at the end of a request or push hands it back
        # instead of closing the file (which costs more than the request itself).
        database = PooledSqliteDatabase(
            database.database,
            # Under gevent a request holds its connection only while it runs (SQLite
            # calls never yield), and gives it back while it queues for a table or the
            # write lock (app.storage.table_store): a few dozen are plenty. Hundreds were in
            # use only while socket handshakes hung in Thread.start (app.live.hub.background);
            # each connection keeps its own page cache, so their number is memory.
            max_connections=pool_size,
            stale_timeout=600,
            timeout=30,
            # synchronous=NORMAL with WAL: a commit survives a killed process (the OS
            # has it), only an OS crash or power cut may lose the last commits; it
            # saves an fsync per move.
            pragmas={
                "journal_mode": "wal",
                "synchronous": "normal",
                "busy_timeout": 5000,
                "foreign_keys": 1,
                "cache_size": -256,  # KiB
            },
            check_same_thread=False,
            lock_type="IMMEDIATE",
        )
    return database


def create_schema(wait: float = 0) -> None:
    """Create or migrate the schema; on PostgreSQL under an advisory lock, so processes
    starting together do not race (CREATE TABLE IF NOT EXISTS is not safe concurrently).
    Waits up to `wait` seconds for the database to answer (it may start with us)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            db.connect(reuse_if_open=True)
            break
        except pw.OperationalError as exc:
            if time.monotonic() >= deadline:
                raise pw.OperationalError(f"the database does not answer: {exc}") from exc
            log.warning("waiting for the database: %s", exc)
            time.sleep(1)
    db.close()
    with db.connection_context():
        if on_postgres():
            db.execute_sql("SELECT pg_advisory_lock(%s)", (SCHEMA_LOCK,))
        try:
            _migrate(db.obj)
            db.create_tables(MODELS)
        finally:
            if on_postgres():
                db.execute_sql("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK,))


def init_app(app) -> None:
    db.initialize(
        open_database(
            app.config["DATABASE_URL"],
            app.config.get("DB_POOL_SIZE", 32),
            app.config.get("DB_POOL_WAIT", 30),
        )
    )
    create_schema(wait=app.config.get("DB_WAIT_SECONDS", 30))
    if isinstance(db.obj, pw.SqliteDatabase) and db.obj.database not in ("", ":memory:"):
        # Keep one connection reading the database for the process's life: closing the
        # last connection to a WAL database checkpoints and deletes the WAL (fsyncs,
        # ~10 ms), under Peewee's global lock, and every request and push closes one.
        keeper = sqlite3.connect(db.obj.database, check_same_thread=False)
        keeper.execute("SELECT count(*) FROM sqlite_master").fetchall()
        app.extensions["skymo_sqlite_keeper"] = keeper

    # No connection is opened before a request: its first query opens one (Peewee's
    # autoconnect), and most requests at a table make none before their change step
    # (the seat comes from the known snapshot), which gave it back again before queueing
    # for the table (app.storage.table_rows.release_connection) only to take one anew. On
    # PostgreSQL each statement or transaction checks one out for itself (app.storage.pool).
    @app.teardown_request
    def _close(exc):
        if not db.is_closed():
            db.close()

    @app.errorhandler(pw.OperationalError)
    @app.errorhandler(pw.InterfaceError)
    @app.errorhandler(MaxConnectionsExceeded)  # no pooled connection free in time
    def _unavailable(exc):
        # The database cannot be reached: the transaction was rolled back (nothing
        # half-written), and the page says so instead of a bare 500.
        app.logger.warning("database unavailable: %s", exc)
        if not db.is_closed():
            db.close()
        return render_template("pages/unavailable.html"), 503, {"Retry-After": "5"}


def open_table_codes() -> list[str]:
    """Tables in a lobby or in play: what a (re)started scheduler looks at again."""
    with db.connection_context():
        return [
            t.code
            for t in Table.select(Table.code).where(Table.status.in_([Table.PLAYING, Table.LOBBY]))
        ]

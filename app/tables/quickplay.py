"""Play now: a seat at a public table that waits for players (in its lobby, its host
present, the default rules), or else a new public table with the presser as host,
which starts by itself after a short wait, bots in the seats nobody took.

Race-free in every mode: seats are taken by the change step (the table's lock: never
more than PLAY_NOW_SEATS), and "none waits, open one" is decided under a lock every
process shares (`Store.serialized`), so people pressing at once share one table."""

from __future__ import annotations

import secrets
import time

from flask_babel import gettext as _

from app.engine import RuleSet
from app.storage.models import Seat, Table
from app.storage.table_store import TableError, seats_of, store
from app.tables import service
from app.tables.lobby import add_bot_seat, join, new_code
from app.tables.playing import new_game
from app.tables.step import Change
from app.tables.validation import clean_name

PLAY_NOW_SEATS = 4  # a Play now table fills this many seats, with bots if need be
START_SECONDS = 30  # a new Play now table starts by itself after this wait
TURN_CLOCK = 60  # seconds per turn at a Play now table
FILL_BOT = "greedy"
LOCK_ID = 727_275  # the advisory lock of "open a table" (SCHEMA_LOCK is 727_274)
ATTEMPTS = 6  # tables filled or started under our feet before we give up


def play_now(name: str, user_id: int | None = None) -> tuple[str, Seat]:
    """(table code, seat) of the presser: at a waiting table, or at one opened now."""
    clean_name(name)  # a bad name is refused before any table is looked at
    refused: set[str] = set()
    for _attempt in range(ATTEMPTS):
        for code in waiting():
            if code in refused:
                continue
            try:
                return code, join(code, name, user_id, seats=PLAY_NOW_SEATS)
            except TableError:
                refused.add(code)  # filled, started or closed meanwhile, or the name is taken
        opened = _open_unless_waiting(name, user_id, refused)
        if opened is not None:
            return opened
    raise TableError(_("Every table filled up at once: press Play now again."), 503)


def waiting(limit: int = 20) -> list[str]:
    """Codes of public tables in their lobby with the default rules, a free seat and
    their host present, the longest waiting first (people pressing meet at one)."""
    rows = (
        Table.select()
        .where((Table.public == True) & (Table.status == Table.LOBBY))  # noqa: E712
        .order_by(Table.created_at, Table.code)
        .limit(limit)
    )
    default = RuleSet().to_dict()
    presence = service.current().presence
    found = []
    for table in rows:
        if table.rules != default or table.host_seat is None:
            continue
        if len(seats_of(table)) < PLAY_NOW_SEATS and table.host_seat in presence.present(
            table.code
        ):
            found.append(table.code)
    return found


def lobbies(codes: list[str]) -> list[Table]:
    """The tables among `codes` that are in their lobby."""
    if not codes:
        return []
    return list(Table.select().where(Table.code.in_(codes[-200:]) & (Table.status == Table.LOBBY)))


def _open_unless_waiting(
    name: str, user_id: int | None, refused: set[str]
) -> tuple[str, Seat] | None:
    """A new Play now table with the presser as host, unless one waits by now that did
    not refuse them (another presser opened it while we looked): None then, to join it."""
    tables = service.current()
    with store.serialized(LOCK_ID):
        if set(waiting()) - refused:
            return None
        table = Table.create(
            code=new_code(),
            rules=RuleSet().to_dict(),
            public=True,
            turn_clock=TURN_CLOCK,
            clock={"start_at": time.time() + START_SECONDS},
        )
        seat = Seat.create(
            table=table,
            position=0,
            name=clean_name(name),
            token=secrets.token_urlsafe(24),
            user=user_id,
        )
        table.host_seat = seat.id
        table.save()
        # Present before the commit: the next presser, waiting for the lock, finds it.
        tables.presence.arrived(table.code, seat.id)
    tables.scheduler.wake(table.code)  # its start by itself
    return table.code, seat


def starts_at(table: Table) -> float | None:
    """When a Play now table in its lobby starts by itself (None: not one)."""
    if table.status != Table.LOBBY:
        return None
    return (table.clock or {}).get("start_at")


def fill_and_start(ch: Change) -> None:
    """Bots in the seats nobody took, then the game (a Play now table's start)."""
    while len(ch.seats) < PLAY_NOW_SEATS:
        add_bot_seat(ch, FILL_BOT)
    ch.table.clock = None
    new_game(ch, ch.seats)


def start_now(code: str, seat: Seat | None, version=None):
    """The host's "Start now": no more waiting for people."""

    def act(ch: Change):
        if seat is None or seat.id != ch.table.host_seat:
            raise TableError(_("Only the host can do that."), 403)
        if starts_at(ch.table) is None:
            raise TableError(_("The game has already started."), 409)
        fill_and_start(ch)

    return service.change(code, act)

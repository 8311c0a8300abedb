"""The table service: the only place that joins the engine, the store and the hub.

- store.py: rows, the per-version cache of loaded games, locks
- step.py: the one change path every command and timer takes
- lobby.py: lobby commands; playing.py: game commands
- automation.py: bots, away players, timers; scheduler.py: running them when due
- validation.py: names, the rules form, timers"""

from __future__ import annotations

from app.live import scheduler as scheduler_module
from app.live.hub import hub
from app.live.presence import presence
from app.live.scheduler import schedule, scheduler
from app.storage.models import Seat
from app.storage.queries import Prepared
from app.storage.table_store import Snapshot, Stale, TableError, seats_of, store
from app.tables import step
from app.tables.automation import next_automatic, run_automatic, settings
from app.tables.lobby import (
    BOT_NAMES,
    MAX_SEATS,
    add_bot,
    create_table,
    get_table,
    join,
    public_tables,
    remove_seat,
    start,
    update_rules,
)
from app.tables.playing import (
    forfeit,
    opt_rematch,
    play,
    rematch_seats,
    rematch_starter,
    rename_players,
    start_rematch,
    vote_next_round,
)
from app.tables.step import ANY_VERSION, Change, Unchanged, change, save_game
from app.tables.validation import GRACE_RANGE, NAME_MAX, REJOIN_RANGE, clean_name, parse_rules


def load_game(table):
    return store.load_game(table)


def game_record(code: str, number: int):
    return store.game_record(code, number)


def _seat_where(column: str):
    def build(table, value, left):
        return Seat.select().where(
            (Seat.table == table) & (getattr(Seat, column) == value) & (Seat.left == left)
        )

    return Prepared(build)


_SEAT_BY_TOKEN = _seat_where("token")  # every request at a table asks (app.web.table)
_SEAT_BY_USER = _seat_where("user")


def _code(table) -> str:
    return table if isinstance(table, str) else table.code


def seat_by_token(table, token: str | None):
    if not token:
        return None
    return _SEAT_BY_TOKEN.first(Seat, _code(table), token, False)


def seat_by_user(table, user_id: int | None):
    """A signed-in user's seat at this table, whichever device they sat down from."""
    if user_id is None:
        return None
    return _SEAT_BY_USER.first(Seat, _code(table), int(user_id), False)


def _publish(snap: Snapshot, what: str) -> None:
    hub.publish(snap.code, what, snapshot=snap)


def _forget_closed(snap: Snapshot, what: str) -> None:
    from app.storage.models import Table

    if snap.table.status == Table.CLOSED:
        presence.forget(snap.code)
    _publish(snap, what)


def init_app(app) -> None:
    settings.bot_delay = float(app.config.get("BOT_DELAY", settings.bot_delay))
    settings.next_round_seconds = float(app.config.get("NEXT_ROUND_SECONDS", 20))
    settings.inline_bots = bool(app.config.get("INLINE_BOTS", False))
    step.set_transport(_forget_closed)
    step.set_scheduler(schedule, scheduler_module.within, scheduler_module.prepare)
    active = scheduler
    if app.config.get("REDIS_URL"):
        from app.cluster import fanout  # PostgreSQL + Redis: many processes

        active = fanout.init_app(app)
    else:
        hub.set_fanout(None)
        hub.set_announcer(None)
        presence.share(None)
    scheduler_module.use(active)
    if not settings.inline_bots:
        active.start(app)
        presence.on_change(_wake_on_presence)


def _wake_on_presence(code: str, seat_id: int, present: bool) -> None:
    """Someone left or came back: their turns, forfeits and the host may change."""
    scheduler_module.wake(code)


__all__ = [
    "ANY_VERSION",
    "BOT_NAMES",
    "GRACE_RANGE",
    "MAX_SEATS",
    "NAME_MAX",
    "REJOIN_RANGE",
    "Change",
    "Snapshot",
    "Stale",
    "TableError",
    "Unchanged",
    "add_bot",
    "change",
    "clean_name",
    "create_table",
    "forfeit",
    "game_record",
    "get_table",
    "join",
    "load_game",
    "next_automatic",
    "opt_rematch",
    "parse_rules",
    "play",
    "public_tables",
    "remove_seat",
    "rename_players",
    "run_automatic",
    "save_game",
    "seat_by_token",
    "seat_by_user",
    "seats_of",
    "settings",
    "start",
    "rematch_seats",
    "rematch_starter",
    "start_rematch",
    "store",
    "update_rules",
    "vote_next_round",
]

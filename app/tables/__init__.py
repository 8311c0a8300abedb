"""The table service: the only place that joins the engine, the store and the hub.

- service.py: the one change path every command and timer takes (TableService)
- ports.py: what the service needs from its adapters (app/wiring.py picks them)
- step.py: a change's parts
- lobby.py: lobby commands; playing.py: game commands
- clock.py: the turn clock (the host's seconds per turn, players who let it run out)
- quickplay.py: Play now (a seat at a waiting public table, or a new one)
- automation.py: bots, away players, timers (app.live.scheduler and
  app.cluster.due run them when due)
- validation.py: names, the rules form, timers"""

from __future__ import annotations

from app.storage.models import Seat
from app.storage.queries import Prepared
from app.storage.table_store import Snapshot, Stale, TableError, seats_of, store
from app.tables.automation import next_automatic, run_automatic
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
    come_back,
    forfeit,
    opt_rematch,
    play,
    rematch_seats,
    rematch_starter,
    rename_players,
    start_rematch,
    vote_next_round,
)
from app.tables.quickplay import PLAY_NOW_SEATS, lobbies, play_now, start_now, starts_at
from app.tables.service import TableService, Timing, change, current
from app.tables.step import ANY_VERSION, Change, Unchanged, save_game
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


__all__ = [
    "ANY_VERSION",
    "BOT_NAMES",
    "GRACE_RANGE",
    "MAX_SEATS",
    "PLAY_NOW_SEATS",
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
    "come_back",
    "create_table",
    "forfeit",
    "game_record",
    "get_table",
    "join",
    "load_game",
    "lobbies",
    "next_automatic",
    "opt_rematch",
    "parse_rules",
    "play",
    "play_now",
    "public_tables",
    "remove_seat",
    "rename_players",
    "run_automatic",
    "save_game",
    "seat_by_token",
    "seat_by_user",
    "seats_of",
    "current",
    "TableService",
    "Timing",
    "start",
    "start_now",
    "starts_at",
    "rematch_seats",
    "rematch_starter",
    "start_rematch",
    "store",
    "update_rules",
    "vote_next_round",
]

"""A change's parts: what an act function works on (`Change`), the version check, and
the write with its bookkeeping (service.py runs them in order)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from app.engine import GAME_OVER, ROUND_OVER, Game, to_record
from app.features import stats
from app.storage.models import GameRecord, Table
from app.storage.table_store import Snapshot, Stale, seats_of, store
from app.tables import clock

log = logging.getLogger(__name__)

ANY_VERSION = object()  # a command whose outcome does not depend on the page shown


@dataclass
class Change:
    """What an act function works on, under the table's lock."""

    snap: Snapshot
    game_changed: bool = False  # the engine state changed: write it
    seats_changed: bool = False  # seats were added or left: read them again
    what: str = "table"  # what to push: "table" (the whole table) or "lobby"

    @property
    def table(self) -> Table:
        return self.snap.table

    @property
    def game(self) -> Game | None:
        return self.snap.game

    @property
    def seats(self):
        return self.snap.seats

    def set_game(self, game: Game | None) -> None:
        self.snap.game = game
        self.snap.past_rounds = 0
        self.game_changed = True


class Unchanged(Exception):
    """Raised by an act function: nothing to do (nothing is written or pushed)."""


def check_version(table: Table, version) -> None:
    try:
        version = int(version)
    except (TypeError, ValueError):
        raise Stale() from None
    if version != table.version:
        raise Stale()


def save(ch: Change, store) -> None:
    """Bookkeeping of a changed game (votes at the end of a round; record and results
    at the end of the game), then the write, in the change's transaction."""
    snap = ch.snap
    if ch.game_changed and snap.game is not None:
        settle(snap.table, snap.game)
        clock.track(snap.table, snap.game, time.time())
    if ch.seats_changed:
        snap.seats = seats_of(snap.table)
    store.write(snap, ch.game_changed)


def settle(table: Table, game: Game) -> None:
    if game.phase == ROUND_OVER and table.votes.get("round") != len(game.rounds):
        table.votes = {"round": len(game.rounds), "round_over_at": time.time(), "next": []}
    if game.phase == GAME_OVER and table.status != Table.FINISHED:
        table.status = Table.FINISHED
        table.votes = {"rematch": []}
        GameRecord.insert(
            table=table, number=table.game_number, record=to_record(game)
        ).on_conflict(
            conflict_target=[GameRecord.table, GameRecord.number],
            preserve=[GameRecord.record, GameRecord.finished_at],
        ).execute()
        if not table.lesson:  # a lesson counts in no stats or rating
            stats.record_results(table, game)  # same transaction: results once per game


def save_game(table: Table, game: Game) -> None:
    """Write a game to its table in the caller's transaction (tests, imports): the
    bookkeeping of `save`, without the push."""
    settle(table, game)
    snap = Snapshot(table, [], game, 0)
    store.write(snap, True)
    store.forget(table.code)

"""The turn clock: the host's choice of seconds per turn, when the turn in play began,
and the players who let it run out. Its state is the table row's `clock` (written with
the change that made it, so every process and a restart see the same):

    {"turn": "<round>:<whose turn, or setup>", "since": <when that turn began>,
     "timeouts": {player id: turns timed out in a row},
     "absent": {player id: when they were treated as absent}}

Dicts are assigned anew, never changed in place (the row's committed fields are shared
by the snapshots a process keeps)."""

from __future__ import annotations

from flask import current_app
from flask_babel import gettext as _

from app.engine import PLAY, SETUP, Game
from app.storage.models import Table
from app.storage.table_store import TableError

CHOICES = (30, 60, 90, 120)  # seconds per turn the host may choose
TIMEOUTS_TO_ABSENT = 3  # timed-out turns in a row after which a player counts as absent


def choices() -> tuple[int, ...]:
    """The seconds per turn offered: tests add short ones (app.config TURN_CLOCK_CHOICES)."""
    return tuple(current_app.config.get("TURN_CLOCK_CHOICES") or CHOICES)


def parse(form, current: int | None) -> int | None:
    """The lobby form's turn clock ("none" or one of the choices); absent: unchanged."""
    raw = form.get("turn_clock")
    if raw is None:
        return current
    raw = str(raw).strip()
    if raw in ("", "none"):
        return None
    if raw.isdigit() and int(raw) in choices():
        return int(raw)
    raise TableError(_("Turn clock: that value is not one of the choices."), field="turn_clock")


def turn_key(game: Game | None) -> str | None:
    """What the clock times: everyone's first flips, or one player's turn."""
    if game is None or not game.rounds:
        return None
    if game.phase == SETUP:
        return f"{game.round.number}:setup"
    if game.phase == PLAY:
        return f"{game.round.number}:{game.round.turn}"
    return None


def track(table: Table, game: Game | None, now: float) -> None:
    """After a game changed: a new turn (or setup) starts the clock again."""
    if not table.turn_clock:
        return
    state = table.clock or {}
    key = turn_key(game)
    if state.get("turn") != key:
        table.clock = {**state, "turn": key, "since": now}


def deadline(table: Table, fallback: float) -> float | None:
    """When the turn in play (or the first flips) times out; None without a clock."""
    if not table.turn_clock:
        return None
    return (table.clock or {}).get("since", fallback) + table.turn_clock


def absent_since(table: Table, player_id: str) -> float | None:
    """When a player was treated as absent for letting the clock run out, if they are."""
    return (table.clock or {}).get("absent", {}).get(player_id)


def timed_out(table: Table, player_id: str, now: float) -> None:
    """A turn the clock ran out on was played for the player: one more in a row."""
    state = table.clock or {}
    timeouts = {**state.get("timeouts", {})}
    timeouts[player_id] = timeouts.get(player_id, 0) + 1
    state = {**state, "timeouts": timeouts}
    if timeouts[player_id] >= TIMEOUTS_TO_ABSENT and absent_since(table, player_id) is None:
        state["absent"] = {**state.get("absent", {}), player_id: now}
    table.clock = state


def played(table: Table, player_id: str) -> bool:
    """The player moved or said they are back: no timeouts in a row, not absent. False
    if there was nothing to clear."""
    state = table.clock or {}
    timeouts, absent = state.get("timeouts", {}), state.get("absent", {})
    if player_id not in timeouts and player_id not in absent:
        return False
    table.clock = {
        **state,
        "timeouts": {p: n for p, n in timeouts.items() if p != player_id},
        "absent": {p: t for p, t in absent.items() if p != player_id},
    }
    return True

"""What the table page shows beyond the board itself: the countdown before an away
player's turn is played for them (or before the turn clock runs out), and the name
limit the page checks as the server does."""

from __future__ import annotations

import threading
import time

from app import tables
from app.tables import clock
from app.tables.quickplay import START_SECONDS
from app.web import services

_lock = threading.Lock()
_cache: dict[str, tuple[tuple, dict | None]] = {}  # code -> (key, countdown)


def away_countdown(table, now: float | None = None) -> dict | None:
    """{"name", "seat", "seconds", "setup", "clock", "idle"} when the server will play for the
    player the game waits for: they have no page open, or let the turn clock run out too
    often ("idle"), or their turn clock runs ("clock"); else None. Worked out once per
    table state (a push renders the table once per player)."""
    now = time.time() if now is None else now
    if table.status != table.PLAYING:
        return None
    sockets = frozenset(c.seat_id for c in services.hub().connections(table.code))
    key = (table.version, sockets, int(now))
    with _lock:
        cached = _cache.get(table.code)
    if cached is not None and cached[0] == key:
        return cached[1]
    result = _countdown(table, now, sockets)
    with _lock:
        if len(_cache) > 1000:
            _cache.clear()
        _cache[table.code] = (key, result)
    return result


def _countdown(table, now: float, sockets: frozenset) -> dict | None:
    snap = tables.store.snapshot_of(table)
    timed = snap.table.turn_clock or snap.table.clock
    if snap.game is None or (
        not timed and all(s.id in sockets for s in snap.seats if s.bot is None)
    ):
        # Every person at the table has a socket open here: nobody is away, so the
        # server plays for nobody (what comes next is not worked out for nothing).
        return None
    service = tables.current()
    due = tables.next_automatic(snap, service.presence, service.timing, now)
    if due is None or due[1] not in ("proxy", "proxy_setup", "clock", "clock_setup"):
        return None
    when, kind, player_id = due
    # Due only while the seat has no open socket (a seat seen by a recent request is
    # counted present a while longer: the countdown includes that).
    seat = next((s for s in snap.seats if s.player_id == player_id), None)
    if seat is None:
        return None
    seconds = max(0, round(when - now))
    return {
        "name": seat.name,
        "seat": seat.id,  # the viewer in this seat reads it said to them
        "seconds": seconds,
        "setup": kind.endswith("_setup"),
        "clock": kind.startswith("clock"),
        "idle": clock.absent_since(snap.table, player_id) is not None,
    }


def waiting_page(me, status: str, board: dict | None, is_host: bool) -> bool:
    """A page whose viewer only waits for others: without JavaScript it reloads itself
    (never a page where they type or choose something)."""
    if status == "lobby":
        return me is not None and not is_host
    if status != "playing" or board is None:
        return False
    if not board["playing"]:
        return True  # watching
    if board["phase"] == "round_over":
        return board["voted_next"]
    return not board["my_turn"] and not board["setup_left"]


def init_app(app) -> None:
    app.jinja_env.globals.update(
        name_max=tables.NAME_MAX, waiting_page=waiting_page, play_now_wait=START_SECONDS
    )

"""The events of the moves most turns make that show no card or one turned card:
read-only (Frozen), so one copy of each serves every game. A part of turns.py, kept
apart for length."""

from __future__ import annotations

from app.engine.frozen import Frozen


def draw_event(player_id: str) -> Frozen:
    """The event of `player_id`'s draw. It shows no card: one read-only copy per player
    serves every draw (kept in DRAW_EVENTS)."""
    if len(DRAW_EVENTS) >= 4096:
        DRAW_EVENTS.clear()
    event = DRAW_EVENTS[player_id] = Frozen(type="draw", player=player_id)
    return event


DRAW_EVENTS: dict[str, Frozen] = {}


def flip_event(row: int, col: int, value: int) -> Frozen:
    """The card turned over with a discard, as its event shows it: read-only, so one
    copy per cell and card serves every game (a few hundred of them)."""
    key = (row, col, value)
    event = _FLIP_EVENTS.get(key)
    if event is None:
        if len(_FLIP_EVENTS) >= 4096:
            _FLIP_EVENTS.clear()
        event = _FLIP_EVENTS[key] = Frozen(row=row, col=col, value=value)
    return event


_FLIP_EVENTS: dict[tuple[int, int, int], Frozen] = {}

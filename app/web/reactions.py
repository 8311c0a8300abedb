"""Reactions: a player taps one of a few emoji and every page at the table shows it on
that player's area for a few seconds.

Kept in memory like the hub (a reaction is gone in seconds, nothing to store). Only the
fixed choices exist (no free text), and each seat is rate-limited. A reaction is pushed
as one out-of-band span to every socket at the table: the whole table is not rendered
again, so nobody's half-made move (choosing where a card goes) is reset by it."""

from __future__ import annotations

import threading
import time
from collections import deque

from flask_babel import force_locale
from flask_babel import lazy_gettext as _l
from markupsafe import Markup

from app import i18n
from app.web import board, services

CHOICES = {
    "thumbs": ("\N{THUMBS UP SIGN}", _l("Thumbs up")),
    "laugh": ("\N{FACE WITH TEARS OF JOY}", _l("Laughing")),
    "wow": ("\N{FACE WITH OPEN MOUTH}", _l("Wow")),
    "oops": ("\N{GRIMACING FACE}", _l("Oops")),
    "party": ("\N{PARTY POPPER}", _l("Party")),
    "clap": ("\N{CLAPPING HANDS SIGN}", _l("Applause")),
}
SHOWN_SECONDS = 4.0
MIN_GAP = 1.5  # seconds between two reactions of a seat
PER_MINUTE = 12

_lock = threading.Lock()
_shown: dict[tuple[str, str], tuple[str, float]] = {}  # (code, player) -> (key, at)
_sent: dict[tuple[str, int], deque] = {}  # (code, seat id) -> times of recent reactions


def allowed(code: str, seat_id: int, now: float) -> bool:
    """Record a reaction of this seat if within the rate limit."""
    with _lock:
        times = _sent.setdefault((code, seat_id), deque())
        while times and times[0] < now - 60:
            times.popleft()
        if len(times) >= PER_MINUTE or (times and now - times[-1] < MIN_GAP):
            return False
        times.append(now)
        _forget_old(now)
        return True


def _forget_old(now: float) -> None:
    for key in [k for k, (_key, at) in _shown.items() if at < now - SHOWN_SECONDS]:
        del _shown[key]
    for key in [k for k, times in _sent.items() if not times or times[-1] < now - 60]:
        del _sent[key]


def reaction_of(code: str, player_id: str, now: float | None = None) -> dict | None:
    """The reaction this player's area shows now, if any."""
    now = time.time() if now is None else now
    with _lock:
        shown = _shown.get((code, player_id))
    if shown is None or shown[1] < now - SHOWN_SECONDS:
        return None
    key, at = shown
    emoji, label = CHOICES[key]
    age = round(now - at, 2)
    return {"emoji": emoji, "label": str(label), "age": age, "left": SHOWN_SECONDS - age}


def reaction_slot(code: str, player_id: str, oob: bool = False) -> Markup:
    """A player's area's reaction slot, with their latest reaction for a few seconds.
    The slot is always there, so a push can fill it out of band; the animation carries
    on from the reaction's age when a later push renders it again."""
    return board.reaction_slot(player_id, reaction_of(code, player_id), oob)


def slots_html(code: str, player_ids) -> dict[str, Markup]:
    """Each player's reaction slot (a push's shared part keeps them), with one look at
    the reactions shown: most slots are empty, and an empty one is rendered once per
    player (every push has one per player)."""
    now = time.time()
    with _lock:
        shown = {pid: _shown.get((code, pid)) for pid in player_ids}
    return {
        pid: reaction_slot(code, pid)
        if s is not None and s[1] >= now - SHOWN_SECONDS
        else empty_slot(pid)
        for pid, s in shown.items()
    }


def empty_slot(player_id: str) -> Markup:
    found = _empty.get(player_id)
    if found is None:
        if len(_empty) >= 4096:
            _empty.clear()
        found = _empty[player_id] = board.reaction_slot(player_id)
    return found


_empty: dict[str, Markup] = {}  # player id -> their empty slot (no words: any language)


def choices() -> list[tuple[str, int, str]]:
    """The reactions offered: key, the emoji's code point and its label in the current
    language (worked out once per catalog: every viewer of every push is offered them)."""
    return i18n.per_catalog(_choices, (), _labelled)


def _labelled() -> list[tuple[str, int, str]]:
    return [(key, ord(emoji), str(label)) for key, (emoji, label) in CHOICES.items()]


_choices: dict[tuple, tuple] = {}  # one entry per language


def push(code: str, player_id: str) -> None:
    """The player's reaction slot, out of band, to every socket at the table, in each
    socket's language (its label is read out)."""
    slots: dict[str, str] = {}
    for conn in services.hub().connections(code):
        if conn.locale not in slots:
            with force_locale(conn.locale):
                slots[conn.locale] = str(reaction_slot(code, player_id, oob=True))
        # In the socket's own queue, after the table it last got (never reordered).
        conn.offer(slots[conn.locale], conn.sent_version, part=True)


def show(code: str, data: dict) -> None:
    """A reaction (from this process or another): kept for a few seconds, and pushed."""
    player, key, at = data.get("player"), data.get("key"), data.get("at")
    if key not in CHOICES or not isinstance(player, str) or not isinstance(at, (int, float)):
        return
    with _lock:
        _shown[(code, player)] = (key, at)
    push(code, player)


def init_app(app) -> None:
    app.extensions[services.SERVICES].hub.on_event("reaction", show)
    app.jinja_env.globals.update(reaction_slot=reaction_slot, reaction_choices=choices)

"""The table chat: who may write, what is kept, how often, and reports.

Seated players write (typed text or a quick phrase, sent as its key and read in each
reader's language); spectators read. Text is cleaned before it is stored
(app.tables.validation.clean_message). The rate limit is kept in memory per process,
as the reactions' is: behind the proxy's table affinity a table's requests reach one
process, and a restart forgets only the last ten seconds."""

from __future__ import annotations

import threading
import time
from collections import deque

from flask_babel import force_locale
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from app import i18n
from app.storage import chat
from app.storage.chat import Line
from app.storage.models import Seat, Table
from app.tables import TableError
from app.tables.validation import MESSAGE_MAX, clean_message

__all__ = ["MESSAGE_MAX", "PHRASES", "allowed", "post", "report", "sender", "shown"]

PHRASES = {
    "good_game": _l("Good game!"),
    "your_turn": _l("Your turn!"),
    "nice_column": _l("Nice column!"),
    "well_played": _l("Well played!"),
    "oops": _l("Oops!"),
    "one_more": _l("One more?"),
}
PER_WINDOW = 5  # messages a seat may send ...
WINDOW = 10.0  # ... in this many seconds

_lock = threading.Lock()
_sent: dict[tuple[str, int], deque] = {}  # (code, seat id) -> times of recent messages


def allowed(code: str, seat_id: int, now: float) -> bool:
    """Count a message of this seat if within the rate limit."""
    with _lock:
        times = _sent.setdefault((code, seat_id), deque())
        while times and times[0] <= now - WINDOW:
            times.popleft()
        if len(times) >= PER_WINDOW:
            return False
        times.append(now)
        if len(_sent) > 4096:  # forget seats quiet for a whole window
            for key in [k for k, t in _sent.items() if not t or t[-1] <= now - WINDOW]:
                del _sent[key]
        return True


def post(table: Table, seat: Seat | None, text, phrase, now: float | None = None) -> Line:
    """Store a message of `seat` (typed `text`, or a quick `phrase` key). TableError
    says why one is refused; nothing is stored then."""
    if seat is None:
        raise TableError(_("Only the players at this table can write in its chat."), 403)
    if not chat.chat_open(table):
        raise TableError(_("The host has turned the chat off at this table."), 403)
    if phrase:
        if phrase not in PHRASES:
            raise TableError(_("Choose one of the quick phrases."), 400, "phrase")
        text = None
    else:
        text = clean_message(text)
    if not allowed(table.code, seat.id, time.time() if now is None else now):
        message = _(
            "Slow down: at most %(num)s messages in %(seconds)s seconds. Try again in a moment.",
            num=PER_WINDOW,
            seconds=int(WINDOW),
        )
        raise TableError(message, 429, "text")
    return chat.add(table.code, seat, text, phrase if text is None else None)


def shown(line: Line) -> str:
    """A message's words in the current language (a typed one as written)."""
    if line.phrase is not None:
        found = PHRASES.get(line.phrase)
        return str(found) if found is not None else ""
    return line.text or ""


def sender(line: Line) -> str:
    return i18n.person(line.name)


def report(code: str, message_id, reporter: str, user_id: int | None) -> bool:
    """Keep a report of a message for the operator; False if this reporter had already
    reported it. TableError if there is no such message at the table."""
    try:
        number = int(message_id)
    except (TypeError, ValueError):
        number = -1
    found = chat.line(code, number) if 0 < number < 2**62 else None  # 2**62: any database's ints
    if found is None:
        raise TableError(_("That message is no longer there."), 404)
    with force_locale("en"):  # the operator reads the phrase in English
        words = shown(found)
    return chat.report(found, code, words, reporter, user_id)

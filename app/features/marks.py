"""The marks beside an account holder's name at a table and in its lobby: their rating
(app.features.rating) and the share of their recent games they finished
(app.features.reliability). A table's page and every push show them, so they are kept
for a short while instead of asked for each time: both change only when a game ends."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from app.features import rating, reliability
from app.storage.models import db

KEEP_SECONDS = 30
MOST_KEPT = 4096


@dataclass(frozen=True)
class Mark:
    rating: int
    provisional: bool
    finished: int | None  # percent, None: no game over yet


_kept: dict[int, tuple[float, Mark]] = {}
_kept_for: list = [None]  # the database the kept marks come from


def marks(user_ids: Iterable[int]) -> dict[int, Mark]:
    ids = set(user_ids)
    if _kept_for[0] is not db.obj:  # another database (tests): nothing kept is valid
        _kept.clear()
        _kept_for[0] = db.obj
    now = time.monotonic()
    missing = [u for u in ids if u not in _kept or _kept[u][0] < now]
    if missing:
        skills = rating.current(missing)
        if len(_kept) >= MOST_KEPT:
            _kept.clear()
        for u in missing:
            skill = skills.get(u, rating.DEFAULT)
            mark = Mark(skill.shown, skill.provisional, reliability.finished_share(u))
            _kept[u] = (now + KEEP_SECONDS, mark)
    return {u: _kept[u][1] for u in ids}


def forget(user_ids: Iterable[int] | None = None) -> None:
    """Ask again next time: for these accounts (a game of theirs just ended in this
    process, so its end shows their new marks), or for all."""
    if user_ids is None:
        _kept.clear()
        return
    for u in user_ids:
        _kept.pop(u, None)

"""Reliability: the share of an account's last games that it finished.

A game counts once it has started (an Entry, written in the transaction that starts
it) and is over: finished (played to the end without forfeiting), forfeited (left, or
away past the rejoin window), or abandoned (its table moved on or closed without an
outcome for the seat). A game still in play does not count yet."""

from __future__ import annotations

from collections.abc import Iterable

from app.storage.models import Entry, Seat, Table, User

RECENT = 20  # the games the share is taken over


def started(table: Table, seats: Iterable[Seat]) -> None:
    """The accounts seated in the game that starts now (the caller's transaction)."""
    rows = [
        {"user": s.user_id, "table": table.code, "number": table.game_number}
        for s in seats
        if s.user_id is not None and s.bot is None
    ]
    if rows:
        Entry.insert_many(rows).on_conflict_ignore().execute()


def settled(code: str, number: int, outcomes: dict[int, bool]) -> None:
    """The game is over: `outcomes` maps each account to whether it forfeited."""
    for forfeited in (False, True):
        users = [u for u, f in outcomes.items() if f == forfeited]
        if users:
            outcome = Entry.FORFEITED if forfeited else Entry.FINISHED
            Entry.update(outcome=outcome).where(
                (Entry.table == code) & (Entry.number == number) & Entry.user.in_(users)
            ).execute()


def in_play(entry: Entry) -> bool:
    table = entry.table
    return (
        entry.outcome is None
        and table.status == Table.PLAYING
        and table.game_number == entry.number
    )


def finished_share(user: User | int) -> int | None:
    """Percent of the account's last RECENT games over that it finished; None: none yet."""
    query = (
        Entry.select(Entry, Table)
        .join(Table)
        .where(Entry.user == user)
        .order_by(Entry.started_at.desc(), Entry.id.desc())
        .limit(RECENT + 8)  # a player is in a few games at once at most
    )
    over = [e for e in query if not in_play(e)][:RECENT]
    if not over:
        return None
    return round(100 * sum(e.outcome == Entry.FINISHED for e in over) / len(over))

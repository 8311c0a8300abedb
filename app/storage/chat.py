"""The chat's rows: a table's messages (with their senders' names and seat order) and the
reports people make of them (app.storage.models.ChatMessage, ChatReport)."""

from __future__ import annotations

from dataclasses import dataclass

from app.storage.models import ChatMessage, ChatReport, Seat, Table, User, db

SHOWN = 100  # the newest messages a page shows


@dataclass(frozen=True)
class Line:
    """A message as the chat shows it."""

    id: int
    seat_id: int
    name: str  # the sender's name now (a deleted account's reads "deleted player")
    position: int  # the sender's seat order: their colour
    text: str | None  # typed text, or None for a quick phrase
    phrase: str | None

    def to_dict(self) -> dict:
        return self.__dict__.copy()


def add(code: str, seat: Seat, text: str | None, phrase: str | None) -> Line:
    row = ChatMessage.create(table=code, seat=seat.id, text=text, phrase=phrase)
    return Line(row.id, seat.id, seat.name, seat.position, text, phrase)


def lines(code: str, limit: int = SHOWN) -> list[Line]:
    """The table's newest messages, oldest first."""
    query = (
        ChatMessage.select(ChatMessage, Seat.id, Seat.name, Seat.position)
        .join(Seat)
        .where(ChatMessage.table == code)
        .order_by(ChatMessage.id.desc())
        .limit(limit)
    )
    found = [Line(m.id, m.seat_id, m.seat.name, m.seat.position, m.text, m.phrase) for m in query]
    return found[::-1]


def line(code: str, message_id: int) -> Line | None:
    try:
        m = (
            ChatMessage.select(ChatMessage, Seat.id, Seat.name, Seat.position)
            .join(Seat)
            .where((ChatMessage.table == code) & (ChatMessage.id == message_id))
            .get()
        )
    except ChatMessage.DoesNotExist:
        return None
    return Line(m.id, m.seat_id, m.seat.name, m.seat.position, m.text, m.phrase)


def forget_table(code: str) -> int:
    """A closed table's messages go (its reports stay, for the operator)."""
    return ChatMessage.delete().where(ChatMessage.table == code).execute()


def forget_seats(seat_ids) -> int:
    """A deleted account's messages go (their seats stay, renamed)."""
    ids = list(seat_ids)
    if not ids:
        return 0
    return ChatMessage.delete().where(ChatMessage.seat.in_(ids)).execute()


def report(line: Line, code: str, text: str, reporter: str, user_id: int | None) -> bool:
    """Store a report of `line` (`text`: as shown); False if this reporter had already
    reported it (nothing changes)."""
    with db.atomic():
        inserted = (
            ChatReport.insert(
                message_id=line.id,
                table_code=code,
                sender=line.name,
                text=text,
                reporter=reporter,
                reporter_user=user_id,
            )
            .on_conflict_ignore()
            .as_rowcount()
            .execute()
        )
    return bool(inserted)


def reported_by(code: str, reporter: str) -> set[int]:
    """The messages of this table that `reporter` has reported."""
    query = ChatReport.select(ChatReport.message_id).where(
        (ChatReport.table_code == code) & (ChatReport.reporter == reporter)
    )
    return {r.message_id for r in query}


def reports(code: str | None = None, limit: int = 200) -> list[ChatReport]:
    """Reports for the operator, newest first (of one table when `code` is given)."""
    query = ChatReport.select().order_by(ChatReport.reported_at.desc(), ChatReport.id.desc())
    if code:
        query = query.where(ChatReport.table_code == code.upper())
    return list(query.limit(limit))


def forget_reporter(user: User) -> None:
    """A deleted account's reports stay, no longer naming it (each its own reporter
    name still: one report per message and reporter)."""
    for found in ChatReport.select(ChatReport.id).where(ChatReport.reporter_user == user):
        ChatReport.update(reporter_user=None, reporter=f"deleted-{found.id}").where(
            ChatReport.id == found.id
        ).execute()


def chat_open(table: Table) -> bool:
    return table.chat is not False  # None: a row from before the setting (on)

"""`python -m app.cli.moderation [--table CODE] [--limit N]`: the chat messages people
reported, newest first, for the operator. Each report keeps the words as they were
shown, the sender's name and the table, even after the table closed."""

from __future__ import annotations

import argparse

from app.cli.migrate import open_schema
from app.storage import chat, models


def arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m app.cli.moderation", description="List reported chat messages."
    )
    parser.add_argument("--table", help="only this table's reports (its code)")
    parser.add_argument("--limit", type=int, default=200, help="at most this many (200)")
    return parser.parse_args(argv)


def printable(text: str) -> str:
    """Stored text is already free of control characters; a terminal is not a page, so
    anything unprintable that slipped through shows as an escape."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode() for ch in text)


def lines(reports) -> list[str]:
    if not reports:
        return ["No reported messages."]
    out = [f"{len(reports)} reported message(s), newest first:"]
    for r in reports:
        when = r.reported_at.strftime("%Y-%m-%d %H:%M:%S UTC")
        out.append(
            f"{when}  table {r.table_code}  message #{r.message_id}  "
            f"from {printable(r.sender)!r}  reported by {r.reporter}"
        )
        out.append(f"    {printable(r.text)}")
    return out


def main(argv=None) -> None:
    args = arguments(argv)
    open_schema()
    with models.db.connection_context():
        found = chat.reports(args.table, max(1, args.limit))
    print("\n".join(lines(found)), flush=True)


if __name__ == "__main__":
    main()

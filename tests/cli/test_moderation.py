"""`python -m app.cli.moderation`: the reported chat messages, newest first, all or one
table's, printed plainly for the operator."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from app.storage.models import ChatMessage, db
from tests.web.web_helpers import seat_table

ROOT = Path(__file__).resolve().parents[2]


def moderation(database_url: str, tmp_path, *argv: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "SKYMO_DATABASE_URL": database_url,
        "SKYMO_INSTANCE_PATH": str(tmp_path),
        "SKYMO_SECRET_KEY": "cli-test",
    }
    env.pop("SKYMO_REDIS_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "app.cli.moderation", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def report(who, text: str) -> None:
    assert who.post(f"/t/{who.code}/chat", {"text": text}, htmx=True).status_code == 200
    message = ChatMessage.select().order_by(ChatMessage.id.desc()).get()
    return message


def test_reports_are_listed_newest_first_and_by_table(browser, database_url, tmp_path):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    cat, dan = seat_table(browser, ("Cat", "Dan"))
    first = report(bob, "you play like a <b>bot</b>")
    ann.post(f"/t/{ann.code}/chat/{first.id}/report", htmx=True)
    second = report(dan, "second \N{PARTY POPPER}")
    cat.post(f"/t/{cat.code}/chat/{second.id}/report", htmx=True)
    cat.post(f"/t/{cat.code}/chat/{second.id}/report", htmx=True)  # once only
    db.close_all()

    done = moderation(database_url, tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out[0] == "2 reported message(s), newest first:"
    assert f"table {cat.code}  message #{second.id}  from 'Dan'" in out[1]
    assert out[2] == "    second \N{PARTY POPPER}"
    assert f"table {ann.code}  message #{first.id}  from 'Bob'  reported by s" in out[3]
    assert out[4] == "    you play like a <b>bot</b>"

    one = moderation(database_url, tmp_path, "--table", ann.code.lower())
    assert one.returncode == 0, one.stderr
    assert one.stdout.splitlines()[0] == "1 reported message(s), newest first:"
    assert cat.code not in one.stdout

    none = moderation(database_url, tmp_path, "--table", "NOPE42")
    assert none.stdout.strip() == "No reported messages."

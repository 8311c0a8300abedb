"""People playing against several server processes: a cookie-keeping browser whose
session can go through any process, its push socket, and reading what was stored."""

from __future__ import annotations

import json
import re

import psycopg

from tests.web.live_helpers import HttpBrowser, move_form

__all__ = ["Person", "move_form", "game_record", "TURN_ACTIONS", "VERSION_OF_TABLE"]

VERSION_OF_TABLE = re.compile(r'id="table"[^>]*data-version="(\d+)"')
TURN_ACTIONS = ("take_discard", "draw", "keep_drawn", "discard_drawn")  # one per bot step


class Person(HttpBrowser):
    """One person's browser; `base` is the process it talks to (a load balancer's pick)."""

    def get(self, path: str, headers=None) -> str:
        status, text = super().get(path, headers)
        assert status == 200, (status, text[:300])
        return text

    def post(self, path: str, data=None, htmx=False) -> tuple[int, str]:
        status, head, _ = self.send_form(path, data, htmx)
        return status, head.get("Location", "")

    def twin(self, base: str) -> Person:
        """The same browser (cookies, CSRF token) talking to another process."""
        other = Person(base)
        other.jar, other.opener, other.csrf, other.code = (
            self.jar,
            self.opener,
            self.csrf,
            self.code,
        )
        return other

    def socket(self, timeout: float = 3.0, **options):
        return super().socket(timeout=timeout, **options)


def game_record(pg_url: str, code: str, number: int = 1) -> dict:
    with psycopg.connect(pg_url) as con:
        (record,) = con.execute(
            "SELECT record FROM gamerecord WHERE table_id = %s AND number = %s", (code, number)
        ).fetchone()
    return json.loads(record)

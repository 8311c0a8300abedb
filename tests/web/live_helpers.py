"""Helpers for tests against a real server process: a cookie-keeping HTTP browser
(urllib + http.cookiejar), reading tables straight from the SQLite file, turning
engine actions into the move form, and the engine invariants every table must keep."""

from __future__ import annotations

import http.client
import http.cookiejar
import json
import re
import sqlite3
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path

from app.engine import (
    DECK,
    GONE,
    DiscardDrawn,
    Draw,
    Game,
    KeepDrawn,
    Reveal,
    TakeDiscard,
    replay,
    to_record,
)

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
VERSION = re.compile(r'data-version="(\d+)"')
STALE = "The table changed before your action arrived"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a 303 is an answer to look at, not to follow


class HttpBrowser:
    """One person's browser: its own cookie jar, and the CSRF token its pages gave it."""

    def __init__(self, base: str):
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect
        )
        self.csrf: str | None = None
        self.code: str | None = None

    def request(self, method, path, data=None, headers=None, body=None, timeout=15):
        """(status, headers, text). Network errors (a killed server) propagate."""
        if data is not None:
            body = urllib.parse.urlencode(data).encode()
        req = urllib.request.Request(self.base + path, data=body, method=method)
        for key, value in (headers or {}).items():
            req.add_header(key, value)
        if body is not None and not req.has_header("Content-type"):
            req.add_header("Content-Type", "application/x-www-form-urlencoded")
        try:
            with self.opener.open(req, timeout=timeout) as response:
                return response.status, response.headers, response.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as exc:
            with exc:
                text = exc.read().decode("utf-8", "replace")
            return exc.code, exc.headers, text

    def get(self, path, headers=None):
        status, head, text = self.request("GET", path, headers=headers)
        found = CSRF.search(text)
        if found:
            self.csrf = found.group(1)
        return status, text

    def send_form(self, path, data=None, htmx=False):
        """POST a form with this browser's CSRF token: (status, headers, text). The
        subclasses' `post` shape that answer for their tests; these helpers use this."""
        if self.csrf is None:
            HttpBrowser.get(self, "/")
        data = {"csrf_token": self.csrf, **(data or {})}
        headers = {"HX-Request": "true"} if htmx else {}
        return self.request("POST", path, data=data, headers=headers)

    post = send_form

    def create(self, name, **data):
        status, head, text = self.send_form("/tables", {"name": name, **data})
        assert status == 303, (status, text[:300])
        self.code = head["Location"].rsplit("/", 1)[1]
        return self.code

    def join(self, code, name):
        self.code = code
        HttpBrowser.get(self, f"/t/{code}")
        status, head, text = self.send_form(f"/t/{code}/join", {"name": name})
        assert status == 303, (status, text[:300])

    def cookie_header(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.jar)

    def socket(self, origin: str | None = None, timeout: float = 2.0, query: str = ""):
        """The table's push socket, with this browser's cookies (`query`: `?v=7`...)."""
        import websocket  # only the tests that open sockets need it

        url = self.base.replace("http://", "ws://") + f"/t/{self.code}/ws{query}"
        return websocket.create_connection(
            url, cookie=self.cookie_header(), origin=origin or self.base, timeout=timeout
        )


# ----- the database, read directly -------------------------------------------------------
def _rows(db, sql: str, params: tuple = ()) -> list[tuple]:
    """Rows of a query on the server's database: a SQLite file (Path) or a PostgreSQL URL."""
    return _reads(db, [(sql, params)])[0]


def _reads(db, queries: list[tuple[str, tuple]]) -> list[list[tuple]]:
    """Several queries in one read transaction (they see the same committed state)."""
    if isinstance(db, str) and db.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(db) as con, con.transaction():
            con.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            return [con.execute(q.replace("?", "%s"), p).fetchall() for q, p in queries]
    con = sqlite3.connect(str(db), timeout=10)
    try:
        with con:
            con.execute("BEGIN")
            return [con.execute(q, p).fetchall() for q, p in queries]
    finally:
        con.close()


def read_tables(db: Path | str) -> dict[str, dict]:
    """Every table as stored: code -> status, version, rules, state (the whole game: its
    finished rounds are stored apart, see app.storage.table_store), votes, host."""
    rows, past = _reads(
        db,
        [
            (
                "SELECT code, status, version, rules, state, votes, host_seat, game_number"
                ' FROM "table"',
                (),
            ),
            ("SELECT table_id, game_number, data FROM pastround ORDER BY number", ()),
        ],
    )
    return {
        code: {
            "status": status,
            "version": version,
            "rules": json.loads(rules),
            "state": whole_state(
                state, [json.loads(d) for c, n, d in past if (c, n) == (code, number)]
            ),
            "votes": json.loads(votes) if votes else None,
            "host": host,
        }
        for code, status, version, rules, state, votes, host, number in rows
    }


def whole_state(state: str | None, past_rounds: list[dict]) -> dict | None:
    """A table's stored state with its finished rounds put back in front."""
    if not state:
        return None
    data = json.loads(state)
    if data.get("past_rounds"):
        data["rounds"] = past_rounds[: data["past_rounds"]] + data["rounds"]
    return data


def read_table(db: Path | str, code: str) -> dict:
    return read_tables(db)[code]


def seat_ids(db: Path | str, code: str) -> dict[str, str]:
    """Name -> engine player id ('s<seat id>') of the seats still at the table."""
    rows = _rows(db, 'SELECT id, name FROM seat WHERE table_id = ? AND NOT "left"', (code,))
    return {name: f"s{ident}" for ident, name in rows}


def game_records(db: Path | str) -> dict[tuple[str, int], dict]:
    rows = _rows(db, "SELECT table_id, number, record FROM gamerecord")
    return {(code, number): json.loads(record) for code, number, record in rows}


# ----- moves as the forms send them -----------------------------------------------------
def move_form(action, rng=None) -> dict:
    """The move form's fields for an engine action (`pos` or `row`/`col`, either way)."""
    if isinstance(action, Draw):
        return {"type": "draw"}
    kinds = {Reveal: "reveal", TakeDiscard: "take_discard", KeepDrawn: "keep_drawn"}
    if isinstance(action, DiscardDrawn):
        if action.flip is None:
            return {"type": "discard_drawn"}
        kind, (row, col) = "discard_drawn", action.flip
    else:
        kind, row, col = kinds[type(action)], action.row, action.col
    if rng is not None and rng.random() < 0.5:
        return {"type": kind, "row": str(row), "col": str(col)}
    return {"type": kind, "pos": f"{row}-{col}"}


def event_of(action) -> tuple:
    """An action as the game's public log shows it (see human_events)."""
    if isinstance(action, Draw):
        return ("draw",)
    if isinstance(action, DiscardDrawn):
        return ("discard_drawn", tuple(action.flip) if action.flip else None)
    kinds = {Reveal: "reveal", TakeDiscard: "take_discard", KeepDrawn: "keep_drawn"}
    return (kinds[type(action)], action.row, action.col)


LOGGED = ("reveal", "take_discard", "draw", "keep_drawn", "discard_drawn", "forfeit")


def human_events(state: dict, players: set[str]) -> list[tuple]:
    """(player, event) for every move of these players in the stored game, in order."""
    events = []
    for rnd in state["rounds"]:
        for e in rnd["log"]:
            if e["type"] not in LOGGED or e.get("player") not in players:
                continue
            if e["type"] == "discard_drawn":
                flip = e["flip"]
                event = ("discard_drawn", (flip["row"], flip["col"]) if flip else None)
            elif e["type"] in ("draw", "forfeit"):
                event = (e["type"],)
            else:
                event = (e["type"], e["row"], e["col"])
            events.append((e["player"], event))
    return events


# ----- invariants ------------------------------------------------------------------------
def check_invariants(state: dict | None) -> None:
    """The 150 cards are all accounted for, and the game replays from its record to the
    same grids, piles and totals."""
    if state is None:
        return
    game = Game.from_dict(state)
    if not game.rounds:
        return
    rnd = game.round
    cards = [
        v for g in rnd.grids.values() for v, s in zip(g.values, g.state, strict=True) if s != GONE
    ]
    cards += rnd.discard + rnd.draw_pile + ([rnd.drawn] if rnd.drawn is not None else [])
    assert Counter(cards) == Counter(DECK), "the 150 cards are not all accounted for"
    again = replay(to_record(game))
    assert again.phase == game.phase
    assert again.totals == game.totals
    assert again.forfeited == game.forfeited
    last = again.round
    assert {p: g.to_dict() for p, g in last.grids.items()} == {
        p: g.to_dict() for p, g in rnd.grids.items()
    }
    assert last.discard == rnd.discard
    # A drawn card is not in the record until it is kept or discarded.
    pile = rnd.draw_pile + ([rnd.drawn] if rnd.drawn is not None else [])
    assert last.draw_pile == pile
    if rnd.drawn is None:
        assert last.turn == rnd.turn, (
            f"stored turn {rnd.turn}, replayed {last.turn}; phase {game.phase}, round "
            f"{rnd.number}, ender {rnd.ender}, last turns {rnd.last_turns}/{last.last_turns}, "
            f"forfeited {sorted(game.forfeited)}, moves {rnd.moves[-6:]}, log {rnd.log[-6:]}"
        )


def is_network_error(exc: BaseException) -> bool:
    return isinstance(
        exc, urllib.error.URLError | ConnectionError | http.client.HTTPException | TimeoutError
    )

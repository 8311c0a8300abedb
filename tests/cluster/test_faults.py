"""Two server processes on PostgreSQL + Redis while tables of people and bots play, and in
turn: a process killed (SIGKILL) and started again, Redis cut off and back, PostgreSQL
cut off and back. After each fault every table keeps moving (its bots too), and in the
end no move a person was answered for is lost or made twice."""

from __future__ import annotations

import json
import random
import threading
import time
import urllib.error

import psycopg

from app.cluster.due import LEASE_SECONDS
from app.engine import Game
from tests.cluster import people
from tests.cluster.conftest import REDIS_URL, Relay
from tests.web.live_helpers import check_invariants, event_of, human_events, read_tables

TABLES = 6
# Long games (no table finishes during the test), and no timer for people: a person's
# moves are all their own (an away player's turn played for them would be logged as theirs).
RULES = {
    "rows": "2",
    "cols": "3",
    "initial_flips": "1",
    "end_score": "1000",
    "grace_seconds": "120",
    "rejoin_seconds": "1800",
}
ENV = {"SKYMO_BOT_DELAY": "0.1", "SKYMO_NEXT_ROUND_SECONDS": "0.5", "SKYMO_DB_WAIT": "5"}
MOVING = 4  # versions a table must advance: more than a person's turn (draw, keep) alone
# A killed process's claimed steps wait for their lease to run out (app.cluster.due).
WITHIN = LEASE_SECONDS + 10


class Player(threading.Thread):
    """A person at one table, moving through either process (as a load balancer might
    send them), and what became of each move: answered (303, with the version it was
    made at), refused (409, 400, or never sent), or unknown (an error, a 5xx: the
    change may have been made while the answer was lost)."""

    def __init__(self, browsers: list[people.Person], pg_url: str, code: str, seed: int):
        super().__init__(daemon=True)
        self.browsers, self.pg_url, self.code = browsers, pg_url, code
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        self.answered: list[tuple[int, tuple]] = []  # (version made at, event)
        self.unknown = 0
        self.me: str | None = None

    def run(self) -> None:
        with psycopg.connect(self.pg_url, autocommit=True) as con:
            while not self.stop.wait(0.2):  # people think longer than bots
                state, version = con.execute(
                    'SELECT state, version FROM "table" WHERE code = %s', (self.code,)
                ).fetchone()
                game = Game.from_dict(json.loads(state))
                self.me = next(p.id for p in game.players if not p.bot)
                actions = game.legal_actions(self.me)
                if actions:
                    self.move(self.rng.choice(actions), version)

    def move(self, action, version: int) -> None:
        browser = self.rng.choice(self.browsers)
        form = {**people.move_form(action), "version": str(version)}
        try:
            status = browser.post(f"/t/{self.code}/move", form)[0]
        except urllib.error.URLError as exc:
            if not isinstance(exc.reason, ConnectionRefusedError):  # refused: never sent
                self.unknown += 1
            return
        except OSError:
            self.unknown += 1
            return
        if status == 303:
            self.answered.append((version, event_of(action)))
        elif status >= 500:
            self.unknown += 1


def test_tables_keep_playing_through_a_killed_process_redis_and_postgres_going_away(
    cluster, pg_url
):
    pg = Relay(("127.0.0.1", 5432))
    rd = Relay(("127.0.0.1", 6379))
    env = {
        **ENV,
        "SKYMO_DATABASE_URL": pg_url.replace("127.0.0.1:5432", f"127.0.0.1:{pg.port}"),
        "SKYMO_REDIS_URL": REDIS_URL.replace("127.0.0.1:6379", f"127.0.0.1:{rd.port}"),
    }
    players: list[Player] = []
    try:
        a, b = cluster("A", **env), cluster("B", **env)
        for i in range(TABLES):
            host = people.Person((a, b)[i % 2].url)
            code = host.create("Ann")
            assert host.post(f"/t/{code}/rules", RULES)[0] == 303
            for kind in ("greedy", "random")[: 1 + i % 2]:
                assert host.post(f"/t/{code}/bots", {"bot": kind})[0] == 303
            version = read_tables(pg_url)[code]["version"]
            assert host.post(f"/t/{code}/start", {"version": str(version)})[0] == 303
            browsers = [host, host.twin((a, b)[(i + 1) % 2].url)]
            players.append(Player(browsers, pg_url, code, seed=i))
        for p in players:
            p.start()
        codes = [p.code for p in players]

        keeps_moving(pg_url, codes, "while playing")
        b.kill()
        b.log.close()
        time.sleep(1)
        b.start()
        keeps_moving(pg_url, codes, "after a process was killed and started again")
        rd.cut()
        keeps_moving(pg_url, codes, "without Redis")
        rd.restore()
        keeps_moving(pg_url, codes, "after Redis came back")
        pg.cut()
        time.sleep(3)
        pg.restore()
        keeps_moving(pg_url, codes, "after PostgreSQL came back")
    finally:
        for p in players:
            p.stop.set()
        for p in players:
            p.join(20)
        pg.close()
        rd.close()

    stored = read_tables(pg_url)
    for p in players:
        state = stored[p.code]["state"]
        check_invariants(state)
        made = [event for _, event in human_events(state, {p.me})]
        versions = [v for v, _ in p.answered]
        assert versions == sorted(set(versions)), f"{p.code}: one version answered twice"
        # Every answered move is in the game, in order; the rest are moves whose answer
        # was lost (made or not), never more.
        left = iter(made)
        missing = [e for _, e in p.answered if not any(m == e for m in left)]
        assert not missing, f"{p.code}: answered moves missing from the game: {missing}"
        assert len(p.answered) <= len(made) <= len(p.answered) + p.unknown, (
            p.code,
            len(p.answered),
            len(made),
            p.unknown,
        )
        assert len(p.answered) >= 5, f"{p.code}: too few moves to tell ({len(p.answered)})"


def keeps_moving(pg_url: str, codes: list[str], when: str) -> None:
    """Every table advances by MOVING versions within WITHIN seconds: its person and its
    bots take turns (a table stuck on a bot's turn moves no more)."""
    start = versions(pg_url, codes)
    deadline = time.monotonic() + WITHIN
    while True:
        now = versions(pg_url, codes)
        stuck = [c for c in codes if now[c] < start[c] + MOVING]
        if not stuck:
            return
        if time.monotonic() > deadline:
            with psycopg.connect(pg_url) as con:
                due = dict(con.execute("SELECT table_id, version FROM due").fetchall())
            detail = {c: (start[c], now[c], due.get(c)) for c in stuck}
            raise AssertionError(f"{when}: tables stopped (from, at, due row): {detail}")
        time.sleep(0.2)


def versions(pg_url: str, codes: list[str]) -> dict[str, int]:
    with psycopg.connect(pg_url) as con:
        rows = con.execute(
            'SELECT code, version FROM "table" WHERE code = ANY(%s)', (codes,)
        ).fetchall()
    return dict(rows)

"""How much each open table weighs on the garbage collector: the objects it keeps that
the collector tracks (and so walks), and how long collections take with the tables open.

One process, no network, as benchmarks/move_cost.py: --tables 4-player tables, each
person with their own cookie session and an open socket registered in the hub (queued,
written at once as a socket that keeps up is), each table played --moves moves through
the real move form (so every table has a current version rendered and pushed). Then:

  per table   tracked objects alive per table (len(gc.get_objects()) after a full
              collection, against before the tables), by type
  young       the tracked objects --window more moves on every table leave alive in
              the young generations (the collector off meanwhile, then the youngest
              generation collected: its garbage goes): under load nearly every table
              has moved since the last collection of generation 1, which walks these
  gen 1       gc.collect(1) then (median of --repeat rounds)
  gen 2       gc.collect(2) with the tables open (median of --repeat)

Usage:  .venv/bin/python benchmarks/gc_weight.py [--tables 200] [--moves 20] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from markupsafe import Markup
from move_cost import form, pick  # benchmarks/ is the script's folder

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app import create_app, tables  # noqa: E402
from app.engine import ROUND_OVER  # noqa: E402
from app.live.hub import Connection  # noqa: E402
from app.storage.models import Seat  # noqa: E402
from app.web.serving import tune_gc  # noqa: E402

KINDS = (dict, list, tuple, Markup)
HTMX = {"HX-Request": "true", "Accept-Encoding": "gzip, deflate, br"}


class Person:
    """One browser: its session cookie and CSRF token (two strings: what the script
    keeps per person weighs next to nothing; the test client keeps no cookie jar)."""

    __slots__ = ("client", "cookie", "csrf")

    def __init__(self, client):
        self.client = client
        self.cookie = ""
        page = self.request("get", "/", headers={}).data.decode()
        self.csrf = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)

    def request(self, method: str, url: str, data: dict | None = None, headers=HTMX):
        headers = {**headers, "Cookie": self.cookie} if self.cookie else headers
        response = self.client.open(url, method=method, data=data, headers=headers)
        for header in response.headers.getlist("Set-Cookie"):
            if header.startswith("session="):
                self.cookie = header.split(";", 1)[0]
        return response

    def post(self, url: str, data: dict):
        return self.request("post", url, {"csrf_token": self.csrf, **data})


def open_table(client) -> tuple[str, dict]:
    """A started 4-player table with an open socket per player: (code, player id -> person)."""
    people = [Person(client) for _ in range(4)]
    code = people[0].post("/tables", {"name": "P0"}).headers["Location"].rsplit("/", 1)[1]
    for i in (1, 2, 3):
        people[i].post(f"/t/{code}/join", {"name": f"P{i}"})
    seats = {s.name: s for s in Seat.select().where(Seat.table == code)}
    for i, person in enumerate(people):
        seat = seats[f"P{i}"]
        conn = Connection(code, seat.id, person.csrf, len, queued=True, write_now=written)
        client.application.extensions["skymo"].hub.add(conn)
    version = tables.store.current(code).version
    people[0].post(f"/t/{code}/start", {"version": str(version)})
    return code, {seats[f"P{i}"].player_id: people[i] for i in range(4)}


def written(html: str) -> None:
    """A socket that takes the whole push at once (nothing left to queue)."""
    return None


def move(code: str, who: dict, rng: random.Random) -> None:
    """One move on the table (or everyone's vote for the next round)."""
    snap = tables.store.current(code)
    game = snap.game
    version = {"version": str(snap.version)}
    if game.phase == ROUND_OVER:
        for person in who.values():
            person.post(f"/t/{code}/next-round", version)
        return
    pid = rng.choice([p for p in who if game.legal_actions(p)])
    response = who[pid].post(f"/t/{code}/move", {**form(pick(game, pid, rng)), **version})
    if response.status_code != 200:
        raise SystemExit(f"move refused: {response.status_code}")


def census() -> Counter:
    gc.collect()
    return Counter(type(o) for o in gc.get_objects())


def by_kind(counts: Counter) -> dict[str, int]:
    out = {k.__name__: counts[k] for k in KINDS}
    out["other"] = sum(counts.values()) - sum(out.values())
    out["all"] = sum(counts.values())
    return out


def timed(fn) -> float:
    start = time.process_time()
    fn()
    return (time.process_time() - start) * 1000


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--moves", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--window", type=int, default=3, help="moves per table before gen 1")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    database = f"sqlite:///{tempfile.mkdtemp(prefix='skymo-gcweight-')}/skymo.db"
    app = create_app({"SECRET_KEY": "bench", "NEXT_ROUND_SECONDS": 3600, "DATABASE_URL": database})
    tune_gc(None)  # as a gunicorn worker: what the app loaded is frozen
    client = app.test_client(use_cookies=False)
    code, who = open_table(client)  # a first table: templates compiled, caches warm
    for _ in range(args.moves):
        move(code, who, rng)
    before = census()
    played = [open_table(client) for _ in range(args.tables)]
    for _ in range(args.moves):
        for code, who in played:
            move(code, who, rng)
    after = census()
    young, gen1, gen2 = [], [], []
    for _ in range(args.repeat):
        gc.collect()
        gc.disable()
        for _ in range(args.window):
            for code, who in played:
                move(code, who, rng)
        gc.collect(0)  # the garbage goes; what is still alive waits in the middle generation
        young.append(by_kind(Counter(map(type, gc.get_objects(1)))))
        gen1.append(timed(lambda: gc.collect(1)))
        gc.enable()
        gen2.append(timed(lambda: gc.collect(2)))
    n = args.tables
    kept = by_kind(after - before)
    result = {
        "tables": n,
        "moves_per_table": args.moves,
        "tracked_objects_per_table": {k: round(v / n, 1) for k, v in kept.items()},
        "young_alive_after_window_per_table": {
            k: round(statistics.median(y[k] for y in young) / n, 1) for k in young[0]
        },
        "gen1_collect_ms_median": statistics.median(gen1),
        "gen2_collect_ms_median": statistics.median(gen2),
        "tracked_objects_total": kept["all"] + sum(before.values()),
    }
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(f"tables                      {n} of 4 players, {args.moves} moves each")
    per = result["tracked_objects_per_table"]
    print("tracked objects per table   " + ", ".join(f"{k} {v:g}" for k, v in per.items()))
    per = result["young_alive_after_window_per_table"]
    print("young alive per table       " + ", ".join(f"{k} {v:g}" for k, v in per.items()))
    print(f"gc.collect(1) then          {result['gen1_collect_ms_median']:.1f} ms (median)")
    print(f"gc.collect(2)               {result['gen2_collect_ms_median']:.1f} ms (median)")
    print(f"tracked objects in all      {result['tracked_objects_total']}")


if __name__ == "__main__":
    main()

"""What one move costs the server, in CPU, split by stage, and whether it stays flat.

One process, no network: a 4-player table (4 people, each with their own cookie session)
with 4 open sockets registered in the hub (queued, as the socket route registers them,
each sent from by its own thread as the socket's handler does; the send just counts
bytes; each with its page's id, which the person's htmx requests send too), playing
--moves moves through the real move form as htmx sends it from a browser
(the answer is the #table partial, compressed as the browser accepts). The game's end
score is high (1000) so one game lasts long enough to compare its early and late moves;
votes for the next round are sent too but not counted as moves. A few moves (--warmup)
are played on a first table before, not counted (the templates are compiled then, as any
server does once).

The process's garbage collector is set as a gunicorn worker sets it once the app is
loaded (app.web.serving.tune_gc: what was loaded frozen, young collections less often);
--default-gc keeps Python's defaults (how this script measured before 1 December 2026,
14:30 UTC: about 0.5 ms per move more, on the same code).

CPU per move is the server's: process CPU time (time.process_time) inside the WSGI app
for each POST, so the socket senders' work is included; the test client's own work
around it (building the request, reading the answer) is shown apart. The stages are
measured with thread CPU time by wrapping the functions that do them:

  load      the change step reads the table (row, seats, game from the cache or decoded)
  engine    Game.apply
  save      bookkeeping and the write of state and version (JSON encoding, UPDATE)
  commit    the transaction's commit
  push      rendering the push for the table's sockets and queueing it
  schedule  looking at what the table does by itself next
  answer    rendering the mover's answer
  rest      everything else in the request (routing, session, CSRF, seat lookup,
            compression)

With --postgres URL the process runs in the multi-process mode (a fresh database on that
server and a fresh Redis key prefix, both removed afterwards): the same figures, plus
what another process spends reading the change back to push it to its own sockets
("reload": the row, the seats and the game decoded; its rendering is the same as here),
and what it spends rebuilding the change from the snapshot published with it on Redis
(what it does unless messages were lost). This process alone holds the table's sockets,
as with each table on one process (app.cluster.broker: most changes are then not published);
--spread registers another holder, so that every change is published. The reload is
made with a store of its own: this process's cached games (and their views) stay.

Usage:  .venv/bin/python benchmarks/move_cost.py [--moves 2000] [--json]
        .venv/bin/python benchmarks/move_cost.py --spread \
            --postgres postgresql://postgres@127.0.0.1:5432/postgres
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import secrets
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app import create_app, tables  # noqa: E402
from app.engine import ROUND_OVER, DiscardDrawn, Draw, Game, KeepDrawn, Reveal, TakeDiscard  # noqa: E402
from app.live.hub import Connection  # noqa: E402
from app.storage.models import Seat, db  # noqa: E402
from app.storage.table_store import Store  # noqa: E402
from app.tables import step  # noqa: E402
from app.web import table as table_views  # noqa: E402
from app.web.serving import tune_gc  # noqa: E402

STAGES = ("load", "engine", "save", "commit", "push", "schedule", "answer")


class Meter:
    """Thread CPU seconds per stage; nested stages are subtracted from their parent."""

    def __init__(self):
        self.totals: dict[str, float] = defaultdict(float)
        self.local = threading.local()

    def wrap(self, owner, name: str, stage: str) -> None:
        inner = getattr(owner, name)
        meter = self

        def timed(*args, **kwargs):
            stack = getattr(meter.local, "stack", None)
            if stack is None:
                stack = meter.local.stack = []
            start = time.thread_time()
            stack.append(0.0)
            try:
                return inner(*args, **kwargs)
            finally:
                spent = time.thread_time() - start
                nested = stack.pop()
                meter.totals[stage] += spent - nested
                if stack:
                    stack[-1] += spent

        setattr(owner, name, timed)

    def take(self) -> dict[str, float]:
        out = dict(self.totals)
        self.totals.clear()
        return out


class ServerClock:
    """Process CPU seconds spent inside the WSGI app (the server's share of a request)."""

    def __init__(self, app):
        self.spent = 0.0
        inner = app.wsgi_app

        def timed(environ, start_response):
            start = time.process_time()
            try:
                # Flask answers with a list: the body is complete (and compressed) here.
                return inner(environ, start_response)
            finally:
                self.spent += time.process_time() - start

        app.wsgi_app = timed


def body(response) -> bytes:
    """The answer as the browser reads it (decompressed)."""
    data = response.get_data()
    encoding = response.headers.get("Content-Encoding")
    if encoding == "br":
        import brotli

        return brotli.decompress(data)
    if encoding == "gzip":
        return gzip.decompress(data)
    return data


def form(action) -> dict:
    if isinstance(action, Draw):
        return {"type": "draw"}
    if isinstance(action, DiscardDrawn):
        if action.flip is None:
            return {"type": "discard_drawn"}
        return {"type": "discard_drawn", "pos": "{}-{}".format(*action.flip)}
    kinds = {Reveal: "reveal", TakeDiscard: "take_discard", KeepDrawn: "keep_drawn"}
    return {"type": kinds[type(action)], "pos": f"{action.row}-{action.col}"}


def pick(game: Game, pid: str, rng: random.Random):
    options = game.legal_actions(pid)
    draws = [a for a in options if isinstance(a, Draw)]
    if draws and rng.random() < 0.8:
        return draws[0]
    return rng.choice(options)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--warmup", type=int, default=20, help="moves on a first table, not measured"
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--default-gc", action="store_true", help="Python's collector settings, not a worker's"
    )
    parser.add_argument("--postgres", metavar="URL", help="PostgreSQL + Redis mode")
    parser.add_argument("--redis", metavar="URL", default="redis://127.0.0.1:6379/0")
    parser.add_argument(
        "--spread",
        action="store_true",
        help="with --postgres: another process holds a socket at the table (every change "
        "is published); else this process alone does (as with each table on one process)",
    )
    args = parser.parse_args(argv)
    if args.postgres:
        with fresh_cluster(args.postgres, args.redis) as config:
            run(args, config)
    else:
        run(
            args,
            {"DATABASE_URL": f"sqlite:///{tempfile.mkdtemp(prefix='skymo-movecost-')}/skymo.db"},
        )


@contextmanager
def fresh_cluster(postgres: str, redis_url: str):
    """The configuration of a fresh database and Redis prefix, removed afterwards."""
    import psycopg
    import redis

    name = "skymo_movecost_" + secrets.token_hex(5)
    prefix = f"skymo-movecost-{secrets.token_hex(4)}:"
    with psycopg.connect(postgres, autocommit=True) as con:
        con.execute(f'CREATE DATABASE "{name}"')
    try:
        yield {
            "DATABASE_URL": postgres.rsplit("/", 1)[0] + "/" + name,
            "REDIS_URL": redis_url,
            "REDIS_PREFIX": prefix,
        }
    finally:
        from app.storage.models import db as database

        time.sleep(0.5)  # the scheduler stopped (run): its last step is done
        database.obj.close_all()
        with psycopg.connect(postgres, autocommit=True) as con:
            con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        client = redis.Redis.from_url(redis_url)
        keys = list(client.scan_iter(match=prefix + "*", count=1000))
        if keys:
            client.delete(*keys)


def run(args, config: dict) -> None:
    rng = random.Random(args.seed)
    app = create_app({"SECRET_KEY": "bench", "NEXT_ROUND_SECONDS": 3600, **config})
    if not args.default_gc:
        tune_gc()  # as gunicorn.conf.py's post_worker_init, once the app is loaded
    meter = Meter()
    meter.wrap(tables.store, "for_change", "load")
    meter.wrap(Game, "apply", "engine")
    meter.wrap(step, "save", "save")
    meter.wrap(db.obj, "commit", "commit")
    services = app.extensions["skymo"]  # the adapters app/wiring.py built
    hub = services.hub
    meter.wrap(services.publisher, "publish", "push")
    # The scheduler in use: after the commit, and in the change's transaction (the
    # multi-process mode's due row).
    meter.wrap(services.scheduler, "schedule", "schedule")
    meter.wrap(services.scheduler, "within", "schedule")
    meter.wrap(table_views, "render_table", "answer")

    server = ServerClock(app)
    clients = [app.test_client() for _ in range(4)]
    csrf = {}
    browser = {"HX-Request": "true", "Accept-Encoding": "gzip, deflate, br"}

    # Each person's table page has an id its socket and its htmx requests carry (as
    # htmx sends it): the push of their own move skips their own socket.
    pages = [f"page-{i}" for i in range(4)]

    def post(i, url, data):
        data = {"csrf_token": csrf[i], **data}
        return clients[i].post(url, data=data, headers={**browser, "X-Skymo-Page": pages[i]})

    for i, c in enumerate(clients):
        page = c.get("/").data.decode()
        csrf[i] = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    sent = [0]

    def send(html):
        sent[0] += len(html)

    def open_table():
        """A started 4-player table to 1000 points, with a queued socket per player."""
        code = post(0, "/tables", {"name": "P0"}).headers["Location"].rsplit("/", 1)[1]
        for i in (1, 2, 3):
            post(i, f"/t/{code}/join", {"name": f"P{i}"})
        post(0, f"/t/{code}/rules", {"end_score": "1000"})
        seats = {s.name: s for s in Seat.select().where(Seat.table == code)}
        who = {seats[f"P{i}"].player_id: i for i in range(4)}
        conns = [
            Connection(code, seats[f"P{i}"].id, csrf[i], send, queued=True, page=pages[i])
            for i in range(4)
        ]
        with app.app_context():
            for conn in conns:
                hub.add(conn)
                threading.Thread(target=conn.pump, daemon=True).start()  # the socket's sender
            version = tables.store.current(code).version
        post(0, f"/t/{code}/start", {"version": str(version)})
        return code, who, conns

    per_move: list[float] = []
    reloads: list[float] = []  # another process reading the change back (--postgres)
    other = Store()  # that process's store
    published: list[bytes] = []  # the messages published on Redis (--postgres)
    measuring = [False]
    if args.postgres:
        broker = services.broker
        redis_client = broker.redis
        send_one = broker._send_one

        def keep(code, message, client):
            if measuring[0]:
                published.append(message)
            return send_one(code, message, client)

        broker._send_one = keep
    client: list[float] = []
    stages: list[dict[str, float]] = []
    state_sizes: list[int] = []
    votes = 0

    def play(code, who, moves, measure):
        nonlocal votes
        played = 0
        while played < moves:
            snap = tables.store.current(code)
            game = snap.game
            if game.phase == ROUND_OVER:
                for i in range(4):
                    post(i, f"/t/{code}/next-round", {"version": str(snap.version)})
                votes += measure
                continue
            movers = [p for p in who if game.legal_actions(p)]
            if not movers:
                break
            pid = rng.choice(movers)
            data = {**form(pick(game, pid, rng)), "version": str(snap.version)}
            meter.take()
            server.spent = 0.0
            start = time.process_time()
            response = post(who[pid], f"/t/{code}/move", data)
            total = time.process_time() - start
            html = body(response)
            if response.status_code != 200 or b'role="alert"' in html or b"<section" not in html:
                raise SystemExit(f"move refused: {response.status_code} {html[:300]}")
            played += 1
            if not measure:
                continue
            spent = server.spent
            per_move.append(spent)
            client.append(total - spent)
            parts = meter.take()
            parts["rest"] = max(0.0, spent - sum(parts.values()))
            stages.append(parts)
            if args.postgres:
                # What another process does with the change (see `hear` for the rest):
                # resyncing after lost messages, it reads it back from PostgreSQL. A
                # store of its own: this process's cache (its games' views) stays.
                other.forget(code)
                start = time.process_time()
                other.current(code)
                reloads.append(time.process_time() - start)
            with db.connection_context():
                row = db.execute_sql(
                    'select length(state) from "table" where code = ' + db.obj.param, (code,)
                )
                state_sizes.append(row.fetchone()[0])

    with app.app_context():
        # A first table compiles the templates (as a server does once): the measured
        # game is a second table's, from its first move.
        for moves, measure in ((args.warmup, False), (args.moves, True)):
            if moves:
                code, who, conns = open_table()
                if args.postgres and args.spread:
                    # Another process holds a socket at the table (app.cluster.broker's
                    # holders): every change is published, as when a table's sockets
                    # are spread over processes.
                    redis_client.zadd(broker._holders(code), {"bench-other": time.time() + 3600})
                    broker._alone.pop(code, None)  # as its announcement would
                measuring[0] = measure
                play(code, who, moves, measure)
                measuring[0] = False
                for conn in conns:
                    hub.remove(conn)
        heard = hear(published)
    stop = getattr(services.scheduler, "stop", None)
    if stop is not None:
        stop()  # its thread uses the database, which is dropped next
    report(args, per_move, stages, state_sizes, votes, sent[0], client, reloads, heard)


def hear(published: list[bytes]) -> list[float]:
    """What another process spends rebuilding each change from its message (its own
    store knows the earlier ones): done after the game, so that this process's objects
    (its garbage collections) do not weigh on the moves measured."""
    other = Store()
    heard = []
    for raw in published:
        start = time.process_time()
        message = orjson.loads(raw)
        if message.get("s") is not None:
            other.from_message(message["s"])
            heard.append(time.process_time() - start)
    return heard


def window(values, lo, hi):
    part = values[lo:hi]
    return statistics.fmean(part) if part else float("nan")


def report(args, per_move, stages, sizes, votes, sent, client, reloads, heard) -> None:
    ms = [v * 1000 for v in per_move]
    n = len(ms)
    split = {s: statistics.fmean(p.get(s, 0.0) for p in stages) * 1000 for s in (*STAGES, "rest")}
    early, late = window(ms, 0, 50), window(ms, 350, 400)
    result = {
        "moves": n,
        "next_round_votes_rounds": votes,
        "cpu_ms_per_move_mean": statistics.fmean(ms),
        "cpu_ms_per_move_p50": statistics.median(ms),
        "test_client_cpu_ms_per_move": statistics.fmean(client) * 1000,
        "cpu_ms_moves_0_50": early,
        "cpu_ms_moves_350_400": late,
        "late_vs_early": late / early - 1 if early else None,
        "cpu_ms_last_100": window(ms, n - 100, n),
        "stages_ms": split,
        "state_bytes_move_10_200_400_last": [sizes[i] for i in (9, 199, 399, -1) if len(sizes) > i],
        "push_bytes": sent,
        "reload_ms_per_move": statistics.fmean(reloads) * 1000 if reloads else None,
        "from_message_ms_per_move": statistics.fmean(heard) * 1000 if heard else None,
        "gc": "python defaults" if args.default_gc else "a worker's (app.web.serving.tune_gc)",
        "load_average": os.getloadavg(),
    }
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(f"moves                      {n} (and {votes} rounds of next-round votes)")
    print(
        f"CPU per move               mean {result['cpu_ms_per_move_mean']:.2f} ms, "
        f"p50 {result['cpu_ms_per_move_p50']:.2f} ms"
    )
    print(f"test client (not counted)   {result['test_client_cpu_ms_per_move']:.2f} ms per move")
    print(
        f"moves 0-50 / 350-400       {early:.2f} / {late:.2f} ms "
        f"({result['late_vs_early'] * 100:+.0f}%)"
    )
    print(f"last 100 moves             {result['cpu_ms_last_100']:.2f} ms")
    print("by stage (ms per move)     " + ", ".join(f"{k} {v:.3f}" for k, v in split.items()))
    sizes = result["state_bytes_move_10_200_400_last"]
    print(f"stored state (bytes)       move 10/200/400/last: {sizes}")
    if reloads:
        print(f"another process's reload   {result['reload_ms_per_move']:.2f} ms per move")
    if heard:
        print(f"... from the message        {result['from_message_ms_per_move']:.2f} ms per move")
    print(f"garbage collector          {result['gc']}")
    print("load average               {:.2f} {:.2f} {:.2f}".format(*result["load_average"]))


if __name__ == "__main__":
    main()

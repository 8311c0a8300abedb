"""Production server settings (the Procfile runs gunicorn with this file).

On SQLite, one worker process: the socket hub is in-process, so every socket of a table
must reach the same process. With SKYMO_DATABASE_URL=postgresql://... and
SKYMO_REDIS_URL=redis://... every process serves every table (pushes fan out through
Redis): SKYMO_WORKERS processes, one per core by default.

The gevent worker was chosen by measurement (README, "Figures"): with 500 tables of 4
players (2,000 sockets) it kept a push p95 of 0.6 s and no error, where the gthread
worker (two OS threads per open socket, fighting over the GIL) fell to a push p95 of
22 s with errors. SKYMO_WORKER=gthread switches back.

The workers of one gunicorn share its socket, so a table's players land on any of them.
Each table on one process is faster (its changes are rendered and pushed by one process,
not by each): run one single-worker gunicorn per port behind a proxy hashing on the table
code, as deploy/haproxy.cfg and deploy/nginx.conf do."""

import importlib.util
import os
from pathlib import Path


def _module(name: str):
    """app/<name>.py alone, not the app package: importing the app in gunicorn's master
    would create its locks before gevent patches the workers."""
    spec = importlib.util.spec_from_file_location(
        f"skymo_{name.replace('/', '_')}", Path(__file__).parent / f"app/{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


deploy = _module("settings")
try:
    deploy.check()  # a wrong setup stops gunicorn at once, with the reason
    workers = deploy.workers()
except deploy.ConfigError as exc:
    raise SystemExit(f"skymo: {exc}") from None

bind = f"{os.environ.get('SKYMO_HOST', '0.0.0.0')}:{os.environ.get('PORT', '8000')}"
worker_class = os.environ.get("SKYMO_WORKER", "gevent")
threads = int(os.environ.get("SKYMO_THREADS", "2500"))
# Above `threads`, so that keep-alive HTTP connections are possible next to the sockets;
# for gevent, the number of concurrent connections (sockets included).
worker_connections = threads + 500 if worker_class == "gthread" else 10000
timeout = 120  # seconds a worker may be silent; sockets are kept alive by pings
graceful_timeout = 20
keepalive = 30
accesslog = "-" if os.environ.get("SKYMO_ACCESS_LOG") == "1" else None

# gevent keeps each greenlet's spawning stack for debugging: thousands of frames for
# 2,000 sockets. Off, unless asked for.
os.environ.setdefault("GEVENT_TRACK_GREENLET_TREE", "false")


def post_worker_init(worker):
    """Once the app is loaded in the worker: its garbage collector set for a server's
    heap (app.web.serving.tune_gc: the periodic latency bursts were full collections) and its
    young generations collected every second too (collect_young_by_time). Imported here,
    in the worker, never in the master, before gevent patches the workers."""
    from app.web.serving import collect_young_by_time, tune_gc

    tune_gc()
    collect_young_by_time()

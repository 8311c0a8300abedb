"""Production server settings (the Procfile runs gunicorn with this file).

One worker process: the socket hub is in-process, so every socket of a table must
reach the same process. Each open socket holds one thread of the gthread worker, so
`threads` bounds the open sockets per process (idle sockets cost a thread's stack,
not CPU)."""

import os

bind = f"{os.environ.get('SKYMO_HOST', '0.0.0.0')}:{os.environ.get('PORT', '8000')}"
workers = 1
worker_class = "gthread"
threads = int(os.environ.get("SKYMO_THREADS", "2500"))
# Above `threads`, so that keep-alive HTTP connections are possible next to the sockets.
worker_connections = threads + 500
timeout = 120  # seconds a worker may be silent; sockets are kept alive by pings
graceful_timeout = 20
keepalive = 30
accesslog = "-" if os.environ.get("SKYMO_ACCESS_LOG") == "1" else None

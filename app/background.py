"""Work in the background, as the server runs it: a bare greenlet under gevent (the
gunicorn worker), else a daemon thread (tests, `python -m app`)."""

from __future__ import annotations

import threading
from collections.abc import Callable


def gevent_active() -> bool:
    try:
        from gevent import monkey
    except ImportError:
        return False
    return monkey.is_module_patched("threading")


def background(target: Callable[[], object], name: str) -> None:
    """Run `target` in the background: under gevent a bare greenlet, else a daemon
    thread. A patched Thread.start() waits for the new greenlet to report that it
    started, and under load (hundreds of sockets opening at once) those waits were
    measured never to return, each holding its request's database connection."""
    if gevent_active():
        import gevent

        gevent.spawn(target)
    else:
        threading.Thread(target=target, name=name, daemon=True).start()


class Background:
    """simple-websocket's `thread_class` (its socket reader): started with `background`."""

    def __init__(self, target: Callable[[], object]):
        self.target = target
        self.name = "skymo-socket-reader"

    def start(self) -> None:
        # Not kept once started: the target is the reader's bound method, and the
        # reader keeps its Background (a cycle that only the collector would free).
        target, self.target = self.target, None
        background(target, self.name)

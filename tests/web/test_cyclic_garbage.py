"""A request leaves no cyclic garbage: garbage that only the collector frees is what
makes it run, and each of its collections holds every request and push of the worker
(docs/figures.md, "No periodic latency bursts"). Requests are made through the WSGI app itself:
Werkzeug's test client ties its own request into a cycle."""

from __future__ import annotations

import gc
import threading
import time
import weakref

import pytest
from werkzeug.test import EnvironBuilder

from tests.web.live_helpers import HttpBrowser as LiveBrowser


def cyclic_garbage_of(app, path: str, cookie: str | None = None) -> list:
    """What the collector finds after a second GET of `path` (the first one warms the
    templates and caches), but the cycle Werkzeug's URL matcher leaves on every request
    (its recursive inner function `_match`, its cells, a set and a tuple: 8 objects,
    freed by the next young collection; Skymo matches URLs as Flask does)."""

    def request():
        headers = {"Cookie": f"session={cookie}"} if cookie else {}
        environ = EnvironBuilder(path=path, headers=headers).get_environ()
        body = app.wsgi_app(environ, lambda status, headers: None)
        b"".join(body)
        getattr(body, "close", lambda: None)()

    request()
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        request()
        gc.collect()
        found = list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    matcher = [o for o in found if getattr(o, "__qualname__", "").endswith("match.<locals>._match")]
    if len(matcher) == 1:
        cycle = [*matcher, *(o for o in found if o is not matcher[0] and _refers(matcher[0], o))]
        found = [o for o in found if not any(o is c for c in cycle)]
    return found


def _refers(function, obj) -> bool:
    """`obj` is part of `function`'s own cycle: one of its cells, what a cell holds, or
    its closure."""
    cells = function.__closure__ or ()
    return obj is cells or any(obj is c or obj is c.cell_contents for c in cells)


@pytest.mark.parametrize("path", ["/", "/t/ABCD"])
def test_a_request_leaves_no_cyclic_garbage(app, path):
    assert cyclic_garbage_of(app, path) == []


def test_the_lobby_leaves_no_cyclic_garbage_for_the_host_or_a_guest(app, browser):
    """A template defining a macro tied its render context (request, session) into a
    cycle: the lobby's invite and the host's rules form had some."""
    ann, bob = browser(), browser()
    code = ann.post("/tables", {"name": "Ann"}).headers["Location"].rsplit("/", 1)[1]
    bob.post(f"/t/{code}/join", {"name": "Bob"})
    for person in (ann, bob):
        cookie = person.client.get_cookie("session").value
        assert cyclic_garbage_of(app, f"/t/{code}", cookie) == []


def test_a_closed_push_socket_is_freed_without_a_full_collection(app, hub):
    """A socket, its reader and its hub connection referred to each other: each closed
    socket, long-lived by then, waited for a full collection, with its buffers (the
    memory soak's steady growth). Served in this process (Werkzeug's threaded server);
    once closed, the young collections the server runs every second must free it."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    ann = LiveBrowser(f"http://127.0.0.1:{server.port}")
    ann.create("Ann")
    try:
        ws = ann.socket()
        ws.recv()  # the table: the socket is served
        (conn,) = hub.connections(ann.code)
        kept = [weakref.ref(conn), weakref.ref(conn.close.__self__)]  # and its Server
        del conn
        gc.collect()  # what survives a full collection is old, as a socket's objects are
        ws.close()
        deadline = time.monotonic() + 5
        while hub.connections(ann.code) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)  # the handler and the reader finish
        gc.collect(1)  # the young generations only
    finally:
        server.shutdown()
    assert [ref() for ref in kept] == [None, None]

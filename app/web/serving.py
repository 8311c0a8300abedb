"""What gunicorn's worker does around each request, made cheaper (installed by
gunicorn.conf.py in each worker, once the app is loaded), and how the worker's garbage
collector is set.

gunicorn writes an answer's status line and headers with one send and its body with
another: two system calls per request, and on the other side two reads, for answers
that are mostly a few KB. Here the headers and a body of known length go out in one
send; gunicorn still decides every byte of both (Connection, Date, the length cap)."""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import time
from inspect import iscoroutinefunction
from urllib.parse import parse_qsl

from flask import Flask, Request
from werkzeug.datastructures import ImmutableMultiDict
from werkzeug.http import parse_cookie
from werkzeug.utils import cached_property

from app.web.routing import Routes

log = logging.getLogger(__name__)

# Young collections every 2,000 net allocations (and every second: collect_young_by_time),
# the middle generation with each of them, the oldest rarely. A collection walks every
# object of the generations it collects (~1 us each on the loaded machine): at 1,000
# tables (10,000, 50, 100) meant young collections of 10-125 ms of CPU and middle ones of
# 255-409 ms (all that 50 young ones had kept); (2000, 5, 400), 4-14 middle ones of
# 51-92 ms a minute; this, none over 50 ms in three runs (docs/figures.md).
# SKYMO_GC_THRESHOLDS="2000,5,400" tries others.
GC_THRESHOLDS = (2000, 1, 1000)


def gc_thresholds() -> tuple[int, ...]:
    given = os.environ.get("SKYMO_GC_THRESHOLDS", "")
    return tuple(int(n) for n in given.split(",")) if given else GC_THRESHOLDS


def tune_gc(log_pauses_over: float | None = 0.05) -> None:
    """Latency bursts were full garbage collections: every few seconds under load, each
    walking every object of the process (187 ms of CPU at 1,000 sockets on the loaded
    development machine), because every move's cached snapshot lives long enough to
    reach the oldest generation. What the app loaded at start is frozen (never walked
    again), and the generations are collected by GC_THRESHOLDS (and a timer:
    collect_young_by_time), so that each collection walks little (README, "Server").
    Called once the app is loaded: by each gunicorn worker, and by
    benchmarks/move_cost.py, which measures what such a worker spends."""
    gc.freeze()
    gc.set_threshold(*gc_thresholds())
    if log_pauses_over is not None and not any(isinstance(c, PauseLog) for c in gc.callbacks):
        gc.callbacks.append(PauseLog(log_pauses_over))


YOUNG_EVERY = 1.0  # seconds between the collector's timed young collections


def collect_due() -> int:
    """Collect the young generation, and the middle one too when its turn has come (as
    the collector's own trigger would); returns the generation collected."""
    generation = 1 if gc.get_count()[1] >= gc.get_threshold()[1] else 0
    gc.collect(generation)
    return generation


def collect_young_by_time(every: float = YOUNG_EVERY) -> None:
    """Young collections every `every` seconds, besides the collector's own trigger. That
    trigger counts allocations minus deallocations: a move's new version of its table is
    young, but freeing the old one counts it back down, so with tables merely changing
    the young generation grew unseen between collections (at 1,000 tables a young
    collection walked 50-125 ms of CPU by the end of a run, a middle one 409 ms). Timed,
    each walks about a second of changes. Started once per worker (gunicorn.conf.py)."""
    from app.live.hub import background

    if getattr(collect_young_by_time, "started", False):
        return
    collect_young_by_time.started = True

    def collector() -> None:
        while True:
            asked = time.monotonic()
            time.sleep(every)  # gevent's sleep under the gevent worker
            held_loop(time.monotonic() - asked - every)
            collect_due()

    background(collector, "skymo-young-collector")


LATE = 0.2  # seconds a timer may fire late before the worker's loop is called held


def held_loop(late: float) -> None:
    """Log a timer that fired `late` seconds late: the worker's loop was held that long
    (by a long computation, a blocking call or a busy machine), and every request and
    push of the process waited. With the time, to match a latency burst seen outside."""
    if late > LATE:
        log.warning(
            "the worker's loop was held: a timer fired %.0f ms late (%s UTC)",
            late * 1000,
            time.strftime("%H:%M:%S", time.gmtime()),
        )


class PauseLog:
    """Logs every collection that held the worker longer than `over` seconds (its
    generation and length): a pause that long holds every request and push of the
    process, so a latency burst under load can be told from one."""

    def __init__(self, over: float):
        self.over = over
        self.started = (0.0, 0.0)

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self.started = (time.perf_counter(), time.process_time())
            return
        spent = time.perf_counter() - self.started[0]
        if spent > self.over:
            # Held (wall time) and CPU apart: on a busy machine the collector may also
            # wait for a core. A collection run as a greenlet is finalized (a worker
            # shutting down) cannot be logged: logging names the current thread, which
            # gevent cannot make then ("Exception ignored" in the log, every shutdown).
            with contextlib.suppress(RuntimeError):
                log.warning(
                    "garbage collection of generation %d held the worker %.0f ms "
                    "(%.0f ms of CPU, %d collected)",
                    info["generation"],
                    spent * 1000,
                    (time.process_time() - self.started[1]) * 1000,
                    info["collected"],
                )


class _Gathered:
    """Stands in for the socket while gunicorn writes one answer: keeps what it sends."""

    def __init__(self):
        self.parts: list[bytes] = []

    def sendall(self, data: bytes) -> None:
        self.parts.append(data)


def one_send(response_class) -> None:
    """Have `response_class` (gunicorn.http.wsgi.Response) send its headers together
    with the first body write, when the body is not chunked."""
    write = response_class.write
    if getattr(write, "one_send", False):
        return  # installed already

    def write_with_headers(self, data):
        if self.headers_sent or self.chunked:
            return write(self, data)
        sock, gathered = self.sock, _Gathered()
        self.sock = gathered
        try:
            write(self, data)
        finally:
            self.sock = sock
        sock.sendall(b"".join(gathered.parts))

    write_with_headers.one_send = True
    response_class.write = write_with_headers


URLENCODED = "application/x-www-form-urlencoded"


class QuickForm(Request):
    """Flask's request; a form sent as htmx and browsers send every move (urlencoded, no
    parameters) is read as Werkzeug reads it (`_parse_urlencoded`: the whole body, limited
    to MAX_CONTENT_LENGTH, through `parse_qsl`), without building its general form
    parser and parsing the content type again for it: a third of what reading a move's
    form cost (~20 instead of ~31 us). Anything else: Werkzeug's own path. Its cookies
    are parsed once per distinct Cookie header."""

    def _load_form_data(self) -> None:
        if (
            "form" in self.__dict__
            or self.environ.get("CONTENT_TYPE") != URLENCODED
            or getattr(self, "_cached_data", None) is not None
        ):
            return super()._load_form_data()
        stream = self.stream  # Werkzeug's limited stream: too long a body is a 413
        try:
            items = parse_qsl(
                stream.read().decode(), keep_blank_values=True, errors="werkzeug.url_quote"
            )
        except ValueError:  # not UTF-8: an empty form, as Werkzeug's (silent) parser gives
            items = []
        d, cls = self.__dict__, self.parameter_storage_class
        d["stream"], d["form"], d["files"] = stream, cls(items), cls()
        return None

    @cached_property
    def cookies(self):
        """Werkzeug's, parsed once per distinct Cookie header: a browser sends the same
        one on every request (the session and the language read it on each), and the
        parsed cookies are immutable, so requests share them."""
        raw = self.environ.get("HTTP_COOKIE")
        if raw is None or self.dict_storage_class is not ImmutableMultiDict:
            return super().cookies
        found = _COOKIES.get(raw)
        if found is None:
            if len(_COOKIES) >= 4096:
                _COOKIES.clear()
            found = _COOKIES[raw] = parse_cookie(raw, cls=ImmutableMultiDict)
        return found


_COOKIES: dict[str, ImmutableMultiDict] = {}  # Cookie header -> its parsed cookies


def quick_form(request_class: type[Request]) -> type[Request]:
    """`request_class` (htmx-flask's, which its init_app installs) reading forms the
    short way (`QuickForm`)."""
    if issubclass(request_class, QuickForm):
        return request_class
    return type(f"Quick{request_class.__name__}", (QuickForm, request_class), {})


class RememberedMatches:
    """Werkzeug's URL matcher (a Map's StateMachineMatcher), remembering each address it
    matched: a table's few addresses are asked for on every request its players make,
    and each match built a recursive inner function (a reference cycle left for the
    garbage collector). Only matches are kept (a miss raises, as before); the values
    are copied for each request (Flask's hooks may change them); adding a rule forgets
    them all."""

    SIZE = 4096

    def __init__(self, matcher):
        self.matcher = matcher
        self.found: dict[tuple, tuple] = {}

    def match(self, domain: str, path: str, method: str, websocket: bool):
        key = (domain, path, method, websocket)
        found = self.found.get(key)
        if found is None:
            found = self.matcher.match(domain, path, method, websocket)
            if len(self.found) >= self.SIZE:
                self.found.clear()
            self.found[key] = found
        return found[0], dict(found[1])

    def add(self, rule) -> None:
        self.found.clear()
        self.matcher.add(rule)

    def update(self) -> None:
        self.found.clear()
        self.matcher.update()

    @property
    def merge_slashes(self) -> bool:
        return self.matcher.merge_slashes

    @merge_slashes.setter
    def merge_slashes(self, value: bool) -> None:
        self.found.clear()
        self.matcher.merge_slashes = value


class Skymo(Flask):
    """Flask, asking once per function whether it is a coroutine function: Flask asks for
    every view and every before/after/teardown function of every request (a dozen
    `inspect` calls each time). The answer never changes for a function. URLs are
    matched without leaving cyclic garbage (app.web.routing), and the URL map remembers what
    it matched (`RememberedMatches`)."""

    url_map_class = Routes

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.url_map._matcher = RememberedMatches(self.url_map._matcher)

    def ensure_sync(self, func):
        cache = self.__dict__.setdefault("_sync_functions", {})
        try:
            found = cache.get(func)
        except TypeError:  # not hashable: asked each time
            return super().ensure_sync(func)
        if found is None:
            found = func if not iscoroutinefunction(func) else super().ensure_sync(func)
            if len(cache) < 4096:
                cache[func] = found
        return found

"""How a gunicorn worker's garbage collector is set (gunicorn.conf.py calls this in each
worker, once the app is loaded): Python's documented knobs (gc.freeze, the thresholds,
timed collections), no change to gunicorn, Flask or Werkzeug."""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import time

from app.background import background

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

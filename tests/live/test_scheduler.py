"""The scheduler's thread (app.live.scheduler): `clear` forgets the pending steps once
the running one is done, so that no step outlives the app (and database) it ran for."""

from __future__ import annotations

import importlib
import threading
import time

from app.live.scheduler import Scheduler

# The module (the package's attribute of that name is its Scheduler).
scheduler_module = importlib.import_module("app.live.scheduler")


def test_clear_waits_for_the_running_step_and_forgets_the_pending_ones(app, services, monkeypatch):
    started, release = threading.Event(), threading.Event()
    ran = []

    def step(code):
        ran.append(code)
        started.set()
        release.wait(5)
        return True  # a change: it schedules what follows it itself

    due = {"A": 0.0, "B": 0.3}  # seconds from now
    monkeypatch.setattr(scheduler_module, "run_automatic", step)
    monkeypatch.setattr(
        scheduler_module, "next_automatic", lambda snap, *_: (time.time() + due[snap], None)
    )
    s = Scheduler(services.presence, services.tables.timing)
    s.start(app)
    s.wake("A", "A")
    assert started.wait(5)
    s.wake("B", "B")
    cleared = threading.Thread(target=s.clear)
    cleared.start()
    cleared.join(0.5)
    assert cleared.is_alive()  # step A still runs: clear waits for it
    assert s.pending() == 0  # B is forgotten at once
    release.set()
    cleared.join(5)
    assert not cleared.is_alive() and s.pending() == 0
    time.sleep(0.5)  # B fell due meanwhile: forgotten, it does not run
    assert ran == ["A"]

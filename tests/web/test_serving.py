"""What a worker's answers and garbage collector are like: forms read as Werkzeug reads
them (no size beyond MAX_CONTENT_LENGTH), and the collector set by app.web.serving."""

from __future__ import annotations

import pytest


def test_a_form_over_the_size_limit_is_refused(client):
    response = client.post(
        "/tables",
        data=b"name=" + b"a" * (65 * 1024),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert response.status_code == 413


def test_the_app_reads_forms_and_htmx_headers(app):
    """htmx-flask installs its own request class: forms and `request.htmx` both read."""
    from flask import request

    body = b"type=draw&version=3&x=%C3%A9+%2B"
    with app.test_request_context(
        "/",
        method="POST",
        data=body,
        content_type="application/x-www-form-urlencoded",
        headers={"HX-Request": "true"},
    ):
        assert request.form.to_dict() == {"type": "draw", "version": "3", "x": "é +"}
        assert request.htmx


@pytest.fixture
def gc_state():
    """The collector's thresholds and callbacks as they were, back after the test (the
    frozen objects are let go again)."""
    import gc

    thresholds, callbacks = gc.get_threshold(), list(gc.callbacks)
    yield
    gc.set_threshold(*thresholds)
    gc.callbacks[:] = callbacks
    gc.unfreeze()


def test_a_worker_collects_its_young_generations_often_and_the_oldest_rarely(gc_state, monkeypatch):
    """The middle generation is collected with every young collection, so that it holds
    little when it is (docs/figures.md, "No periodic latency bursts")."""
    import gc

    from app.web.serving import GC_THRESHOLDS, PauseLog, tune_gc

    monkeypatch.delenv("SKYMO_GC_THRESHOLDS", raising=False)
    tune_gc()
    assert gc.get_threshold() == GC_THRESHOLDS == (2000, 1, 1000)
    assert sum(isinstance(c, PauseLog) for c in gc.callbacks) == 1
    monkeypatch.setenv("SKYMO_GC_THRESHOLDS", "700,10,10")
    tune_gc()
    assert gc.get_threshold() == (700, 10, 10)
    assert sum(isinstance(c, PauseLog) for c in gc.callbacks) == 1


def test_a_long_collection_is_logged_unless_logging_cannot_name_the_thread(monkeypatch, caplog):
    """A collection run while a greenlet is finalized (a gevent worker shutting down):
    logging cannot name the current thread then, and the callback must not raise (the
    log showed "Exception ignored in: PauseLog" on every shutdown)."""
    import logging

    import app.web.serving as serving

    pause = serving.PauseLog(0.0)
    with caplog.at_level(logging.WARNING, logger="app.web.serving"):
        pause("start", {})
        pause("stop", {"generation": 1, "collected": 3})
    assert "garbage collection of generation 1" in caplog.text

    def finalizing(*args, **kwargs):
        raise RuntimeError("greenlet is being finalized")

    monkeypatch.setattr(serving.log, "warning", finalizing)
    pause("start", {})
    pause("stop", {"generation": 2, "collected": 0})  # no exception


def test_a_timed_young_collection_takes_the_middle_generation_in_its_turn(gc_state):
    import gc

    from app.web.serving import collect_due

    gc.disable()  # only the collections made here
    try:
        gc.set_threshold(700, 3, 10)
        gc.collect()
        assert [collect_due() for _ in range(5)] == [0, 0, 0, 1, 0]
    finally:
        gc.enable()


def test_one_timed_collector_per_worker(monkeypatch):
    """Started once, it collects what is due every `every` seconds."""
    import app.web.serving as serving

    started, slept, collected = [], [], []
    monkeypatch.setattr(serving, "background", lambda target, name: started.append(target))
    monkeypatch.setattr(serving, "collect_due", lambda: collected.append(1))
    monkeypatch.setattr(serving.collect_young_by_time, "started", False, raising=False)

    def sleep(seconds):
        slept.append(seconds)
        if len(slept) > 2:
            raise SystemExit

    monkeypatch.setattr(serving.time, "sleep", sleep)
    serving.collect_young_by_time(0.5)
    serving.collect_young_by_time(0.5)
    assert len(started) == 1
    with pytest.raises(SystemExit):
        started[0]()
    assert slept == [0.5, 0.5, 0.5] and len(collected) == 2


def test_a_timer_that_fires_late_is_logged_as_a_held_loop(monkeypatch, caplog):
    """The timed collector's own sleep tells when the worker's loop was held (a latency
    burst with no collection behind it): logged with the time, a little lateness not."""
    import logging

    import app.web.serving as serving

    started, now = [], [100.0]
    monkeypatch.setattr(serving, "background", lambda target, name: started.append(target))
    monkeypatch.setattr(serving, "collect_due", lambda: None)
    monkeypatch.setattr(serving.collect_young_by_time, "started", False, raising=False)
    monkeypatch.setattr(serving.time, "monotonic", lambda: now[0])
    late = iter([0.05, 0.9])

    def sleep(seconds):
        try:
            now[0] += seconds + next(late)
        except StopIteration:
            raise SystemExit from None

    monkeypatch.setattr(serving.time, "sleep", sleep)
    serving.collect_young_by_time(1.0)
    with caplog.at_level(logging.WARNING, logger="app.web.serving"), pytest.raises(SystemExit):
        started[0]()
    held = [r.getMessage() for r in caplog.records if "loop was held" in r.getMessage()]
    assert len(held) == 1 and "fired 900 ms late" in held[0] and "UTC" in held[0]

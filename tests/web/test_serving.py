"""gunicorn's answers with headers and body in one send (app.web.serving), byte for byte
what gunicorn itself would have sent."""

from __future__ import annotations

from io import BytesIO

import pytest
from gunicorn import util
from gunicorn.config import Config
from gunicorn.http.wsgi import Response

from app.web.serving import one_send


class OneSend(Response):
    pass


one_send(OneSend)


class Request:
    version = (1, 1)
    method = "GET"

    def should_close(self) -> bool:
        return False


class Socket:
    def __init__(self):
        self.sends: list[bytes] = []

    def sendall(self, data: bytes) -> None:
        self.sends.append(data)


def answer(response_class, headers, body: list[bytes]) -> list[bytes]:
    sock = Socket()
    resp = response_class(Request(), sock, Config())
    resp.start_response("200 OK", headers)
    for part in body:
        resp.write(part)
    resp.close()
    return sock.sends


@pytest.fixture(autouse=True)
def fixed_date(monkeypatch):
    monkeypatch.setattr(util, "http_date", lambda *a: "Tue, 01 Dec 2026 10:00:00 GMT")


def test_an_answer_of_known_length_is_one_send_of_the_same_bytes():
    headers = [("Content-Type", "text/html"), ("Content-Length", "11")]
    plain = answer(Response, headers, [b"hello world"])
    sends = answer(OneSend, headers, [b"hello world"])
    assert len(plain) == 2  # gunicorn's own: the headers, then the body
    assert sends == [b"".join(plain)]
    assert sends[0].startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"Connection: keep-alive\r\n" in sends[0]
    assert sends[0].endswith(b"\r\n\r\nhello world")


def test_the_length_cap_and_later_writes_stay_gunicorns():
    headers = [("Content-Length", "8")]
    plain = answer(Response, headers, [b"hello", b" world"])
    sends = answer(OneSend, headers, [b"hello", b" world"])
    assert b"".join(sends) == b"".join(plain)
    assert sends[0].endswith(b"\r\n\r\nhello") and sends[1:] == [b" wo"]


def test_a_chunked_answer_and_an_empty_one_are_sent_as_gunicorn_sends_them():
    for headers, body in (([("Content-Type", "text/plain")], [b"abc", b"de"]), ([], [])):
        assert answer(OneSend, headers, body) == answer(Response, headers, body)


def test_installing_twice_wraps_once():
    write = OneSend.write
    one_send(OneSend)
    assert OneSend.write is write


@pytest.mark.parametrize(
    "body",
    [
        b"csrf_token=a.b-c&type=draw&version=12",
        b"type=keep_drawn&pos=1-2&note=&x=%C3%A9+%2B&x=2",
        b"name=%FF%FE&type=draw",  # not UTF-8 once unquoted
        b"\xff\xfe=1",  # not UTF-8 as sent
        b"",
    ],
)
def test_a_urlencoded_form_reads_as_werkzeug_reads_it(body):
    """QuickForm reads a move's form the short way: the same form as Werkzeug's."""
    from flask import Flask, Request
    from werkzeug.test import EnvironBuilder

    from app.web.serving import QuickForm

    app = Flask(__name__)
    environ = EnvironBuilder(
        method="POST", data=body, content_type="application/x-www-form-urlencoded"
    ).get_environ()
    with app.app_context():
        ours = QuickForm(dict(environ, **{"wsgi.input": BytesIO(body)}))
        theirs = Request(dict(environ, **{"wsgi.input": BytesIO(body)}))
        assert list(ours.form.items(multi=True)) == list(theirs.form.items(multi=True))
        assert not ours.files


def test_a_form_over_the_size_limit_is_refused(client):
    """The short way still reads through Werkzeug's limited stream: 413, as before."""
    response = client.post(
        "/tables",
        data=b"name=" + b"a" * (65 * 1024),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert response.status_code == 413


def test_the_app_reads_forms_the_short_way_with_htmx_flask_s_request(app):
    """htmx-flask installs its own request class: the app's still reads forms the short
    way, and still has `request.htmx`."""
    from flask import request

    from app.web.serving import QuickForm

    assert issubclass(app.request_class, QuickForm)
    body = b"type=draw&version=3"
    with app.test_request_context(
        "/",
        method="POST",
        data=body,
        content_type="application/x-www-form-urlencoded",
        headers={"HX-Request": "true"},
    ):
        assert request.form.to_dict() == {"type": "draw", "version": "3"}
        assert request.htmx


@pytest.mark.parametrize(
    "header", ["session=abc.def; skymo_lang=fr", 'a="quoted; value"; b=2; a=3', "", "junk"]
)
def test_cookies_read_as_werkzeug_reads_them_parsed_once_per_header(header):
    """The request's cookies are Werkzeug's, and a second request with the same Cookie
    header (a browser's next request) is given the same parsed (immutable) cookies."""
    from werkzeug.test import EnvironBuilder
    from werkzeug.wrappers import Request

    from app.web.serving import QuickForm

    environ = EnvironBuilder(headers={"Cookie": header}).get_environ()
    theirs = Request(dict(environ)).cookies
    first, again = QuickForm(dict(environ)).cookies, QuickForm(dict(environ)).cookies
    assert list(first.items(multi=True)) == list(theirs.items(multi=True))
    assert again is first
    other = EnvironBuilder(headers={"Cookie": header + "; more=1"}).get_environ()
    assert QuickForm(other).cookies["more"] == "1"
    assert "more" not in first


def test_the_url_map_remembers_its_matches_and_answers_as_werkzeug_does(app):
    """Matches are remembered per address (each request gets its own copy of the
    values); misses and wrong methods are Werkzeug's, every time."""
    from werkzeug.exceptions import MethodNotAllowed, NotFound

    from app.web.serving import RememberedMatches

    matcher = app.url_map._matcher
    assert isinstance(matcher, RememberedMatches)
    adapter = app.url_map.bind("localhost")
    first = adapter.match("/t/ABCD/move", "POST", return_rule=True)
    first[1]["code"] = "changed by a hook"
    rule, values = adapter.match("/t/ABCD/move", "POST", return_rule=True)
    assert rule.endpoint == "table.move" and values == {"code": "ABCD"}
    assert adapter.match("/t/WXYZ/move", "POST") == ("table.move", {"code": "WXYZ"})
    for _ in range(2):
        with pytest.raises(MethodNotAllowed):
            adapter.match("/t/ABCD/move", "GET")
        with pytest.raises(NotFound):
            adapter.match("/no/such/page", "GET")
    assert any(key[1:] == ("/t/ABCD/move", "POST", False) for key in matcher.found)
    app.url_map.add(type(rule)("/t/<code>/move", endpoint="elsewhere", methods=["PUT"]))
    assert not matcher.found  # a new rule: everything is matched again
    assert adapter.match("/t/ABCD/move", "PUT") == ("elsewhere", {"code": "ABCD"})


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
    import app.live.hub
    import app.web.serving as serving

    started, slept, collected = [], [], []
    monkeypatch.setattr(app.live.hub, "background", lambda target, name: started.append(target))
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

    import app.live.hub
    import app.web.serving as serving

    started, now = [], [100.0]
    monkeypatch.setattr(app.live.hub, "background", lambda target, name: started.append(target))
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

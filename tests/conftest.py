"""Shared fixtures (Flask tutorial style): `app`, `client`, players, a live server."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from app import create_app
from app.storage.models import db

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def database_url(tmp_path):
    """A fresh SQLite file; with SKYMO_TEST_DATABASE=postgres (scripts/test runs some
    modules so), a fresh PostgreSQL database instead, dropped after the test."""
    if os.environ.get("SKYMO_TEST_DATABASE") != "postgres":
        yield f"sqlite:///{tmp_path / 'skymo.db'}"
        return
    from tests.cluster.conftest import fresh_postgres

    with fresh_postgres() as url:
        yield url


@pytest.fixture
def app(database_url):
    """An app on a fresh database; bots move inside the request (no timers)."""
    app = create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "test",
            "DATABASE_URL": database_url,
            "INLINE_BOTS": True,
        }
    )
    yield app
    db.close_all()


@pytest.fixture
def services(app):
    """The app's adapters as app/wiring.py built them."""
    return app.extensions["skymo"]


@pytest.fixture
def hub(services):
    return services.hub


@pytest.fixture
def presence(services):
    return services.presence


@pytest.fixture
def client(app):
    return app.test_client()


class Browser:
    """A test client that behaves like one person's browser: it keeps its cookies and
    sends the CSRF token the pages gave it."""

    def __init__(self, app):
        self.client = app.test_client()
        self.csrf = None
        self.code = None

    def get(self, url, **kw):
        response = self.client.get(url, **kw)
        found = re.search(rb'name="csrf_token" value="([^"]+)"', response.data)
        if found:
            self.csrf = found.group(1).decode()
        return response

    def post(self, url, data=None, htmx=False, **kw):
        if self.csrf is None:
            self.get("/")
        data = dict(data or {})
        data.setdefault("csrf_token", self.csrf)
        headers = kw.pop("headers", {})
        if htmx:
            headers["HX-Request"] = "true"
        return self.client.post(url, data=data, headers=headers, **kw)

    def page(self):
        return self.get(f"/t/{self.code}").data.decode()

    def version(self):
        return re.search(r'data-version="(\d+)"', self.page()).group(1)

    def create(self, name="Ann", **data):
        response = self.post("/tables", {"name": name, **data})
        assert response.status_code == 303, response.data
        self.code = response.headers["Location"].rsplit("/", 1)[1]
        return self.code

    def join(self, code, name):
        self.code = code
        return self.post(f"/t/{code}/join", {"name": name})

    def move(self, kind, pos=None, **extra):
        data = {"type": kind, "version": self.version(), **extra}
        if pos is not None:
            data["pos"] = f"{pos[0]}-{pos[1]}"
        return self.post(f"/t/{self.code}/move", data)


@pytest.fixture
def browser(app):
    """A factory of independent browsers (each with its own cookies)."""
    return lambda: Browser(app)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """A real server process (`python -m app`) on a temporary database."""

    def __init__(self, tmp: Path, root: Path = ROOT, **env):
        self.root = root  # the checkout whose code runs (benchmarks compare two)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.tmp = tmp
        self.env = {
            **os.environ,
            "SKYMO_INSTANCE_PATH": str(tmp),
            "SKYMO_SECRET_KEY": "live-test",
            "SKYMO_BOT_DELAY": "0.2",
            **env,
        }
        self.proc = None

    def start(self):
        self.log = open(self.tmp / "server.log", "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app", "--port", str(self.port)],
            cwd=self.root,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                urllib.request.urlopen(self.url + "/", timeout=1).read()
                return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the server did not start: see " + str(self.tmp / "server.log"))

    def stop(self, sig=None):
        if self.proc and self.proc.poll() is None:
            if sig is None:
                self.proc.terminate()
            else:
                self.proc.send_signal(sig)
            self.proc.wait(10)
        self.log.close()


@pytest.fixture
def live_server(tmp_path):
    server = LiveServer(tmp_path).start()
    yield server
    server.stop()

"""Fixtures of the multi-process tests: a fresh PostgreSQL database and a fresh Redis
namespace per test, and real server processes (gunicorn, gevent worker) on free
loopback ports. PostgreSQL and Redis must answer (scripts/test starts them): these
tests fail rather than skip without them."""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import psycopg
import pytest
import redis

from app.web.ratelimit import redis_key_patterns
from tests.conftest import ROOT, free_port

PG_ADMIN = os.environ.get("SKYMO_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("SKYMO_TEST_REDIS", "redis://127.0.0.1:6379/0")


def _admin():
    try:
        return psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        pytest.fail(f"PostgreSQL does not answer at {PG_ADMIN} (scripts/test starts it): {exc}")


@contextlib.contextmanager
def fresh_postgres():
    """The URL of a database created for the caller, dropped afterwards."""
    name = f"skymo_test_{secrets.token_hex(6)}"
    with _admin() as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{PG_ADMIN.rsplit('/', 1)[0]}/{name}"
    finally:
        with _admin() as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def pg_url():
    """The URL of a database created for this test, dropped after it."""
    with fresh_postgres() as url:
        yield url


@pytest.fixture
def redis_prefix():
    """A key and channel prefix of this test's own; its keys are deleted after it."""
    client = redis.Redis.from_url(REDIS_URL, socket_timeout=5)
    try:
        client.ping()
    except redis.RedisError as exc:
        pytest.fail(f"Redis does not answer at {REDIS_URL} (scripts/test starts it): {exc}")
    prefix = f"skymo-test-{secrets.token_hex(6)}:"
    yield prefix
    keys = [
        key
        for match in redis_key_patterns(prefix)  # the sign-in limit's keys too
        for key in client.scan_iter(match=match, count=1000)
    ]
    if keys:
        client.delete(*keys)
    client.close()


@pytest.fixture
def multi_env(pg_url, redis_prefix):
    """The environment of a multi-process server on this test's database and namespace."""
    return {
        "SKYMO_DATABASE_URL": pg_url,
        "SKYMO_REDIS_URL": REDIS_URL,
        "SKYMO_REDIS_PREFIX": redis_prefix,
        "SKYMO_SECRET_KEY": "scale-test",
    }


class Server:
    """One gunicorn server (gevent worker) on its own port: one process of a cluster."""

    def __init__(self, tmp: Path, name: str, env: dict):
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp / f"server-{name}.log"
        self.env = {
            **os.environ,
            "SKYMO_INSTANCE_PATH": str(tmp / f"instance-{name}"),
            "SKYMO_BOT_DELAY": "0.2",
            "SKYMO_WORKERS": "1",
            "SKYMO_HOST": "127.0.0.1",
            "PORT": str(self.port),
            **env,
        }
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 30) -> Server:
        self.log = open(self.log_path, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "app:create_app()"],
            cwd=ROOT,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                urllib.request.urlopen(self.url + "/", timeout=2).read()
                return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"server {self.name} did not start:\n{self.log_text()[-3000:]}")

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        """SIGKILL the master and its worker: nothing is flushed, nothing said goodbye."""
        if self.proc and self.proc.poll() is None:
            children = subprocess.run(
                ["pgrep", "-P", str(self.proc.pid)], capture_output=True, text=True
            ).stdout.split()
            self.proc.kill()
            for pid in children:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), 9)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()


@pytest.fixture
def cluster(tmp_path, multi_env):
    """start(name) starts one more server process on the shared database and Redis."""
    servers: list[Server] = []

    def start(name: str, **env) -> Server:
        server = Server(tmp_path, name, {**multi_env, **env}).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


class Relay:
    """A TCP relay to PostgreSQL or Redis that a test can cut (every connection through it
    drops, new ones are refused) and restore: the service "goes away" without stopping
    the shared server. With `delay`, every chunk waits that long before it is passed on
    (a slow link: each round trip takes twice `delay` more)."""

    def __init__(self, target: tuple[str, int], delay: float = 0.0):
        self.target = target
        self.delay = delay
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.open = True
        self.socks: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.open:
                client.close()
                continue
            upstream = socket.create_connection(self.target)
            with self.lock:
                self.socks += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, a, b):
        try:
            while data := a.recv(65536):
                if self.delay:
                    time.sleep(self.delay)
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def cut(self):
        self.open = False
        with self.lock:
            for s in self.socks:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
            self.socks.clear()

    def restore(self):
        self.open = True

    def close(self):
        self.cut()
        self.listener.close()

"""Starting Skymo: the mode is read from the environment, a wrong setup stops with a
clear message, the schema is created (or found) by whichever process starts first, and
an unreachable PostgreSQL gives a 503 page with nothing half-written."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import peewee as pw
import psycopg
import pytest

from app import create_app
from app import settings as deploy
from app.storage.models import MODELS, Table, db
from tests.cluster.conftest import Relay, fresh_postgres
from tests.conftest import ROOT, Browser

REDIS = "redis://127.0.0.1:6379/0"
PG = "postgresql://postgres@127.0.0.1:5432/skymo"


@pytest.fixture
def pg_url():
    """A database created for this test, dropped after it (tests/cluster's fixture is
    not seen from here)."""
    with fresh_postgres() as url:
        yield url


# ----- the mode and its checks ------------------------------------------------------------
def test_without_the_variables_it_is_one_process_on_sqlite():
    assert not deploy.multi_process({})
    assert deploy.workers({}) == 1
    deploy.check({})  # nothing to complain about


def test_postgres_and_redis_turn_on_the_multi_process_mode():
    env = {"SKYMO_DATABASE_URL": PG, "SKYMO_REDIS_URL": REDIS, "SKYMO_SECRET_KEY": "k"}
    assert deploy.multi_process(env)
    assert deploy.workers(env) == (os.cpu_count() or 1)
    assert deploy.workers({**env, "SKYMO_WORKERS": "3"}) == 3
    deploy.check(env)
    # PostgreSQL alone is one process too (the hub stays in memory).
    assert not deploy.multi_process({"SKYMO_DATABASE_URL": PG})


@pytest.mark.parametrize(
    "env, says",
    [
        ({"SKYMO_DATABASE_URL": PG, "SKYMO_REDIS_URL": REDIS}, "SKYMO_SECRET_KEY is required"),
        ({"SKYMO_WORKERS": "2"}, "SKYMO_WORKERS > 1 needs"),
        ({"SKYMO_REDIS_URL": REDIS}, "not a postgresql:// URL"),
        ({"SKYMO_WORKERS": "many"}, "whole number"),
    ],
)
def test_a_wrong_setup_is_refused_with_the_reason(env, says):
    with pytest.raises(deploy.ConfigError, match=re.escape(says)):
        deploy.check(env)


def _clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKYMO_")}
    return {**env, **extra}


def test_gunicorn_and_python_m_app_stop_at_once_without_the_secret_key(tmp_path):
    env = _clean_env(
        SKYMO_DATABASE_URL=PG, SKYMO_REDIS_URL=REDIS, SKYMO_INSTANCE_PATH=str(tmp_path)
    )
    commands = [
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--check-config", "app:x"],
        [sys.executable, "-m", "app", "--port", "1"],
    ]
    for command in commands:
        done = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode != 0
        assert "SKYMO_SECRET_KEY is required" in done.stdout + done.stderr


# ----- the schema -------------------------------------------------------------------------
def test_processes_starting_together_create_the_schema_once(pg_url, tmp_path):
    env = _clean_env(SKYMO_DATABASE_URL=pg_url, SKYMO_INSTANCE_PATH=str(tmp_path))
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "app.cli.migrate"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(3)
    ]
    outputs = [p.communicate(timeout=60)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outputs
    with psycopg.connect(pg_url) as con:
        tables = {
            r[0]
            for r in con.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
            ).fetchall()
        }
    assert {m._meta.table_name for m in MODELS} <= tables


# ----- PostgreSQL unreachable ---------------------------------------------------------------
def test_without_postgres_pages_say_so_and_nothing_is_half_written(pg_url):
    relay = Relay(("127.0.0.1", 5432))
    url = pg_url.replace("127.0.0.1:5432", f"127.0.0.1:{relay.port}")
    app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": url, "INLINE_BOTS": True})
    try:
        ann = Browser(app)
        code = ann.create("Ann")
        ann.post(f"/t/{code}/bots", {"bot": "greedy"})
        version = ann.version()
        relay.cut()
        for response in (ann.get(f"/t/{code}"), ann.post(f"/t/{code}/start", {"version": version})):
            assert response.status_code == 503
            page = response.data.decode()
            assert "cannot reach its database" in page and "Retry-After" in response.headers
        relay.restore()
        # Back: the start never happened (no game, same version), and it can happen now.
        assert ann.get(f"/t/{code}").status_code == 200
        assert ann.version() == version
        with db.connection_context():
            assert Table.get(Table.code == code).status == Table.LOBBY
        assert ann.post(f"/t/{code}/start", {"version": version}).status_code == 303
        with db.connection_context():
            assert Table.get(Table.code == code).status == Table.PLAYING
    finally:
        db.close_all()
        relay.close()


def test_a_database_that_never_answers_stops_the_start_with_the_reason(tmp_path):
    with pytest.raises(pw.OperationalError, match="does not answer"):
        create_app(
            {
                "SECRET_KEY": "t",
                "DATABASE_URL": "postgresql://postgres@127.0.0.1:1/none",
                "DB_WAIT_SECONDS": 0,
            }
        )

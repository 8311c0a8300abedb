"""How Skymo is deployed, read from the environment: one process on SQLite (the default),
or many processes on PostgreSQL + Redis. gunicorn.conf.py and the app factory both ask
here, so a wrong setup stops with one clear message before anything is served."""

from __future__ import annotations

import os

POSTGRES_SCHEMES = ("postgres://", "postgresql://")


class ConfigError(RuntimeError):
    """The environment asks for something Skymo cannot do: the message says what to set."""


def is_postgres(url: str | None) -> bool:
    return bool(url) and url.startswith(POSTGRES_SCHEMES)


def multi_process(env=os.environ) -> bool:
    """PostgreSQL for the state and Redis for pushes and presence: every process can serve
    every table."""
    return is_postgres(env.get("SKYMO_DATABASE_URL")) and bool(env.get("SKYMO_REDIS_URL"))


def workers(env=os.environ) -> int:
    """gunicorn's process count: SKYMO_WORKERS, else one per core in the multi-process
    mode and 1 otherwise (the socket hub then lives in that one process)."""
    raw = (env.get("SKYMO_WORKERS") or "").strip()
    if not raw:
        return (os.cpu_count() or 1) if multi_process(env) else 1
    try:
        count = int(raw)
    except ValueError:
        raise ConfigError(f"SKYMO_WORKERS must be a whole number, not {raw!r}.") from None
    if count < 1:
        raise ConfigError("SKYMO_WORKERS must be at least 1.")
    return count


def check(env=os.environ) -> None:
    """Raise ConfigError for a setup that would misbehave once serving."""
    url = env.get("SKYMO_DATABASE_URL") or ""
    redis_url = env.get("SKYMO_REDIS_URL") or ""
    if redis_url and not is_postgres(url):
        raise ConfigError(
            "SKYMO_REDIS_URL is set but SKYMO_DATABASE_URL is not a postgresql:// URL: "
            "the multi-process mode needs both (or unset SKYMO_REDIS_URL for SQLite)."
        )
    if multi_process(env) and not env.get("SKYMO_SECRET_KEY"):
        raise ConfigError(
            "SKYMO_SECRET_KEY is required with PostgreSQL + Redis: every process must sign "
            "sessions with the same key (for example: python -c "
            "'import secrets; print(secrets.token_hex(32))')."
        )
    if workers(env) > 1 and not multi_process(env):
        raise ConfigError(
            "SKYMO_WORKERS > 1 needs SKYMO_DATABASE_URL=postgresql://... and "
            "SKYMO_REDIS_URL=redis://...: on SQLite one process holds every socket."
        )

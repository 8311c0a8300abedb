"""The pool's tests run servers as the multi-process tests do (tests/cluster)."""

from tests.cluster.conftest import cluster, multi_env, pg_url, redis_prefix  # noqa: F401

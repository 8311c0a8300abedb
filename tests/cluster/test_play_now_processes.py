"""Play now with two processes on one PostgreSQL + Redis: people pressing at the same
moment, through either process, share tables of four and never overfill one."""

from __future__ import annotations

import psycopg

from tests.web.test_play_now import assert_shared, press_together


def test_people_pressing_at_once_on_two_processes_share_tables_of_four(cluster, pg_url):
    a, b = cluster("A"), cluster("B")
    codes = press_together([a.url, b.url], 10)
    assert_shared(codes, 10)
    with psycopg.connect(pg_url) as con:
        seats = con.execute(
            'SELECT table_id, count(*) FROM seat WHERE NOT "left" GROUP BY table_id'
        ).fetchall()
    assert sorted(n for _, n in seats) == sorted(codes.count(c) for c in set(codes))
    for server in (a, b):
        assert "Traceback" not in server.log_text()

"""Two server processes behind Debian's haproxy, run from the shipped deploy/haproxy.cfg
(benchmarks/proxy.py): every request and socket of a table reach one process, and a
game plays through the proxy. The same through nginx, run from deploy/nginx.conf."""

from __future__ import annotations

import socket
import subprocess
import time

import pytest
import redis

from benchmarks.proxy import SHIPPED, HAProxy, check, config, program
from tests.cluster import people
from tests.cluster.conftest import REDIS_URL
from tests.cluster.test_processes import receive_version, reveal, seat_table, stored
from tests.conftest import ROOT, free_port
from tests.web.live_helpers import CSRF

NGINX_SHIPPED = ROOT / "deploy" / "nginx.conf"


@pytest.fixture
def proxy(cluster, tmp_path):
    """haproxy in front of two processes, A and B; each answer names its process."""
    a, b = cluster("A", SKYMO_PROXY_HOPS="1"), cluster("B", SKYMO_PROXY_HOPS="1")
    started = HAProxy([f"127.0.0.1:{a.port}", f"127.0.0.1:{b.port}"], tmp_path, named=True)
    yield started.start()
    started.stop()


def test_haproxy_accepts_the_shipped_configuration():
    assert "Configuration file is valid" in check(SHIPPED)


def test_the_run_configuration_differs_from_the_shipped_one_only_by_address_and_servers():
    shipped = SHIPPED.read_text().splitlines()
    run = config(["127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7003"], "127.0.0.1:7000")
    run = run.splitlines()
    assert [line.strip() for line in run if line.strip().startswith("server ")] == [
        "server s1 127.0.0.1:7001 check",
        "server s2 127.0.0.1:7002 check",
        "server s3 127.0.0.1:7003 check",
    ]
    assert [line.strip() for line in run if line.strip().startswith("bind ")] == [
        "bind 127.0.0.1:7000"
    ]
    kept = [line for line in shipped if line.split()[:1] not in (["server"], ["bind"])]
    assert [line for line in run if line.split()[:1] not in (["server"], ["bind"])] == kept


def backend(head) -> str:
    """The process haproxy sent a request to (its test configuration names it); `head`:
    an answer's headers, or a socket's handshake headers (lower-cased names)."""
    named = [value for key, value in head.items() if key.lower() == "x-backend"]
    assert len(named) == 1, f"the answer does not name its process: {dict(head)}"
    return named[0]


def visit_table(host: people.Person, guest: people.Person) -> tuple[str, set[str]]:
    """A new table, its rules set, a guest seated, both sockets opened: the processes
    that answered each of those requests."""
    seen = set()
    status, head, _ = host.send_form("/tables", {"name": "Ann"})
    assert status == 303
    code = head["Location"].rsplit("/", 1)[1]
    host.code = code
    for browser, path, form in (
        (host, f"/t/{code}", None),
        (host, f"/t/{code}/rules", {"end_score": "10"}),
        (guest, f"/t/{code}", None),
        (guest, f"/t/{code}/join", {"name": "Bob"}),
        (guest, f"/t/{code}?v=0", None),
    ):
        if form is None:
            status, head, text = browser.request("GET", path)
            browser.csrf = CSRF.search(text).group(1)
        else:
            status, head, _ = browser.send_form(path, form)
        assert status in (200, 303), (path, status)
        seen.add(backend(head))
    guest.code = code
    for browser in (host, guest):
        ws = browser.socket()
        seen.add(backend(ws.headers))
        ws.close()
    return code, seen


def tables_by_process(url: str) -> dict[str, str]:
    """Tables made through the proxy at `url` until both processes have some: the
    process that answered every request and socket of each (one per table)."""
    tables: dict[str, str] = {}
    # Consistent hashing is not a coin toss per table, but a dozen random codes all on
    # one of two processes is most unlikely.
    for _ in range(20):
        host, guest = people.Person(url), people.Person(url)
        code, seen = visit_table(host, guest)
        assert len(seen) == 1, (code, seen)
        tables[code] = seen.pop()
        if len(set(tables.values())) == 2:
            break
    return tables


def test_every_request_and_socket_of_a_table_reach_one_process(proxy):
    tables = tables_by_process(proxy.url)
    assert set(tables.values()) == {"s1", "s2"}, tables


def test_a_game_plays_through_the_proxy_with_its_sockets_on_one_process(
    proxy, pg_url, redis_prefix
):
    ann, bob = people.Person(proxy.url), people.Person(proxy.url)
    code = seat_table(ann, bob, proxy, pg_url)
    sockets = [ann.socket(), bob.socket(), ann.socket()]
    try:
        for ws in sockets:
            receive_version(ws, 0, 3)
        # The table's sockets are held by one process (holders are named host.pid.random).
        holders = redis.Redis.from_url(REDIS_URL).zrange(f"{redis_prefix}at:{code}", 0, -1)
        assert len({h.decode().rsplit(".", 1)[0] for h in holders}) == 1, holders
        version = stored(pg_url, code)[1]
        assert ann.post(f"/t/{code}/start", {"version": str(version)})[0] == 303
        for ws in sockets:
            receive_version(ws, version + 1, 3)
        # The first flips, one each.
        assert reveal(ann, code, version + 1)[0] == 303
        assert reveal(bob, code, version + 2)[0] == 303
        for ws in sockets:
            receive_version(ws, version + 3, 3)
        assert stored(pg_url, code)[1:] == (version + 3, "playing")
    finally:
        for ws in sockets:
            ws.close()
    assert "Traceback" not in proxy.log_text()


def test_nginx_accepts_the_shipped_configuration(tmp_path):
    nginx = program("nginx")
    if nginx is None:
        pytest.skip("nginx is not installed (scripts/test installs Debian's nginx-light)")
    (tmp_path / "logs").mkdir()
    done = subprocess.run(
        [nginx, "-t", "-p", str(tmp_path), "-e", str(tmp_path / "error.log")]
        + ["-g", f"pid {tmp_path / 'nginx.pid'};", "-c", str(NGINX_SHIPPED)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "test is successful" in done.stderr


def nginx_config(servers: list[str], listen: str) -> str:
    """deploy/nginx.conf listening on `listen`, its upstream's servers `servers`, and
    every answer naming the server it came from (X-Backend)."""
    out: list[str] = []
    upstream = placed = False
    for line in NGINX_SHIPPED.read_text().splitlines():
        words = line.split()
        indent = line[: len(line) - len(line.lstrip())]
        upstream = (upstream or words[:1] == ["upstream"]) and words != ["}"]
        if upstream and words[:1] == ["server"]:
            if not placed:
                out += [f"{indent}server {server};" for server in servers]
                placed = True
        elif words[:1] == ["listen"]:
            out += [
                f"{indent}listen {listen};",
                f"{indent}add_header X-Backend $upstream_addr always;",
            ]
        else:
            out.append(line)
    assert placed, "deploy/nginx.conf has no upstream server"
    return "\n".join(out) + "\n"


@pytest.fixture
def nginx_proxy(cluster, tmp_path):
    """nginx in front of two processes, A and B; each answer names its process."""
    nginx = program("nginx")
    if nginx is None:
        pytest.skip("nginx is not installed (scripts/test installs Debian's nginx-light)")
    a, b = cluster("A", SKYMO_PROXY_HOPS="1"), cluster("B", SKYMO_PROXY_HOPS="1")
    port = free_port()
    path = tmp_path / "nginx.conf"
    path.write_text(
        nginx_config([f"127.0.0.1:{a.port}", f"127.0.0.1:{b.port}"], f"127.0.0.1:{port}")
    )
    (tmp_path / "logs").mkdir()
    proc = subprocess.Popen(
        [nginx, "-p", str(tmp_path), "-e", str(tmp_path / "error.log"), "-c", str(path)]
        + ["-g", f"daemon off; pid {tmp_path / 'nginx.pid'};"]
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            assert proc.poll() is None, (tmp_path / "error.log").read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "nginx did not start"
                time.sleep(0.05)
        yield a, b, f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


def test_through_nginx_every_request_and_socket_of_a_table_reach_one_process(nginx_proxy):
    a, b, url = nginx_proxy
    tables = tables_by_process(url)
    assert set(tables.values()) == {f"127.0.0.1:{a.port}", f"127.0.0.1:{b.port}"}, tables

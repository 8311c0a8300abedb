"""Debian's haproxy in front of server processes, run from the shipped deploy/haproxy.cfg
(benchmarks/modes.py and tests/cluster): only its `bind` address and its `server` lines
are replaced, so what runs is what is shipped.

    proxy = HAProxy(["127.0.0.1:8001", "127.0.0.1:8002"], folder).start()
    ...  # requests to proxy.url
    proxy.stop()
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "deploy" / "haproxy.cfg"
SECTION = re.compile(r"^(global|defaults|frontend|backend|listen)\b")
SERVER = re.compile(r"^(\s+)server\s+\S+\s+\S+(.*)$")
BIND = re.compile(r"^(\s+)bind\s")
# Names the server that answered, on every answer (a socket's 101 too): for the tests.
NAMED_ANSWERS = "http-response set-header X-Backend %s"


class ProxyError(RuntimeError):
    """haproxy is missing, refuses its configuration or does not start."""


def program(name: str) -> str | None:
    """A system program's path: Debian puts haproxy and nginx in /usr/sbin, which a
    user's PATH may lack."""
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")


def haproxy() -> str:
    found = program("haproxy")
    if found is None:
        raise ProxyError(
            "haproxy is not installed: scripts/test installs Debian's package "
            "(apt-get install haproxy)"
        )
    return found


def config(servers: list[str], bind: str, named: bool = False, shipped: Path = SHIPPED) -> str:
    """The shipped configuration listening on `bind`, its backend's servers `servers`
    (host:port; each keeps the shipped servers' options, e.g. their health check). With
    `named`, every answer names its server in an X-Backend header."""
    lines = shipped.read_text().splitlines()
    out: list[str] = []
    section = ""
    binds = placed = 0
    for line in lines:
        found = SECTION.match(line)
        if found:
            section = found.group(1)
        if section == "frontend" and BIND.match(line):
            binds += 1
            if binds == 1:
                out.append(f"{BIND.match(line).group(1)}bind {bind}")
            continue
        server = SERVER.match(line) if section == "backend" else None
        if server:
            if not placed:
                indent, options = server.groups()
                out += [f"{indent}server s{i} {a}{options}" for i, a in enumerate(servers, 1)]
                if named:
                    out.append(f"{indent}{NAMED_ANSWERS}")
            placed += 1
            continue
        out.append(line)
    if not binds or not placed:
        raise ProxyError(f"{shipped} has no frontend `bind` line or no backend `server` line")
    return "\n".join(out) + "\n"


def check(path: Path) -> str:
    """`haproxy -c -f path`: its report; ProxyError if it refuses the file."""
    done = subprocess.run([haproxy(), "-c", "-f", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        raise ProxyError(f"haproxy refuses {path}:\n{done.stdout}{done.stderr}")
    return done.stdout + done.stderr


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_answering(servers: list[str], timeout: float = 30) -> None:
    """Until every server (host:port) answers its home page: haproxy counts a server
    whose first health check fails as down until two checks pass (4 s)."""
    deadline = time.monotonic() + timeout
    for server in servers:
        while True:
            try:
                urllib.request.urlopen(f"http://{server}/", timeout=2).read()
                break
            except OSError as exc:
                if time.monotonic() > deadline:
                    raise ProxyError(f"{server} does not answer: {exc}") from None
                time.sleep(0.1)


class HAProxy:
    """haproxy in the foreground (-db) on a free loopback port, in front of `servers`;
    its configuration and log in `folder`."""

    def __init__(self, servers: list[str], folder: Path, named: bool = False):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.path = Path(folder) / "haproxy.cfg"
        self.path.write_text(config(servers, f"127.0.0.1:{self.port}", named))
        self.log_path = Path(folder) / "haproxy.log"
        self.proc: subprocess.Popen | None = None
        self.log = None

    def start(self, timeout: float = 10) -> HAProxy:
        check(self.path)
        self.log = open(self.log_path, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [haproxy(), "-f", str(self.path), "-db"], stdout=self.log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise ProxyError(f"haproxy did not start:\n{self.log_text()[-3000:]}")

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self.log is not None:
            self.log.close()
            self.log = None

"""The people of the load generator (benchmarks/load.py): each with a cookie session
and a push socket, playing through the real forms as htmx sends them; the tables they
sit at (push latency is measured there) and the figures they collect."""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import re
import sys
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import aiohttp

VERSION = re.compile(r'<section id="table"[^>]*data-version="(\d+)"')
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
PAGE = re.compile(r'"X-Skymo-Page": "([^"]+)"')  # a table page's id (htmx sends it)
STALE = "The table changed before your action arrived"
FORM = re.compile(r"<form\b[^>]*>.*?</form>", re.S)
ACTION = re.compile(r'action="([^"]+)"')
HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)"')
BUTTON_POS = re.compile(r'<button[^>]*name="pos" value="([^"]+)"')


@dataclass
class Stats:
    post: list[float] = field(default_factory=list)
    push: list[float] = field(default_factory=list)
    push_at: list[float] = field(default_factory=list)  # when each push sample arrived
    slowest_push: tuple = ()  # (seconds, table code, version, person): the max explained
    slow_posts: list = field(default_factory=list)  # a heap of the run's slowest moves
    other: list[float] = field(default_factory=list)
    moves: int = 0
    stale: int = 0
    errors: dict = field(default_factory=dict)
    seated_tables: int = 0
    failed_tables: int = 0

    def pushed(self, delay: float, when: float, code: str, version: int, person) -> None:
        self.push.append(delay)
        self.push_at.append(when)
        if not self.slowest_push or delay > self.slowest_push[0]:
            self.slowest_push = (delay, code, version, person.name)

    def slow_post(self, spent: float, sent: float, code: str, keep: int = 20) -> None:
        """Keep the `keep` slowest moves, with when each was sent (time.monotonic())
        and its table: where a burst of slow ones came from."""
        if len(self.slow_posts) < keep:
            heapq.heappush(self.slow_posts, (spent, sent, code))
        elif spent > self.slow_posts[0][0]:
            heapq.heapreplace(self.slow_posts, (spent, sent, code))

    def error(self, kind: str, detail: str = "") -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1
        if detail and self.errors[kind] <= 3:
            print(f"error {kind}: {detail[:200]}", file=sys.stderr)


@dataclass
class Table:
    code: str = ""
    # Push latency: a move's POST sent -> each other player has that version. Pushes
    # may arrive before the POST's answer says the move was accepted, so both sides
    # are kept: arrivals[version][person] = time, accepted[version] = (mover, sent).
    arrivals: dict = field(default_factory=dict)
    accepted: dict = field(default_factory=dict)
    people: list = field(default_factory=list)
    over: bool = False  # its people have gone (soak runs end tables)

    def arrived(self, version: int, person, when: float, run) -> None:
        mover = self.accepted.get(version)
        if mover is not None:
            if mover[0] is not person and run.counts(mover[1]):
                run.stats.pushed(when - mover[1], when, self.code, version, person)
            return
        self.arrivals.setdefault(version, {})[person] = when
        for old in [v for v in self.arrivals if v < version - 100]:
            del self.arrivals[old]

    def moved(self, version: int, mover, sent: float, run) -> None:
        self.accepted[version] = (mover, sent)
        for person, when in self.arrivals.pop(version, {}).items():
            if person is not mover and run.counts(sent):
                run.stats.pushed(when - sent, when, self.code, version, person)
        for old in [v for v in self.accepted if v < version - 100]:
            del self.accepted[old]


class Person:
    def __init__(self, run, table: Table, name: str, connector):
        self.run = run
        self.table = table
        self.name = name
        # connector None: this person's own pool, as each browser keeps its own
        # connections (up to 6 to one host, as browsers do).
        own = connector is None
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=6) if own else connector,
            connector_owner=own,
            cookie_jar=aiohttp.CookieJar(unsafe=True),
        )
        self.csrf = ""
        self.page = ""  # the id of the table page this person's socket belongs to
        self.html = ""
        self.version = -1
        self.seen = -1  # the newest version pushed to this person's socket
        self.changed = asyncio.Event()
        self.ws = None

    @property
    def base(self) -> str:
        return self.run.url_for(self.table.code)

    def take(self, html: str) -> None:
        """Keep the newest #table seen (a push or an answer)."""
        found = VERSION.search(html)
        if found and int(found.group(1)) >= self.version:
            self.version = int(found.group(1))
            self.html = html
            self.changed.set()

    async def get(self, path: str, *, htmx=False) -> str:
        headers = {"HX-Request": "true"} if htmx else {}
        async with self.session.get(self.base + path, headers=headers) as r:
            text = await r.text()
            if r.status >= 400:
                raise RuntimeError(f"GET {path}: {r.status}")
        found = CSRF.search(text)
        if found:
            self.csrf = found.group(1)
        found = PAGE.search(text) if not self.page and not htmx else None
        if found:  # the page the socket opens for (later GETs only read the version)
            self.page = found.group(1)
        return text

    async def post(self, path: str, data: dict, *, htmx=True) -> tuple[int, str, dict]:
        headers = {"X-CSRF-Token": self.csrf}
        if htmx:
            headers["HX-Request"] = "true"
            if self.page:  # as htmx sends it (hx-headers on the page's #live)
                headers["X-Skymo-Page"] = self.page
        async with self.session.post(
            self.base + path,
            data={"csrf_token": self.csrf, **data},
            headers=headers,
            allow_redirects=False,
        ) as r:
            return r.status, await r.text(), dict(r.headers)

    async def listen(self) -> None:
        stats = self.run.stats
        url = self.base.replace("http", "ws", 1) + f"/t/{self.table.code}/ws?p={self.page}"
        try:
            async with self.session.ws_connect(
                url, heartbeat=None, max_msg_size=0, compress=15 if self.run.args.deflate else 0
            ) as ws:
                self.ws = ws
                async for msg in ws:
                    if msg.type != aiohttp.WSMsgType.TEXT:
                        break
                    now = time.monotonic()
                    found = VERSION.search(msg.data)
                    if not found:
                        continue
                    v = int(found.group(1))
                    if v > self.seen:
                        for version in range(max(self.seen + 1, v - 50), v + 1):
                            self.table.arrived(version, self, now, self.run)
                        self.seen = v
                    self.take(msg.data)
        except (TimeoutError, aiohttp.ClientError, ConnectionError) as exc:
            if not self.gone:
                stats.error("socket", repr(exc))
            return
        if not self.gone:
            stats.error("socket closed", self.name)

    @property
    def gone(self) -> bool:
        return self.run.stopping or self.table.over

    async def think(self) -> None:
        mean = self.run.args.think
        if mean > 0:
            await asyncio.sleep(self.run.rng.expovariate(1 / mean))

    async def play(self) -> None:
        """Act whenever the newest table offers something, until the run stops."""
        while not self.gone:
            step = self.next_step()
            if step is None:
                self.changed.clear()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self.changed.wait(), 5)
                continue
            seen = self.version
            await self.think()
            if self.gone:
                return
            if self.version != seen:
                continue  # the table moved on while thinking: look again
            await self.do(step)

    def next_step(self):
        html = self.html
        rng = self.run.rng
        # Now and then the other ways to play a turn, as the page's links offer them.
        if 'href="?mode=flip"' in html and rng.random() < 0.3:
            return ("mode", "flip")
        if 'href="?mode=take"' in html and rng.random() < self.run.args.take:
            return ("mode", "take")
        for form in FORM.findall(html):
            action = ACTION.search(form)
            if not action:
                continue
            path = urlsplit(action.group(1)).path  # pushes may carry absolute URLs
            fields = dict(HIDDEN.findall(form))
            if path.endswith("/move"):
                positions = BUTTON_POS.findall(form)
                kind = fields.get("type")
                if positions:
                    return ("move", path, fields, positions)
                if kind in ("draw", "discard_drawn"):
                    return ("move", path, fields, None)
            elif path.endswith(("/next-round", "/rematch")) or path.endswith("/rematch/start"):
                return ("vote", path, fields, None)
        return None

    async def do(self, step) -> None:
        stats, run = self.run.stats, self.run
        if step[0] == "mode":
            start = time.monotonic()
            try:
                html = await self.get(f"/t/{self.table.code}?mode={step[1]}", htmx=True)
            except Exception as exc:
                if not self.gone:  # else cut by this client closing its sessions
                    stats.error("GET mode", repr(exc))
                return
            if run.counts(start):
                stats.other.append(time.monotonic() - start)
            self.take(html)
            return
        _, path, fields, positions = step
        data = dict(fields)
        data.pop("csrf_token", None)
        if positions:
            data["pos"] = run.rng.choice(positions)
        version = int(data.get("version", self.version))
        start = time.monotonic()
        try:
            status, text, _ = await self.post(path, data)
        except Exception as exc:
            if not self.gone:
                stats.error("POST", repr(exc))
            return
        spent = time.monotonic() - start
        if status >= 400 and STALE not in text:
            if 'role="alert"' in text and status == 409:
                stats.stale += 1  # lost a race (a vote, the round ended meanwhile)
            else:
                stats.error(f"HTTP {status}", text[:200])
        elif STALE in text:
            stats.stale += 1
        elif path.endswith("/move"):
            stats.slow_post(spent, start, self.table.code)  # the whole run's
            if run.counts(start):
                stats.moves += 1
                stats.post.append(spent)
            self.table.moved(version + 1, self, start, run)
        elif run.counts(start):
            stats.other.append(spent)
        self.take(text)

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
        await self.session.close()

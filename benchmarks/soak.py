"""Skymo memory soak: tables come and go for --minutes while the server's RSS is sampled.

Built on benchmarks/load.py (same people, same server). --tables tables are kept open at
once; each lives for a random time (mean --lifetime seconds) and then ends one of three
ways: its people leave the game one by one ("Leave the game": the game finishes), they
just close their pages (abandoned: the server plays for them, then they forfeit), or the
host leaves the lobby before starting (the table closes). A new table takes its place.
Games are short (--end-score) so many also finish and start again by themselves.

The server's RSS is printed every --every seconds; at the end, the spread of the samples
after the warm-up (the first third of the run) and over the last half, and the
process's own counts of what it keeps per table (from /debug is not available: the
figures are RSS only).

Usage:  .venv/bin/python benchmarks/soak.py --minutes 20 --tables 100
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import Person, Run, Table, memory, player_options  # noqa: E402


class Soak(Run):
    async def life(self, connector, slot: int) -> None:
        """Tables for one slot, one after another, until the run ends."""
        args = self.args
        while not self.stopping:
            table = Table()
            try:
                seated = await self.seat(table, connector, 0)
                lifetime = self.rng.expovariate(1 / args.lifetime)
                end = time.monotonic() + lifetime
                while seated and time.monotonic() < end and not self.stopping:
                    await asyncio.sleep(1)
                table.over = True
                how = self.rng.random()
                with contextlib.suppress(Exception):
                    if seated and how < 0.4:  # everybody leaves: the game finishes
                        for p in table.people:
                            await p.post(f"/t/{table.code}/leave", {})
                        self.ended["finished"] += 1
                    elif seated:
                        self.ended["abandoned"] += 1
            finally:  # also when the run's end cancels this: each person's own pool
                await asyncio.gather(*(p.close() for p in table.people))
            self.tables_made += 1
            if not seated:
                await asyncio.sleep(1)
            # Now and then a lobby nobody starts: the host leaves it.
            if self.rng.random() < 0.1 and not self.stopping:
                await self.lobby_left(connector)

    async def lobby_left(self, connector) -> None:
        table = Table()
        host = Person(self, table, "Host", connector)
        try:
            await host.get("/")
            status, _, headers = await host.post("/tables", {"name": "Host"}, htmx=False)
            code = headers["Location"].rstrip("/").rsplit("/", 1)[1]
            page = await host.get(f"/t/{code}")
            import re

            seat = re.search(r"/t/\w+/seats/(\d+)/remove", page)
            if seat:
                await host.post(f"/t/{code}/seats/{seat.group(1)}/remove", {})
            self.ended["lobby"] += 1
        except Exception as exc:
            self.stats.error("lobby", repr(exc))
        finally:
            await host.session.close()

    async def main(self) -> dict:
        args = self.args
        self.ended = {"finished": 0, "abandoned": 0, "lobby": 0}
        self.tables_made = 0
        if self.url is None:
            self.start_server()
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector, connector_owner=False) as s:
            await self.wait_ready(s)
        pid = self.worker_pid()
        load_before = os.getloadavg()
        self.measuring = True
        slots = [asyncio.create_task(self.life(connector, i)) for i in range(args.tables)]
        start = time.monotonic()
        samples = []
        while time.monotonic() - start < args.minutes * 60:
            await asyncio.sleep(args.every)
            rss, _ = memory(pid)
            t = time.monotonic() - start
            samples.append((round(t), round(rss / 1024, 1)))
            print(
                f"{t / 60:5.1f} min  RSS {rss / 1024:6.1f} MiB  tables made {self.tables_made}"
                f"  ended {self.ended}  moves {self.stats.moves}  errors"
                f" {sum(self.stats.errors.values())}  load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
        self.stopping = True
        for task in slots:
            task.cancel()
        await asyncio.gather(*slots, return_exceptions=True)
        await connector.close()
        total = args.minutes * 60
        warm = [r for t, r in samples if t >= total / 3]
        last = [r for t, r in samples if t >= total / 2]

        def spread(values):
            if not values:
                return None
            mid = (max(values) + min(values)) / 2
            return {
                "min": min(values),
                "max": max(values),
                "plus_minus_pct": round((max(values) - min(values)) / 2 / mid * 100, 1),
            }

        return {
            "minutes": args.minutes,
            "tables_at_once": args.tables,
            "tables_made": self.tables_made,
            "ended": self.ended,
            "moves": self.stats.moves,
            "errors": self.stats.errors,
            "rss_samples_mib": samples,
            "after_warmup": spread(warm),
            "last_half": spread(last),
            "load_average_before": load_before,
            "load_average_after": os.getloadavg(),
        }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--tables", type=int, default=100, help="tables open at once")
    parser.add_argument("--lifetime", type=float, default=60.0, help="mean table life, s")
    parser.add_argument("--every", type=float, default=30.0, help="RSS sample period, s")
    player_options(parser, think=2.0, end_score="20", seed=2)
    args = parser.parse_args(argv)
    run = Soak(args)
    try:
        result = asyncio.run(run.main())
    finally:
        run.stop_server()
    print(json.dumps({k: v for k, v in result.items() if k != "rss_samples_mib"}, indent=1))


if __name__ == "__main__":
    main()

"""How many requests a player's page makes per move, played in Chromium.

A table of one person and one greedy bot on a server started from --root (a checkout:
compare two by running this on each), played by clicks until the game ends, with the
browser tests' player (tests/e2e/e2e_helpers.py: every kind of move in turn: take the
discard pile, draw then discard and turn a card over, draw and keep). Every request the
page makes to the server is counted, static files aside, by the kind of move it was
part of. Each request is a full round trip and a rendering of the table by the server:
fewer requests per move mean less waiting on a slow network and less server work.

    .venv/bin/python benchmarks/requests_per_move.py [--root PATH] [--games 2]
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from tests.conftest import LiveServer  # noqa: E402
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tests.e2e.e2e_helpers import (  # noqa: E402
    RESULTS,
    Player,
    act,
    add_bot,
    create_table,
    version,
    wait_version,
)


def play(browser, url: str, seed: int) -> dict[str, list[int]]:
    """One game: requests per move, by kind of move."""
    page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    create_table(page, url, "Ann")
    add_bot(page)
    page.get_by_role("button", name="Start the game").click()
    page.locator("#table .board").wait_for()
    made: list[str] = []
    page.on(
        "request",
        lambda r: None if "/static/" in r.url or r.url.endswith("sw.js") else made.append(r.url),
    )
    player = Player(seed)
    found = collections.defaultdict(list)
    for _ in range(400):
        if page.locator(RESULTS).count():
            break
        before = len(made)
        kind = act(page, player)
        if kind is None:
            # A bot's move, or the next round starting by itself.
            try:
                wait_version(page, version(page) + 1, timeout=30_000)
            except Exception:
                print("stalled at:", page.locator("#table").inner_text()[:300], file=sys.stderr)
                raise
            continue
        found[kind].append(len(made) - before)
    page.context.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=HERE)
    parser.add_argument("--games", type=int, default=2)
    args = parser.parse_args()
    server = LiveServer(Path(tempfile.mkdtemp()), root=args.root.resolve()).start()
    totals: dict[str, list[int]] = collections.defaultdict(list)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for game in range(args.games):
                for kind, counts in play(browser, server.url, seed=game).items():
                    totals[kind] += counts
            browser.close()
    finally:
        server.stop()
    every = [n for counts in totals.values() for n in counts]
    print(f"{args.root}: {len(every)} moves in {args.games} games")
    for kind, counts in sorted(totals.items()):
        print(f"  {kind:24} {len(counts):4} moves  {statistics.mean(counts):.2f} requests each")
    print(f"  {'every move':24} {len(every):4} moves  {statistics.mean(every):.2f} requests each")


if __name__ == "__main__":
    main()

"""The table page's weight: the page as a player sees it mid-game at a full table, with
every file it loads, gzipped as the server sends it, within the 30 KB budget."""

from __future__ import annotations

import random
import re

from tests.web.web_helpers import Player, game_of, seat_table, start

BUDGET = 30 * 1024
LINKED = re.compile(r'<(?:script|link)[^>]+(?:src|href)="(/[^"]+)"')


def weigh(client, path: str) -> int:
    response = client.get(path, headers={"Accept-Encoding": "gzip"})
    assert response.status_code == 200, path
    return len(response.data)  # what travels: gzipped where the server compresses it


def test_the_table_page_with_every_asset_is_within_budget(browser, app):
    people = seat_table(
        browser, ("Ann", "Bob", "Cat", "Dan"), bots=("greedy",) * 4, initial_flips=0
    )
    start(people[0])
    code = people[0].code
    rng = random.Random(3)
    players = [Player(b, b.name, rng) for b in people]
    for _ in range(12):  # a few turns: the move log fills, cards are face up
        for p in players:
            p.act()
    assert game_of(code).phase == "play"
    # Every player's page: the one whose turn it is holds the turn's other modes too.
    for person in people:
        page = person.client.get(f"/t/{code}", headers={"Accept-Encoding": "gzip"})
        assert page.headers.get("Content-Encoding") == "gzip"
        html = person.page()
        assets = LINKED.findall(html)
        kinds = {a.split("?")[0].rsplit(".", 1)[-1] for a in assets}
        assert {"css", "js", "png", "webmanifest"} <= kinds, assets
        sizes = {"page": len(page.data)} | {a: weigh(person.client, a) for a in assets}
        total = sum(sizes.values())
        print(f"{person.name}'s table page, gzipped bytes:", sizes, "total", total)
        assert total <= BUDGET, (person.name, sizes)


def test_the_lesson_page_with_every_asset_is_within_budget(browser):
    ann = browser()
    response = ann.post("/learn", {"name": "Ann"})
    code = response.headers["Location"].rsplit("/", 1)[1]
    page = ann.client.get(f"/t/{code}", headers={"Accept-Encoding": "gzip"})
    html = ann.get(f"/t/{code}").data.decode()
    assets = LINKED.findall(html)
    assert any("learn-1" in a for a in assets)  # its own styles, on its page only
    sizes = {"page": len(page.data)} | {a: weigh(ann.client, a) for a in assets}
    total = sum(sizes.values())
    print("the lesson's table page, gzipped bytes:", sizes, "total", total)
    assert total <= BUDGET, sizes

"""The whole table on one screen, measured: on a phone (390×844, and 360×740 with up to 4
players) and a desktop (1280×800), the banner, the piles and the turn's buttons, every
card of your grid and every other player's box lie inside the viewport without
scrolling, in every phase of a round: setup, turns, last turns, the round's results and
the game's (the results and their button in view). Other players' names are not cut,
their face-up cards readable, your cards and buttons at least 44 px, and your grid does
not move when a push arrives.

One game per player count; the same player looks at it on one page per screen size (a
second and third browser with the host's cookies), the phone page making the moves."""

from __future__ import annotations

import time

import pytest

from tests.e2e.e2e_helpers import (
    DESKTOP,
    PHONE,
    RESULTS,
    add_bot,
    click,
    click_and_wait_change,
    create_table,
    horizontal_overflow,
    open_rules,
    out_of_view,
    set_rules,
    settle,
    shoot,
    small_targets,
    start,
    sync,
    version,
    wait_version,
)

pytestmark = pytest.mark.e2e

SMALL_PHONE = {**PHONE, "viewport": {"width": 360, "height": 740}}
VIEWS = {"phone": PHONE, "phone360": SMALL_PHONE, "desktop": DESKTOP}
# Bots with the longest names of their kinds; greedy and strong end rounds with low scores.
BOTS = ("greedy", "strong", "greedy", "strong", "greedy", "strong", "greedy")

BOARD = [".banner", ".piles", ".piles .card", ".actions", ".mine-wrap .grid .card", ".opponent"]
TURN = [*BOARD, ".actions a, .actions button"]
ROUND = [".banner", ".results:has(#round-h)", ".results:has(#round-h) button.primary"]
FINAL = [".banner", ".results.final", ".results.final button.primary"]
# On a desktop the grids stay in view beside the results.
GRIDS = (".mine-wrap .grid .card", ".opponent")

# What a person must be able to read in the other players' boxes.
READABLE = """() => {
  const problems = [];
  for (const name of document.querySelectorAll('.opponent .oname'))
    if (name.scrollWidth > name.clientWidth + 0.5) problems.push('name cut: ' + name.textContent);
  for (const card of document.querySelectorAll('.opponent .card:not(.back):not(.gone)')) {
    const px = parseFloat(getComputedStyle(card).fontSize);
    if (px < 11) { problems.push(`an opponent's card value at ${px}px`); break; }
  }
  return problems;
}"""
MINE_TOP = """() => [document.querySelector('.mine-wrap').getBoundingClientRect().top + scrollY,
                    document.querySelector('.board').className]"""
HEIGHT = "() => document.documentElement.scrollHeight"


@pytest.fixture
def server_env():
    # A round's results stay until the test goes on (no timer starts the next round).
    return {"SKYMO_NEXT_ROUND_SECONDS": "600", "SKYMO_BOT_DELAY": "0.1"}


class Table:
    """The host's pages, one per screen size, and what was found on them."""

    def __init__(self, pages: dict, players: int, screenshots):
        self.pages, self.players, self.screenshots = pages, players, screenshots
        self.problems: list[str] = []
        self.heights: dict[str, int] = {}
        self.tops: dict[str, list[float]] = {size: [] for size in pages}
        self.host = pages["phone"]

    def check(self, phase: str, required: list[str], on_desktop: tuple = ()) -> None:
        """Every element `required` selects is in view on every page, at the top of the
        page (and those `on_desktop` selects, on the desktop)."""
        for size, page in self.pages.items():
            wanted = [*required, *on_desktop] if size == "desktop" else required
            sync([page], version(self.host))
            settle(page)
            page.evaluate("window.scrollTo(0, 0)")
            where = f"{self.players} players, {phase}, {size}"
            found = out_of_view(page, wanted) + page.evaluate(READABLE) + small_targets(page)
            if horizontal_overflow(page):
                found.append("wider than the screen")
            self.problems += [f"{where}: {p}" for p in found]
            self.heights[f"{phase} {size}"] = page.evaluate(HEIGHT)
            shoot(page, self.screenshots, f"one-screen-{self.players}-{phase}", size)

    def mark_grid(self) -> None:
        """Where your grid is now, on every page up to date with the host's, while the
        round is played (a bot may end it meanwhile: its results are laid out apart)."""
        for size, page in self.pages.items():
            sync([page], version(self.host))
            settle(page)
            top, board = page.evaluate(MINE_TOP)
            if "phase-play" in board:
                self.tops[size].append(round(top, 1))

    def steady_grids(self) -> list[str]:
        return [
            f"{self.players} players, {size}: your grid moved between pushes: {sorted(set(tops))}"
            for size, tops in self.tops.items()
            if max(tops) - min(tops) > 1
        ]


def open_views(host_context, host, new_context, players: int) -> dict:
    pages = {"phone": host}
    for size in ("phone360", "desktop") if players <= 4 else ("desktop",):
        page = new_context(**VIEWS[size], storage_state=host_context.storage_state()).new_page()
        page.goto(host.url)
        settle(page)
        pages[size] = page
    return pages


def my_turn(page) -> bool:
    settle(page)
    return bool(page.get_by_role("button", name="Draw a card", exact=True).count())


def wait_for_a_move(page, seen: int) -> None:
    """Wait for a move after version `seen` (read before deciding to wait: a push may
    come in between)."""
    wait_version(page, seen + 1, timeout=20_000)


def turn_my_cards(page) -> None:
    for _ in range(2):
        click_and_wait_change(page, page.locator("form.act-reveal button.card.back").first)


def drawn_value(page) -> int:
    return int(page.locator(".pile.drawn .card").inner_text())


def play_slowly(table: Table, seen: set) -> None:
    """A round in which you never turn a card (a bot ends it): draw and keep the card in
    place of a face-up one. Checks your turn, a drawn card and a last turn, once each."""
    host = table.host
    deadline = time.monotonic() + 240
    while not host.locator("#round-h").count():
        assert time.monotonic() < deadline, "the round did not end"
        seen_version = version(host)
        if not my_turn(host):
            table.mark_grid()
            wait_for_a_move(host, seen_version)
            continue
        last = bool(host.locator(".banner.tone-last").count())
        if last and "last" not in seen:
            table.check("last", TURN)
            seen.add("last")
        elif not last and "play" not in seen:
            table.check("play", TURN)
            seen.add("play")
        table.mark_grid()
        click_and_wait_change(host, host.get_by_role("button", name="Draw a card", exact=True))
        if "drawn" not in seen:
            table.check("drawn", TURN)
            seen.add("drawn")
        table.mark_grid()
        face_up = host.locator("form.act-keep_drawn button.card:not(.back)")
        click_and_wait_change(host, face_up.first)
        if not host.locator("#round-h").count():
            table.mark_grid()


def rush(host) -> None:
    """Until the game is over: turn a card every turn, keeping high cards, so that you end
    the round with a high score (and the ender's penalty ends the game)."""
    deadline = time.monotonic() + 240
    while not host.locator(RESULTS).count():
        assert time.monotonic() < deadline, "the game did not end"
        settle(host)
        seen_version = version(host)
        if host.locator("form.act-reveal").count():
            turn_my_cards(host)
        elif host.get_by_role("button", name="Next round").count():
            click_and_wait_change(host, host.get_by_role("button", name="Next round"))
        elif my_turn(host):
            click_and_wait_change(host, host.get_by_role("button", name="Draw a card", exact=True))
            if drawn_value(host) >= 5:
                form = host.locator("form.act-keep_drawn")
            else:
                click(host, host.get_by_role("link", name="turn a card over"))
                form = host.locator("form.act-discard_drawn")
            click_and_wait_change(host, form.locator("button.card.back").first)
        elif not host.locator(RESULTS).count():
            wait_for_a_move(host, seen_version)


@pytest.mark.parametrize("players", [2, 4, 8])
def test_the_table_fits_one_screen(server, new_context, screenshots, players):
    host_context = new_context(**PHONE)
    host = host_context.new_page()
    create_table(host, server.url, "Benedikt")
    # The game ends when someone reaches 300: only an ender with a high score does, by
    # the ender's penalty (×5, +50), and you only end the second round.
    open_rules(host)
    host.locator("#rules-form").get_by_label("Ender's penalty").select_option("both")
    set_rules(host, **{"End score": "300", "Multiplier": "5", "Points added": "50"})
    for kind in BOTS[: players - 1]:
        add_bot(host, kind)
    start(host)
    table = Table(open_views(host_context, host, new_context, players), players, screenshots)

    table.check("setup", BOARD)
    turn_my_cards(host)
    seen: set[str] = set()
    play_slowly(table, seen)
    assert seen == {"play", "drawn", "last"}, seen
    assert not host.locator(RESULTS).count(), "the first round ended the game"
    table.check("round", ROUND, GRIDS)
    click_and_wait_change(host, host.get_by_role("button", name="Next round"))
    rush(host)
    table.check("final", FINAL, GRIDS)

    print(f"\n{players} players, page heights: {table.heights}")
    problems = table.problems + table.steady_grids()
    assert not problems, "\n".join(problems)

"""No face-down value, no draw-pile card and no other player's drawn card may reach a
browser: not in a page, not in an htmx partial, not in a socket message.

Whole games are played (3 people, a bot, a spectator watching) and every HTML each of
them receives is scanned against the engine state loaded from the database at that
moment (secrecy_helpers.scan). Socket messages are captured by registering one connection
per seat with the real hub: every push the service makes goes through the real
renderer to them. The last tests show the scanner does catch leaks."""

from __future__ import annotations

import json
import logging
import random
import secrets
from types import SimpleNamespace

import pytest

from app import tables
from app.engine import DOWN, view
from app.storage.models import Table
from app.web import presenter
from tests.web.secrecy_helpers import scan
from tests.web.web_helpers import (
    Player,
    each,
    game_of,
    parse,
    play_until,
    seat_of,
    seat_table,
    start,
    table_row,
    vote_next_round,
    whose_turn,
)


def state_now(code: str):
    table = Table.get(Table.code == code)
    game = tables.load_game(table)
    return game, table.version


@pytest.fixture
def fixed_seed(monkeypatch):
    """Games dealt from a known seed (the only use of secrets.token_hex in the service)."""

    def use(seed: str):
        fake = SimpleNamespace(
            token_hex=lambda n=8: seed,
            token_urlsafe=secrets.token_urlsafe,
            choice=secrets.choice,
        )
        monkeypatch.setattr(tables.playing, "secrets", fake)

    return use


GAMES = [
    ("secrecy-one", {"bots": ("strong",)}),
    ("secrecy-two", {"bots": ("greedy",), "rows": 2, "cols": 3, "clear_rows": "on"}),
    ("secrecy-three", {"bots": ("random",), "rows": 2, "end_score": 25, "reseat": "round"}),
]


@pytest.mark.parametrize("seed, rules", GAMES, ids=[g[0] for g in GAMES])
def test_no_secret_in_any_page_partial_or_push(
    app, browser, fixed_seed, sockets, caplog, seed, rules
):
    fixed_seed(seed)
    rules = {"end_score": 10, "initial_flips": 2, **rules}
    people = seat_table(browser, ("Ann", "Bob", "Cat"), **rules)
    code = people[0].code
    rng = random.Random(seed)
    players = [Player(b, b.name, rng, htmx=i == 1) for i, b in enumerate(people)]
    viewers = {p.name: seat_of(code, p.name).player_id for p in players}
    watcher = Player(browser(), "Watcher", rng)
    watcher.b.code = code
    problems: list[str] = []
    received = {"pages": 0, "pushes": 0, "moves": 0}

    def checker(who, viewer):
        def check(html, doc=None):
            try:
                game, version = state_now(code)
                found = scan(html, game, viewer, version, doc)
            except Exception as exc:  # the hub swallows errors of a socket's send
                found = [repr(exc)]
            received["pages" if who != "push" else "pushes"] += 1
            if found:
                problems.append(f"{who} ({viewer}): {found}")

        return check

    # Everyone's socket: the pushes go through the real hub and renderer.
    for p in players:
        p.get()  # the session's CSRF token, as the socket would carry it
        seat = seat_of(code, p.name)
        sockets(code, seat.id, p.b.csrf, checker("push", viewers[p.name]))
    sockets(code, None, "", checker("push", None))

    start(people[0])
    for p in players:
        p.on_html = checker(p.name, viewers[p.name])
    watcher.on_html = checker("spectator", None)

    def after_each_move():
        received["moves"] += 1
        watcher.get(htmx=received["moves"] % 2 == 0)
        assert not problems, problems[:3]

    rounds = 1
    while play_until(players, after=after_each_move) != "game_over":
        vote_next_round(players)
        rounds += 1
    for p in players:
        p.get()
    assert not problems, problems[:3]
    # No push was lost to a failing render (the hub logs those and sends nothing).
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    game = game_of(code)
    assert game.phase == "game_over" and game.seed == seed
    # Enough was seen to mean something: every move pushed to all four sockets.
    assert received["moves"] > 20
    assert received["pushes"] >= 4 * received["moves"]
    assert received["pages"] >= 2 * received["moves"]


def test_the_drawn_card_is_shown_to_the_drawer_only(browser, sockets):
    people = seat_table(browser, ("Ann", "Bob", "Cat"), initial_flips=0)
    code = people[0].code
    pushed = {}
    for b in people:
        b.get(f"/t/{code}")
        seat = seat_of(code, b.name)
        pushed[b.name] = []
        sockets(code, seat.id, b.csrf, pushed[b.name].append)
    start(people[0])
    drawer, others = whose_turn(code, people)
    for name in pushed:
        pushed[name].clear()
    assert drawer.move("draw").status_code == 303
    drawn = game_of(code).round.drawn
    label = f"Your drawn card: {drawn}"
    mine = parse(drawer.page())
    assert [n.attrs["aria-label"] for n in mine.find_all(cls="lifted")] == [label]
    (push,) = pushed[drawer.name]
    assert label in push
    for b in others:
        (push,) = pushed[b.name]
        for html in (b.page(), push):
            doc = parse(html)
            assert "Your drawn card" not in html
            hidden = doc.find("span", cls="lifted")
            assert hidden.attrs["aria-label"] == "A drawn card, hidden from you"
            assert hidden.text() == "" and "back" in hidden.classes
            banner = doc.find("p", cls="banner").text()
            assert banner == f"{drawer.name} is choosing where to put a drawn card."
            game, version = state_now(code)
            assert scan(html, game, seat_of(code, b.name).player_id, version) == []


# ----- the scanner catches leaks ---------------------------------------------------------------
@pytest.fixture
def drawn_game(browser, fixed_seed):
    """Ann and Bob in play, the one whose turn it is has drawn a card."""
    fixed_seed("leak-check")
    ann, bob = seat_table(browser, ("Ann", "Bob"), initial_flips=2)
    start(ann)
    for b in (ann, bob):
        assert b.move("reveal", (0, 0)).status_code == 303
        assert b.move("reveal", (1, 1)).status_code == 303
    drawer, (other,) = whose_turn(ann.code, [ann, bob])
    assert drawer.move("draw").status_code == 303
    return drawer, other


def _pid(b):
    return seat_of(b.code, b.name).player_id


def test_scanner_passes_the_real_pages(drawn_game):
    drawer, other = drawn_game
    game, version = state_now(drawer.code)
    for b in (drawer, other):
        for query in ("", "?mode=flip"):
            html = b.get(f"/t/{b.code}{query}").data.decode()
            assert scan(html, game, _pid(b), version) == []


def test_scanner_flags_a_face_down_value(drawn_game, monkeypatch):
    drawer, other = drawn_game

    def leaky_view(game, player_id):
        v = json.loads(json.dumps(view(game, player_id)))  # a view is read-only
        for pid, rows in v["round"]["grids"].items():
            if pid == player_id:
                continue
            grid = game.round.grids[pid]
            for i, s in enumerate(grid.state):
                if s == DOWN:
                    r, c = divmod(i, grid.cols)
                    rows[r][c] = {"state": "up", "value": grid.values[i]}
                    return v
        return v

    monkeypatch.setattr(presenter, "view", leaky_view)
    game, version = state_now(drawer.code)
    html = other.page()
    found = scan(html, game, _pid(other), version)
    assert any("on a hidden card" in p for p in found), found


def test_scanner_flags_a_drawn_card_shown_to_the_others(drawn_game, monkeypatch):
    drawer, other = drawn_game

    def leaky_view(game, player_id):
        v = json.loads(json.dumps(view(game, player_id)))  # a view is read-only
        v["round"]["drawn"] = game.round.drawn
        return v

    monkeypatch.setattr(presenter, "view", leaky_view)
    game, version = state_now(drawer.code)
    found = scan(other.page(), game, _pid(other), version)
    assert any("is shown a drawn card" in p for p in found), found


@each(
    "mutate, expected",
    [
        (lambda h, g: h.replace('class="card back"', 'class="card back v-high"', 1), "colour"),
        (lambda h, g: h.replace(": face down", ": face down (7)", 1), "label"),
        (lambda h, g: h.replace('role="img"', 'role="img" data-v="3"', 1), "data attribute"),
        (lambda h, g: h.replace("</main>", _hidden(g) + "</main>"), "hidden input"),
        (lambda h, g: h.replace("</main>", f"<!-- {_pile(g)} --></main>"), "comment"),
        (lambda h, g: h.replace("<main ", f'<main title="{_pile(g)}" ', 1), "draw pile"),
        (lambda h, g: h.replace("</main>", "<script>var s=1</script></main>"), "inline script"),
        (lambda h, g: h.replace("</main>", f"<p>{g.seed}</p></main>"), "seed"),
    ],
)
def test_scanner_flags_leaks_in_the_markup(drawn_game, mutate, expected):
    drawer, other = drawn_game
    game, version = state_now(drawer.code)
    html = other.page()
    assert scan(html, game, _pid(other), version) == []
    leaked = mutate(html, game)
    assert leaked != html
    found = scan(leaked, game, _pid(other), version)
    assert any(expected in p for p in found), found


def _pile(game) -> str:
    return ", ".join(str(v) for v in reversed(game.round.draw_pile))


def _hidden(game) -> str:
    return f'<input type="hidden" name="next_card" value="{game.round.draw_pile[-1]}">'


def test_the_spectator_sees_no_grid_value_before_a_flip(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    start(ann)
    watcher = browser()
    html = watcher.get(f"/t/{ann.code}").data.decode()
    doc = parse(html)
    cards = [n for g in doc.find_all(cls="grid") for n in g.iter() if "card" in n.classes]
    assert len(cards) == 24
    assert all("back" in c.classes and c.text() == "" for c in cards)
    assert all(c.attrs["aria-label"].endswith(": face down") for c in cards)
    game, version = state_now(ann.code)
    assert scan(html, game, None, version) == []
    assert table_row(ann.code).status == Table.PLAYING

"""Reactions (app/web/reactions.py): a fixed set, shown on the sender's area to every
socket at the table for a few seconds, rate-limited per seat, never free text."""

from __future__ import annotations

import pytest

from app.live.hub import Connection
from app.web import reactions
from tests.web.web_helpers import parse, seat_of, seat_table, start


@pytest.fixture
def game(hub, browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    start(ann)
    received = {"Ann": [], "Bob": []}
    conns = [
        Connection(code=ann.code, seat_id=seat_of(ann.code, name).id, csrf="", send=got.append)
        for name, got in received.items()
    ]
    for conn in conns:
        hub.add(conn)
    reactions._sent.clear()
    reactions._shown.clear()
    yield ann, bob, received
    for conn in conns:
        hub.remove(conn)


def slot(html: str, player_id: str):
    return parse(html).by_id(f"reaction-{player_id}")


def test_a_reaction_is_pushed_to_every_socket_and_shown_on_the_senders_area(game):
    ann, bob, received = game
    ann_id = seat_of(ann.code, "Ann").player_id
    response = ann.post(f"/t/{ann.code}/react", {"reaction": "party"}, htmx=True)
    assert response.status_code == 204
    for name in ("Ann", "Bob"):
        (pushed,) = received[name]
        node = slot(pushed, ann_id)
        assert node.attrs["hx-swap-oob"] == "true"
        shown = node.find("span", cls="reaction")
        assert shown.text() == "\N{PARTY POPPER}" and shown.attrs["aria-label"] == "Party"
    # The table rendered later (a push after a move, a reload) still shows it ...
    doc = parse(bob.page())
    assert doc.by_id(f"reaction-{ann_id}").find("span", cls="reaction") is not None
    form = doc.find("form", cls="reactions", aria_label="Reactions")
    assert form is not None and "role" not in form.attrs  # a <form> may not be a group
    # ... until it is a few seconds old.
    later = reactions.reaction_of(ann.code, ann_id, now=reactions.time.time() + 5)
    assert later is None


def test_each_socket_reads_a_reaction_in_its_own_language(hub, game):
    ann, bob, received = game
    heard = {"fr": [], "de": []}
    seat = seat_of(ann.code, "Bob").id
    conns = [Connection(ann.code, seat, "", got.append, locale=lang) for lang, got in heard.items()]
    for conn in conns:
        hub.add(conn)
    try:
        assert ann.post(f"/t/{ann.code}/react", {"reaction": "clap"}, htmx=True).status_code == 204
    finally:
        for conn in conns:
            hub.remove(conn)
    labels = {}
    for lang, (pushed,) in [*heard.items(), ("en", received["Bob"])]:
        labels[lang] = slot(pushed, seat_of(ann.code, "Ann").player_id).find("span").attrs
    assert {lang: attrs["aria-label"] for lang, attrs in labels.items()} == {
        "fr": "Bravo",
        "de": "Applaus",
        "en": "Applause",
    }


def test_reactions_are_rate_limited_per_seat(game):
    ann, bob, received = game
    for key in ("thumbs", "wow"):
        assert ann.post(f"/t/{ann.code}/react", {"reaction": key}, htmx=True).status_code == 204
    assert len(received["Bob"]) == 1  # the second came too soon: not shown
    assert bob.post(f"/t/{bob.code}/react", {"reaction": "clap"}, htmx=True).status_code == 204
    assert len(received["Ann"]) == 2  # Bob has his own allowance
    # Without JavaScript a refused one says why.
    response = ann.post(f"/t/{ann.code}/react", {"reaction": "oops"})
    assert response.status_code == 429
    assert "One reaction at a time" in response.data.decode()
    now = 1_000_000.0
    assert reactions.allowed("X", 1, now)
    assert not reactions.allowed("X", 1, now + 1)
    sent = 1
    for i in range(2, 200):
        sent += reactions.allowed("X", 1, now + i * reactions.MIN_GAP)
        if i * reactions.MIN_GAP > 59:
            break
    assert sent == reactions.PER_MINUTE


@pytest.mark.parametrize(
    "data",
    [{"reaction": "<b>hi</b>"}, {"reaction": ""}, {"text": "free text"}, {"reaction": "Party"}],
)
def test_only_the_fixed_reactions_exist(game, data):
    ann, bob, received = game
    response = ann.post(f"/t/{ann.code}/react", data, htmx=True)
    assert response.status_code == 400
    assert "Choose one of the reactions." in response.data.decode()
    assert received == {"Ann": [], "Bob": []}


def test_only_players_of_a_game_react(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    lobby = ann.post(f"/t/{ann.code}/react", {"reaction": "party"}, htmx=True)
    assert lobby.status_code == 403  # no game yet
    start(ann)
    watcher = browser()
    watcher.get(f"/t/{ann.code}")
    response = watcher.post(f"/t/{ann.code}/react", {"reaction": "party"}, htmx=True)
    assert response.status_code == 403
    assert "Only players in a game can react." in response.data.decode()
    assert parse(watcher.page()).find("form", aria_label="Reactions") is None


def test_the_reaction_buttons_show_the_emoji_while_the_board_stays_narrow(game):
    """The buttons read as their emoji, written as character references: an emoji in the
    markup would make Python hold every board it is joined into at 4 bytes a character."""
    ann, bob, received = game
    html = bob.page()
    form = parse(html).find("form", cls="reactions", aria_label="Reactions")
    shown = {b.attrs["value"]: b.text() for b in form.find_all("button")}
    assert shown == {key: emoji for key, (emoji, _label) in reactions.CHOICES.items()}
    assert max(map(ord, html)) <= 0xFF  # an English page, nobody's reaction shown

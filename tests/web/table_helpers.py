"""Helpers of the table blueprint's tests (test_table*.py)."""

from __future__ import annotations

import random

from tests.web.web_helpers import (
    Player,
    form_posting_to,
    game_of,
    parse,
    play_until,
    seat_table,
    start,
)

NOT_FOUND = "There is no table with that code."


def is_partial(response) -> bool:
    body = response.data.decode()
    doc = parse(body)
    return "<html" not in body and doc.by_id("table") is not None


def error_text(response) -> str:
    doc = parse(response.data)
    return " ".join(n.text() for n in doc.find_all(cls="error"))


def playing(browser, names=("Ann", "Bob"), **rules):
    """Two or more people in play (no setup flips), rows × cols 3 × 4."""
    people = seat_table(browser, names, initial_flips=0, **rules)
    start(people[0])
    assert game_of(people[0].code).phase == "play"
    return people


GOOD_RULES = {
    "end_score": "50",
    "rows": "2",
    "cols": "3",
    "initial_flips": "1",
    "penalty_mode": "both",
    "penalty_multiplier": "3",
    "penalty_flat": "20",
    "reseat": "round",
    "clear_rows": "on",
    "public": "on",
}


def finish_small_game(browser, names=("Ann", "Bob"), bots=(), end_score=10, **rules):
    people = seat_table(
        browser, names, bots=bots, rows=2, cols=2, end_score=end_score, initial_flips=0, **rules
    )
    start(people[0])
    rng = random.Random(7)
    players = [Player(b, b.name, rng) for b in people]
    while play_until(players) != "game_over":
        for p in players:
            form = form_posting_to(p.get(), "/next-round")
            if form is not None:
                p.submit(form)
    return people

"""Whole games through the test client: people play from what their pages offer (forms
and links), a bot plays inside the requests, until the results; next round, rematch,
the downloadable record, and leaving."""

from __future__ import annotations

import json
import random
import re

import pytest

from app.engine import Game, replay
from app.storage.models import GameRecord, Seat, Table
from tests.web.web_helpers import (
    Player,
    form_posting_to,
    game_of,
    parse,
    phase_of,
    play_until,
    seat_of,
    seat_table,
    snapshot,
    start,
    table_row,
    vote_next_round,
)


def page_ranking(doc) -> list[tuple[int, str, int, bool]]:
    rows = []
    for li in doc.find("ol", cls="ranking").find_all("li"):
        name = li.find("span", cls="name")
        left = name.find("span", cls="tag") is not None
        plain = "".join(c for c in name.children if isinstance(c, str)).strip()
        rank = int(li.find("span", cls="rank").text())
        rows.append((rank, plain, int(li.find("span", cls="total").text()), left))
    return rows


def winner_text(ranking) -> str:
    winners = [name for rank, name, _, _ in ranking if rank == 1]
    if len(winners) == 1:
        return f"{winners[0]} wins!"
    return " and ".join(winners) + " share the win!"


def download(browser, doc) -> dict:
    link = [a for a in doc.find_all("a") if a.text() == "Download the game record"]
    assert len(link) == 1
    response = browser.get(link[0].attrs["href"])
    assert response.status_code == 200 and response.mimetype == "application/json"
    return json.loads(response.data)


def check_record(record: dict, ranking, code: str, number: int) -> Game:
    """A valid skymo.game/1 record that replays to the ranking the page shows."""
    assert record["format"] == "skymo.game/1"
    assert record["id"] == f"{code}-{number}"
    game = replay(record)
    assert game.phase == "game_over"
    names = {p["id"]: p["name"] for p in record["players"]}
    replayed = [(r["rank"], names[r["player"]], r["total"]) for r in game.ranking()]
    assert replayed == [(r, n, t) for r, n, t, _ in ranking]
    assert record["final"]["ranking"] == game.ranking()
    assert record["final"]["ended"] is True
    stored = GameRecord.get((GameRecord.table == code) & (GameRecord.number == number))
    assert stored.record == record
    return game


def finish(players: list[Player]) -> int:
    """Play rounds (everyone pressing Next round) until the game is over."""
    rounds = 1
    while play_until(players) != "game_over":
        vote_next_round(players)
        rounds += 1
    return rounds


@pytest.mark.parametrize("seed", [2])
def test_a_whole_game_three_people_and_a_bot(browser, seed):
    people = seat_table(
        browser, ("Ann", "Bob", "Cat"), bots=("greedy",), end_score=10, initial_flips=2
    )
    start(people[0])
    rng = random.Random(seed)
    players = [
        Player(people[0], "Ann", rng),
        Player(people[1], "Bob", rng, htmx=True),
        Player(people[2], "Cat", rng, htmx=seed % 2 == 0),
    ]
    rounds = finish(players)
    code = people[0].code
    table = table_row(code)
    assert table.status == Table.FINISHED
    game = game_of(code)
    assert game.phase == "game_over" and len(game.rounds) == rounds
    assert any(total >= 10 for total in game.totals.values())

    rankings = []
    for b in people:
        doc = parse(b.page())
        assert phase_of(doc) == "game_over"
        assert doc.find("p", cls="banner").text() == "The game is over."
        ranking = page_ranking(doc)
        rankings.append(ranking)
        assert [n for _, n, _, _ in ranking] != []
        assert doc.by_id("final-h").text() == winner_text(ranking)
        me = doc.find("ol", cls="ranking").find("li", cls="me")
        assert b.name in me.text()
        # The host starts the rematch (the bot makes two); the guests may choose it.
        host = b is people[0]
        assert (form_posting_to(doc, "/rematch/start") is not None) is host
        assert (form_posting_to(doc, "/rematch") is not None) is not host
        assert form_posting_to(doc, "/leave") is None
        assert form_posting_to(doc, "/move") is None
        # The last round's results stay visible above the ranking.
        assert doc.by_id("round-h").text() == f"Round {rounds} results"
    assert rankings[0] == rankings[1] == rankings[2]
    ranking = rankings[0]
    assert sorted(n for _, n, _, _ in ranking) == ["Ann", "Bob", "Cat", "Gobbler"]
    totals = [t for _, _, t, _ in ranking]
    assert totals == sorted(totals)
    names = {p.id: p.name for p in game.players}
    assert [(n, t) for _, n, t, _ in ranking] == [
        (names[r["player"]], r["total"]) for r in game.ranking()
    ]
    record = download(people[1], parse(people[1].page()))
    check_record(record, ranking, code, 1)
    # A spectator sees the same results and can download the record too.
    watcher = browser()
    doc = parse(watcher.get(f"/t/{code}").data)
    assert page_ranking(doc) == ranking and form_posting_to(doc, "/rematch") is None
    assert download(watcher, doc) == record


def test_next_round_waits_for_everyone(services, browser, monkeypatch):
    ann, bob = seat_table(browser, ("Ann", "Bob"), bots=("random",), rows=2, cols=2, end_score=1000)
    start(ann)
    rng = random.Random(3)
    players = [Player(ann, "Ann", rng), Player(bob, "Bob", rng, htmx=True)]
    assert play_until(players) == "round_over"
    code = ann.code
    game = game_of(code)
    ender = game.round.ender
    for b in (ann, bob):
        doc = parse(b.page())
        assert doc.find("p", cls="banner").text() == "Round 1 is over."
        results = doc.by_id("round-h").ancestor("results")
        rows = results.find("tbody").find_all("tr")
        assert len(rows) == 3
        scores = [int(r.find_all("td")[1].text().split()[0]) for r in rows]
        assert scores == sorted(scores)
        assert form_posting_to(doc, "/next-round") is not None
    # The time it states is what is left of the server's delay, counted down on the page.
    monkeypatch.setattr(services.tables.timing, "next_round_seconds", 45.0)
    shown = parse(ann.page()).by_id("round-h").ancestor("results").text()
    left = int(re.search(r"or by itself in (\d+) s", shown).group(1))
    assert 40 <= left <= 45
    assert 'data-left="' in ann.page()
    ann_form = form_posting_to(parse(ann.page()), "/next-round")
    players[0].submit(ann_form)
    assert game_of(code).phase == "round_over"
    assert table_row(code).votes["next"] == [seat_of(code, "Ann").id]
    doc = parse(ann.page())
    assert form_posting_to(doc, "/next-round") is None
    waiting = doc.by_id("round-h").ancestor("results").text()
    assert "Waiting for the others" in waiting
    assert 40 <= int(re.search(r"starts by itself in (\d+) s", waiting).group(1)) <= 45
    # A second press by Ann (from her old form) counts once: nothing changes.
    before = snapshot(code)
    response = ann.post(
        ann_form.attrs["action"], {"version": ann_form.find("input", name="version").attrs["value"]}
    )
    assert response.status_code == 303
    assert snapshot(code) == before
    bob_doc = parse(bob.page())
    players[1].submit(form_posting_to(bob_doc, "/next-round"))
    game = game_of(code)
    assert len(game.rounds) == 2 and game.phase == "setup"
    assert game.round.starter is None or game.round.starter == ender
    doc = parse(ann.page())
    assert "Round 2" in doc.find("p", cls="roundline").text()
    assert doc.by_id("round-h") is None
    # Play round 2 through: its starter is the ender of round 1.
    play_until(players, phases=("play", "round_over", "game_over"))
    assert game_of(code).round.starter == ender


@pytest.mark.parametrize("reseat", ["never", "game"])
def test_rematch_with_the_players_who_opt_in(browser, reseat):
    ann, bob, cat = seat_table(
        browser,
        ("Ann", "Bob", "Cat"),
        bots=("greedy",),
        rows=2,
        cols=2,
        end_score=10,
        reseat=reseat,
    )
    start(ann)
    rng = random.Random(5)
    players = [Player(b, b.name, rng, htmx=b.name == "Bob") for b in (ann, bob, cat)]
    finish(players)
    code = ann.code
    first = game_of(code)
    lobby_order = [seat_of(code, n).player_id for n in ("Ann", "Bob", "Cat", "Gobbler")]
    check_seating(first, lobby_order, reseat)

    # Bob opts in first: he is in with the host and the bot (never named to himself),
    # and waits for the host; a start he makes by hand is refused and changes nothing.
    bob_doc = parse(bob.page())
    players[1].submit(form_posting_to(bob_doc, "/rematch"))
    doc = parse(bob.page())
    assert "You are in for a rematch with Ann and Gobbler." in doc.text()
    assert "Waiting for Ann to start the rematch." in doc.text()
    assert form_posting_to(doc, "/rematch/start") is None
    before = snapshot(code)
    response = bob.post(f"/t/{code}/rematch/start", {"version": bob.version()})
    assert response.status_code == 403
    assert "Only Ann can start the rematch." in parse(response.get_data(as_text=True)).text()
    assert snapshot(code) == before
    # Cat sees who is in; Ann (who never needs to choose) starts it.
    cat_doc = parse(cat.page())
    assert "Ready for a rematch: Ann, Bob, and Gobbler" in cat_doc.text()
    cat_form = form_posting_to(cat_doc, "/rematch")
    doc = parse(ann.page())
    assert "Ready for a rematch: Bob and Gobbler" in doc.text()
    assert form_posting_to(doc, "/rematch") is None
    assert table_row(code).votes["rematch"] == [seat_of(code, "Bob").id]
    players[0].submit(form_posting_to(doc, "/rematch/start"))
    # Cat presses "Play again" on her old page after the game began without her: she is
    # told so, and nothing changes.
    before = snapshot(code)
    late = cat.post(
        cat_form.attrs["action"], {"version": cat_form.find("input", name="version").attrs["value"]}
    )
    assert late.status_code == 409
    assert "The new game began without you" in parse(late.get_data(as_text=True)).text()
    assert snapshot(code) == before

    table = table_row(code)
    assert table.status == Table.PLAYING and table.game_number == 2
    second = game_of(code)
    assert second.id == f"{code}-2" and second.seed != first.seed
    assert [p.name for p in second.players] == ["Ann", "Bob", "Gobbler"]
    assert Seat.get((Seat.table == code) & (Seat.name == "Cat")).left is True
    check_seating(second, [pid for pid in lobby_order if pid != lobby_order[2]], reseat)
    # Cat watches now: no grid of her own, no moves.
    doc = parse(cat.page())
    assert doc.find("section", cls="mine-wrap") is None
    assert form_posting_to(doc, "/move") is None and form_posting_to(doc, "/leave") is None
    # The others see their opponents in seating order, starting after themselves.
    seating = second.round.seating
    for b in (ann, bob):
        mine = seat_of(code, b.name).player_id
        i = seating.index(mine)
        expected = [second.name(p) for p in seating[i + 1 :] + seating[:i]]
        doc = parse(b.page())
        shown = [
            g.attrs["aria-label"].removesuffix("'s grid")
            for g in doc.find("section", cls="opponents").find_all(cls="grid")
        ]
        assert shown == expected
    # The rematch plays to its own end and record; the first record is still there.
    finish(players[:2])
    doc = parse(ann.page())
    ranking = page_ranking(doc)
    assert sorted(n for _, n, _, _ in ranking) == ["Ann", "Bob", "Gobbler"]
    record = download(ann, doc)
    check_record(record, ranking, code, 2)
    old = json.loads(ann.get(f"/t/{code}/games/1/record.json").data)
    assert old["id"] == f"{code}-1" and len(old["players"]) == 4
    replay(old)


def check_seating(game: Game, lobby_order: list[str], reseat: str) -> None:
    """Seats follow the reseat rule: lobby order, or one shuffle kept all game."""
    assert [p.id for p in game.players] == lobby_order
    seatings = [r.seating for r in game.rounds]
    if reseat == "never":
        assert all(s == lobby_order for s in seatings)
    else:
        assert all(s == seatings[0] for s in seatings)
        assert sorted(seatings[0]) == sorted(lobby_order)
        # The same shuffle as the engine's own, from the game's seed.
        fresh = Game(game.players, game.rules, seed=game.seed, game_id=game.id)
        assert fresh.round.seating == seatings[0]


def test_reseat_every_round(browser):
    ann, bob = seat_table(
        browser,
        ("Ann", "Bob"),
        bots=("random", "random"),
        rows=2,
        cols=2,
        end_score=30,
        reseat="round",
    )
    start(ann)
    rng = random.Random(11)
    players = [Player(ann, "Ann", rng), Player(bob, "Bob", rng)]
    finish(players)
    game = game_of(ann.code)
    lobby_order = [p.id for p in game.players]
    for number, rnd in enumerate(game.rounds, 1):
        expected = list(lobby_order)
        game._rng(number, "seating").shuffle(expected)
        assert rnd.seating == expected


@pytest.mark.parametrize("htmx", [False, True])
def test_leaving_a_two_player_game_ends_it(browser, htmx):
    ann, bob = seat_table(browser, ("Ann", "Bob"), end_score=100)
    start(ann)
    rng = random.Random(2)
    players = [Player(ann, "Ann", rng), Player(bob, "Bob", rng)]
    moves = 0
    while moves < 7:  # the first flips, then a few turns
        assert players[0].act() or players[1].act()
        moves += 1
    code = ann.code
    doc = parse(ann.page())
    form = form_posting_to(doc, "/leave")
    assert form.find("button").text() == "Leave the game"
    players[0].htmx = htmx
    players[0].submit(form)

    table = table_row(code)
    assert table.status == Table.FINISHED
    game = game_of(code)
    assert game.phase == "game_over"
    assert game.forfeited == [seat_of(code, "Ann").player_id]
    for b in (ann, bob):
        doc = parse(b.page())
        ranking = page_ranking(doc)
        assert [(r, n, left) for r, n, _, left in ranking] == [
            (1, "Bob", False),
            (2, "Ann", True),
        ]
        assert doc.by_id("final-h").text() == "Bob wins!"
    # Bob may ask for a rematch; Ann, who left, is offered none.
    assert form_posting_to(parse(bob.page()), "/rematch") is not None
    assert form_posting_to(parse(ann.page()), "/rematch") is None
    record = download(bob, parse(bob.page()))
    assert record["final"]["forfeited"] == [seat_of(code, "Ann").player_id]
    check_record(record, page_ranking(parse(bob.page())), code, 1)

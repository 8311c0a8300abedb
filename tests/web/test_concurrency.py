"""Two POSTs for the same turn arriving together (threads released by a barrier): exactly
one is applied, the other gets the current table back, the version moves once (setup
reveals, each player's own, all count). Against
the in-process app and against a real server process."""

from __future__ import annotations

import copy
import random
import threading
from dataclasses import dataclass

import pytest

from app import tables
from app.engine import GAME_OVER, ROUND_OVER, SETUP, Game
from app.storage.models import Seat, Table
from tests.conftest import LiveServer
from tests.web.live_helpers import (
    STALE,
    VERSION,
    HttpBrowser,
    check_invariants,
    event_of,
    human_events,
    move_form,
    read_table,
    seat_ids,
)


def full_state(table: Table) -> dict | None:
    """The table's whole game as a dict (finished rounds are stored apart)."""
    game = tables.store.load_game(table)
    return game.to_dict() if game is not None else None


RULES = {"rows": "2", "cols": "3", "end_score": "30", "grace_seconds": "120"}


@dataclass
class Side:
    """How one test talks to its server: in-process test clients or HTTP."""

    post: callable  # (browser, path, data, htmx) -> (status, text)
    read: callable  # () -> (version, state)
    clone: callable  # browser -> another browser with the same cookies


def race(side: Side, posts):
    """Send every (browser, path, data, htmx) at once; [(status, text)] in order."""
    barrier = threading.Barrier(len(posts))
    results = [None] * len(posts)

    def send(i, browser, path, data, htmx):
        barrier.wait()
        try:
            results[i] = side.post(browser, path, data, htmx)
        except Exception as exc:  # reported by the caller
            results[i] = exc

    threads = [threading.Thread(target=send, args=(i, *p)) for i, p in enumerate(posts)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    for r in results:
        assert not isinstance(r, BaseException), r
    return results


def accepted(status: int, text: str, htmx: bool) -> bool:
    if htmx:
        return status == 200 and STALE not in text and 'role="alert"' not in text
    return status == 303


def play_races(side: Side, code: str, people: dict, rng: random.Random, races: int) -> int:
    """Race two requests at every step of a game; returns how many races were run."""
    pids = set(people)
    done = 0
    while done < races:
        version, state = side.read()
        game = Game.from_dict(state)
        if game.phase == GAME_OVER:
            break
        before = human_events(state, pids)
        path = f"/t/{code}/move"
        if game.phase == ROUND_OVER:
            # Both press "next round" with the same version: a vote counts whatever
            # version it carries, so both count and the next round begins.
            posts = [
                (b, f"/t/{code}/next-round", {"version": str(version)}, rng.random() < 0.5)
                for b in people.values()
            ]
            results = race(side, posts)
            done += 1
            wins = [accepted(s, t, p[3]) for (s, t), p in zip(results, posts, strict=True)]
            assert wins == [True, True], results
            after_version, after_state = side.read()
            assert after_version == version + 2, "one change per vote"
            assert Game.from_dict(after_state).phase != ROUND_OVER
            assert human_events(after_state, pids) == before
            check_invariants(after_state)
            continue
        options = {pid: game.legal_actions(pid) for pid in pids}
        movers = [pid for pid in pids if options[pid]]
        mover = rng.choice(sorted(movers))
        kind = rng.random()
        first = rng.choice(options[mover])
        if kind < 0.3:  # a double click: the same move twice, from two tabs
            second_pid, second = mover, first
            browsers = [people[mover], side.clone(people[mover])]
        elif kind < 0.6 and len(options[mover]) > 1:  # two different moves
            second_pid = mover
            second = rng.choice([a for a in options[mover] if a != first])
            browsers = [people[mover], side.clone(people[mover])]
        else:  # the other player at the same moment
            second_pid = next(p for p in sorted(pids) if p != mover)
            second = rng.choice(options[second_pid] or options[mover])
            browsers = [people[mover], people[second_pid]]
        posts = [
            (browsers[0], path, {**move_form(first, rng), "version": str(version)}, False),
            (browsers[1], path, {**move_form(second, rng), "version": str(version)}, False),
        ]
        posts = [(b, p, d, rng.random() < 0.5) for b, p, d, _ in posts]
        legal = [True, second in options[second_pid]]
        expect_events = [(mover, event_of(first)), (second_pid, event_of(second))]
        results = race(side, posts)
        done += 1
        for status, text in results:
            assert status < 500, (status, text[:800])
        wins = [accepted(s, t, p[3]) for (s, t), p in zip(results, posts, strict=True)]
        if game.phase == SETUP:
            check_setup_race(side, game, version, before, expect_events, wins, legal, pids)
            continue
        assert wins.count(True) == 1, (results, posts)
        after_version, after_state = side.read()
        assert after_version == version + 1, "the version moved more (or less) than once"
        after = human_events(after_state, pids)
        winner = wins.index(True)
        assert after == before + [expect_events[winner]], "not exactly the winner's move"
        check_invariants(after_state)
        loser = wins.index(False)
        status, text = results[loser]
        if status in (303, 204):
            raise AssertionError(f"the other request also looks applied: {status}")
        shown = VERSION.search(text)
        assert shown is not None, "the other request did not get the table back"
        if legal[loser]:
            # It came second: a stale version gets the current table (or, when the
            # first move ended the game, the reason there is no move to make).
            assert int(shown.group(1)) == version + 1
            assert STALE in text or 'role="alert"' in text
        else:
            assert int(shown.group(1)) in (version, version + 1)
    return done


def check_setup_race(side, game, version, before, expect_events, wins, legal, pids) -> None:
    """Setup reveals chosen on the same page all count, as far as the rules allow: the
    same card twice is turned once, a player's reveals up to what they have left."""
    (first_pid, first), (second_pid, second) = expect_events
    left = game.round.setup_left
    if not legal[1]:
        expected = 1
    elif first_pid != second_pid:
        expected = 2
    elif first == second:
        expected = 1
    else:
        expected = min(2, left[first_pid])
    assert wins.count(True) == expected, (wins, expect_events)
    after_version, after_state = side.read()
    assert after_version == version + expected
    applied = [e for e, won in zip(expect_events, wins, strict=True) if won]
    after = human_events(after_state, pids)
    assert sorted(after[len(before) :]) == sorted(applied) and after[: len(before)] == before
    check_invariants(after_state)


def keep_racing(side: Side, code: str, host_first: list, people: dict, rng, races: int) -> int:
    """Race through games (a rematch after each) until `races` races were run."""
    total = 0
    while total < races:
        total += play_races(side, code, people, rng, races - total)
        version, state = side.read()
        if total < races and Game.from_dict(state).phase == GAME_OVER:
            # Both choose to play again, then the host starts the next game.
            for b in host_first:
                status, text = side.post(b, f"/t/{code}/rematch", {"version": version}, False)
                assert status == 303, text[:500]
                version += 1
            status, text = side.post(
                host_first[0], f"/t/{code}/rematch/start", {"version": version}, False
            )
            assert status == 303, text[:500]
    return total


def test_simultaneous_posts_in_process(app, browser):
    rng = random.Random(7)
    ann, bob = browser(), browser()
    code = ann.create("Ann")
    bob.join(code, "Bob")
    assert ann.post(f"/t/{code}/rules", RULES).status_code == 303
    assert ann.post(f"/t/{code}/start", {"version": ann.version()}).status_code == 303
    seats = {s.name: s.player_id for s in Seat.select().where(Seat.table == code)}
    people = {seats["Ann"]: ann, seats["Bob"]: bob}

    def post(b, path, data, htmx):
        response = b.post(path, data, htmx=htmx)
        return response.status_code, response.data.decode()

    def read():
        table = Table.get(Table.code == code)
        return table.version, full_state(table)

    def clone(b):
        other = copy.copy(b)
        other.client = app.test_client()
        cookie = b.client.get_cookie("session")
        other.client.set_cookie("session", cookie.value, domain=cookie.domain)
        return other

    assert keep_racing(Side(post, read, clone), code, [ann, bob], people, rng, 80) >= 80


@pytest.fixture
def server(tmp_path):
    live = LiveServer(tmp_path, SKYMO_NEXT_ROUND_SECONDS="600").start()
    yield live
    live.stop()
    log = (tmp_path / "server.log").read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]


def test_simultaneous_posts_against_a_live_server(server, tmp_path):
    rng = random.Random(11)
    db = tmp_path / "skymo.db"
    ann, bob = HttpBrowser(server.url), HttpBrowser(server.url)
    code = ann.create("Ann")
    bob.join(code, "Bob")
    assert ann.post(f"/t/{code}/rules", RULES)[0] == 303
    assert ann.post(f"/t/{code}/start", {"version": read_table(db, code)["version"]})[0] == 303
    pids = seat_ids(db, code)
    people = {pids["Ann"]: ann, pids["Bob"]: bob}

    def post(b, path, data, htmx):
        status, head, text = b.post(path, data, htmx=htmx)
        return status, text

    def read():
        row = read_table(db, code)
        return row["version"], row["state"]

    def clone(b):
        other = HttpBrowser(b.base)
        other.jar, other.opener, other.csrf = b.jar, b.opener, b.csrf
        return other

    assert keep_racing(Side(post, read, clone), code, [ann, bob], people, rng, 60) >= 60


def test_moves_at_many_tables_at_once_never_fail(app, browser):
    """Writers at different tables share one SQLite file: none may get "database is
    locked" (a deferred transaction that read, then writes after another commit)."""
    tables = []
    for n in range(6):
        ann, bob = browser(), browser()
        code = ann.create(f"Ann{n}")
        bob.join(code, f"Bob{n}")
        assert ann.post(f"/t/{code}/rules", RULES).status_code == 303
        assert ann.post(f"/t/{code}/start", {"version": ann.version()}).status_code == 303
        seats = {s.name[:3]: s.player_id for s in Seat.select().where(Seat.table == code)}
        tables.append((code, {seats["Ann"]: ann, seats["Bob"]: bob}))
    barrier = threading.Barrier(len(tables))
    failures = []

    def play(code, people, rng):
        barrier.wait()
        for _ in range(15):
            table = Table.get(Table.code == code)
            game = Game.from_dict(table.state)
            options = [(pid, a) for pid in people for a in game.legal_actions(pid)]
            if not options:
                return
            pid, action = rng.choice(options)
            data = {**move_form(action, rng), "version": table.version}
            response = people[pid].post(f"/t/{code}/move", data)
            if response.status_code != 303:
                failures.append((code, response.status_code, response.data[:300]))
                return

    threads = [
        threading.Thread(target=play, args=(code, people, random.Random(n)))
        for n, (code, people) in enumerate(tables)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not failures, failures
    for code, _ in tables:
        check_invariants(full_state(Table.get(Table.code == code)))

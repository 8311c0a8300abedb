"""What the live-server fuzz test sends (tables in every phase, the requests hypothesis
draws); fuzz_lanes.py runs them."""

from __future__ import annotations

import random
import threading

import websocket
from hypothesis import strategies as st

from app.engine import GAME_OVER, PLAY, ROUND_OVER, Game
from tests.web.live_helpers import (
    HttpBrowser,
    move_form,
    read_table,
    seat_ids,
)

SLOTS = ("lobby", "setup", "play", "drawn", "round_over", "finished")
PASSWORD = "correct horse battery"
HUGE = "<1 MB>"  # stands for a megabyte-long string, made only when sent
BIG_NUMBER = str(10**100)


# ----- tables in every phase -------------------------------------------------------------
def phase_of(row: dict) -> str:
    if row["status"] in ("lobby", "closed"):
        return row["status"]
    game = Game.from_dict(row["state"])
    if row["status"] == "finished" or game.phase == GAME_OVER:
        return "finished"
    if game.phase == PLAY and game.round.drawn is not None:
        return "drawn"
    return game.phase


def family(phase: str) -> str:
    """Moves take a table from phase to phase within a game: a table is replaced only
    when it leaves its family (a lobby starts, a game ends, a rematch starts)."""
    return phase if phase in ("lobby", "finished", "closed") else "game"


def build(db, slot: str, ann: HttpBrowser, bob: HttpBrowser, rng: random.Random) -> str:
    """A table of Ann (host) and Bob, brought to `slot` by legal moves."""
    code = ann.create("Ann")
    bob.join(code, "Bob")
    if slot == "lobby":
        return code
    flips = "3" if slot == "setup" else "1"
    rules = {"rows": "2", "cols": "2", "initial_flips": flips, "grace_seconds": "120"}
    rules |= {"rejoin_seconds": "1800", "end_score": "10" if slot == "finished" else "100"}
    assert ann.post(f"/t/{code}/rules", rules)[0] == 303
    version = read_table(db, code)["version"]
    assert ann.post(f"/t/{code}/start", {"version": str(version)})[0] == 303
    people = {pid: (ann if name == "Ann" else bob) for name, pid in seat_ids(db, code).items()}
    for _ in range(2000):
        row = read_table(db, code)
        if phase_of(row) == slot:
            return code
        game = Game.from_dict(row["state"])
        version = str(row["version"])
        if game.phase == ROUND_OVER:
            for b in people.values():
                b.post(f"/t/{code}/next-round", {"version": version})
                version = str(read_table(db, code)["version"])
            continue
        if slot == "play" and game.phase == PLAY:
            return code
        options = [(pid, a) for pid in people for a in game.legal_actions(pid)]
        pid, action = rng.choice(options)
        if slot == "drawn" and game.phase == PLAY:
            action = next(a for a in game.legal_actions(pid) if type(a).__name__ == "Draw")
        data = {**move_form(action, rng), "version": version}
        status, head, text = people[pid].post(f"/t/{code}/move", data)
        assert status == 303, (status, text[:300])
    raise AssertionError(f"could not bring a table to {slot}")


def hold_presence(server, browser: HttpBrowser, code: str) -> websocket.WebSocket:
    """An open socket: the seat counts as present (no host handover in the lobby)."""
    cookie = "; ".join(f"{c.name}={c.value}" for c in browser.jar)
    ws = websocket.create_connection(
        server.url.replace("http", "ws") + f"/t/{code}/ws", cookie=cookie, timeout=5
    )

    def drain():
        try:
            while ws.connected:
                ws.recv()
        except Exception:
            pass

    threading.Thread(target=drain, daemon=True).start()
    return ws


# ----- what a request may be -----------------------------------------------------------
ROUTES = [
    ("POST", "/t/{code}/move", 20),
    ("POST", "/t/{code}/rules", 3),
    ("POST", "/t/{code}/bots", 2),
    ("POST", "/t/{code}/seats/{seat}/remove", 2),
    ("POST", "/t/{code}/start", 2),
    ("POST", "/t/{code}/join", 2),
    ("POST", "/t/{code}/next-round", 3),
    ("POST", "/t/{code}/leave", 1),
    ("POST", "/t/{code}/rematch", 2),
    ("POST", "/t/{code}/rematch/start", 2),
    ("POST", "/tables", 1),
    ("POST", "/signup", 1),
    ("POST", "/signin", 1),
    ("POST", "/signout", 1),
    ("POST", "/account/password", 1),
    ("POST", "/account/delete", 1),
    ("POST", "/{text}", 1),
    ("POST", "/t/{code}/{text}", 1),
    ("GET", "/t/{code}", 3),
    ("GET", "/t/{code}?mode={text}", 2),
    ("GET", "/", 1),
    ("GET", "/public", 1),
    ("GET", "/rules", 1),
    ("GET", "/join?code={text}", 1),
    ("GET", "/t/{code}/games/{num}/record.json", 1),
    ("GET", "/t/{code}/games/{num}", 1),
    ("GET", "/leaderboard?by={text}&page={num}", 1),
    ("GET", "/me/stats", 1),
    ("GET", "/me/history?page={num}", 1),
    ("GET", "/u/{text}", 1),
    ("GET", "/account?done={text}", 1),
    ("GET", "/signin?next={text}", 1),
    ("GET", "/signup", 1),
    ("GET", "/static/{text}", 1),
    ("GET", "/{text}", 1),
    ("GET", "/t/{code}/{text}", 1),
    ("GET", "/t/{code}/ws", 1),
]
ROUTE_CHOICES = [(m, p) for m, p, weight in ROUTES for _ in range(weight)]
METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]

SPECIAL = [
    "",
    " ",
    "\x00",
    "null",
    "[]",
    "{}",
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "%00",
    "%zz",
    "../../etc/passwd",
    "\u202e\u0301\ufeff",
    "🂡" * 5,
    "Ünïcødé ñame",
    "x" * 5000,
    BIG_NUMBER,
    "-" + BIG_NUMBER,
    "1e9",
    "0x10",
    " 3 ",
    "٣",
    "3.0",
    "True",
    HUGE,
]
NUMBERS = [str(n) for n in range(-3, 13)] + [BIG_NUMBER, "-1", "abc"]
numbers = st.sampled_from(NUMBERS)
CHARS = list("aZ09-_ .,:;éüßİ€😀\u202e\u0301\ufeff\x00\x7f\n\t<>&\"'%/\\?#=+")
special = st.sampled_from(SPECIAL + NUMBERS)
# Mostly the interesting values; sometimes arbitrary text.
junk = st.one_of(special, special, st.text(st.sampled_from(CHARS), max_size=12))
positions = st.builds(lambda r, c: f"{r}-{c}", st.integers(-1, 3), st.integers(-1, 3))
DOMAIN = {
    "type": st.sampled_from(["reveal", "draw", "take_discard", "keep_drawn", "discard_drawn"]),
    "pos": positions,
    "row": st.integers(-1, 3).map(str),
    "col": st.integers(-1, 3).map(str),
    "name": st.sampled_from(["Cy", "Ann", "bob", "Dee Dee", "Zoë"]),
    "bot": st.sampled_from(["random", "greedy", "strong"]),
    "rows": st.sampled_from(["2", "3", "4"]),
    "cols": st.sampled_from(["2", "3", "4", "5"]),
    "initial_flips": st.sampled_from(["0", "1", "2", "5"]),
    "end_score": st.sampled_from(["10", "50", "100", "5000"]),
    "penalty_mode": st.sampled_from(["multiplier", "flat", "both", "none"]),
    "penalty_multiplier": st.sampled_from(["2", "3", "9"]),
    "penalty_flat": st.sampled_from(["1", "10", "99"]),
    "reseat": st.sampled_from(["never", "round", "game", "always"]),
    "grace_seconds": st.sampled_from(["120", "4", "60"]),
    "rejoin_seconds": st.sampled_from(["1800", "29", "600"]),
    "clear_rows": st.sampled_from(["on", "off"]),
    "show_running_score": st.sampled_from(["on", "1"]),
    "public": st.sampled_from(["on", "1"]),
    "username": st.sampled_from(["zed_fuzz", "Ann", "new_user", "a"]),
    "password": st.sampled_from([PASSWORD, "short", "wrong password"]),
    "current_password": st.sampled_from([PASSWORD, "wrong password"]),
    "new_password": st.sampled_from([PASSWORD, "x"]),
    "delete_password": st.sampled_from(["wrong password", PASSWORD]),
    "next": st.sampled_from(["/t/ABC", "//evil.example", "https://evil.example/", "/\\evil"]),
    "remember": st.just("on"),
}
FIELDS = sorted(DOMAIN)


@st.composite
def field_values(draw):
    fields = {}
    for name in draw(st.lists(st.sampled_from(FIELDS), max_size=5, unique=True)):
        fields[name] = draw(st.one_of(DOMAIN[name], DOMAIN[name], junk))
    if draw(st.integers(0, 9)) == 0:
        fields[draw(st.text(max_size=10))] = draw(junk)
    if draw(st.integers(0, 14)) == 0:  # a field sent twice: a list, not a string
        name = draw(st.sampled_from(FIELDS))
        fields[name] = [draw(junk), draw(junk)]
    return fields


MUTATIONS = ["version", "player", "csrf", "field", "table"]
AUTH = ("/signup", "/signin", "/signout", "/account")


@st.composite
def fuzz_requests(draw):
    method, path = draw(st.sampled_from(ROUTE_CHOICES))
    if draw(st.integers(0, 6)) == 0:
        method = draw(st.sampled_from(METHODS))
    return {
        "method": method,
        "path": path,
        "slot": draw(st.sampled_from([*SLOTS, *SLOTS, "unknown", "lower", "junk"])),
        "who": draw(st.sampled_from(["ann", "ann", "bob", "bob", "eve", "anon", "zed"])),
        "csrf": draw(st.sampled_from(["own"] * 5 + ["missing", "wrong", "other", "header"])),
        "version": draw(
            st.sampled_from(["current"] * 5 + ["old", "next", "0", "-1", "big", "junk", "none"])
        ),
        # A move the rules allow now, sent as is or with one thing wrong.
        "legal": draw(st.sampled_from([None, None, "as is", "as is", *MUTATIONS])),
        "fields": draw(field_values()),
        "htmx": draw(st.booleans()),
        "body": draw(st.sampled_from(["form"] * 8 + ["json", "multipart", "bytes"])),
        "seat": draw(st.sampled_from(["host", "guest", "other", "0", BIG_NUMBER, "x"])),
        "text": draw(junk),
        "num": draw(numbers),
    }

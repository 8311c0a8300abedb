"""Optional accounts: sign up, sign in and out, passwords, the rate limit, seats that
follow the account, the guest's game moving to a new account, deleting an account."""

from __future__ import annotations

import json
import re
import sqlite3

import limits.storage.memory
import limits.strategies
import pytest
from account_helpers import (  # noqa: F401 (cheap_hashing: an autouse fixture)
    PASSWORD,
    cheap_hashing,
    finish,
    game_clean_win,
    make_user,
    signin,
    signout,
    signup,
    table_with,
    user,
)
from argon2 import PasswordHasher

from app import accounts, create_app, tables
from app.models import GameRecord, Result, Seat, Table, User, db
from app.web import ratelimit


def text(response) -> str:
    return response.data.decode()


def signed_in_as(b) -> str | None:
    found = re.search(r'aria-label="Your account: ([^"]+)"', text(b.get("/")))
    return found.group(1) if found else None


# ----- sign up -------------------------------------------------------------------------
def test_sign_up_signs_in_and_hashes_the_password(browser):
    ann = browser()
    response = signup(ann, "Ann_1")
    assert response.status_code == 303
    assert response.headers["Location"] == "/me/stats"
    assert signed_in_as(ann) == "Ann_1"
    row = user("ann_1")
    assert row.username == "Ann_1" and row.username_lower == "ann_1"
    assert row.password_hash.startswith("$argon2id$")
    assert PASSWORD not in row.password_hash


def test_production_hashes_use_argon2id_with_its_default_cost(app, monkeypatch):
    monkeypatch.undo()  # the real hasher, not the tests' cheap one
    row = make_user("ann")
    assert row.password_hash.startswith("$argon2id$")
    assert not PasswordHasher().check_needs_rehash(row.password_hash)
    assert accounts.authenticate("ann", PASSWORD) == row
    assert accounts.authenticate("ann", "wrong password") is None


def test_sign_up_goes_back_to_a_page_on_this_site_only(browser):
    ann, bob = browser(), browser()
    assert signup(ann, "ann", next="/leaderboard").headers["Location"] == "/leaderboard"
    for evil in ("https://evil.example/", "//evil.example/x", "/\\evil.example"):
        response = signup(bob, f"bob{len(evil)}", next=evil)
        assert response.headers["Location"] == "/me/stats"
        signout(bob)


@pytest.mark.parametrize(
    "username",
    ["ab", "a" * 21, "ann smith", "ann!", "änn", "", "   "],
)
def test_sign_up_refuses_a_bad_username(browser, username):
    ann = browser()
    response = signup(ann, username)
    assert response.status_code == 400
    assert 'aria-invalid="true"' in text(response)
    assert "A username has 3 to 20 characters" in text(response) or "Choose a username" in text(
        response
    )
    assert User.select().count() == 0
    assert signed_in_as(ann) is None


def test_a_username_is_unique_regardless_of_case(browser):
    signup(browser(), "Ann")
    bob = browser()
    response = signup(bob, "aNN")
    assert response.status_code == 400
    assert "That username is taken" in text(response)
    assert User.select().count() == 1
    assert signed_in_as(bob) is None


def test_a_short_password_is_refused(browser):
    ann = browser()
    response = signup(ann, "ann", "seven77")
    assert response.status_code == 400
    assert "A password has at least 8 characters." in text(response)
    # What was typed comes back, but never the password.
    assert 'value="ann"' in text(response) and "seven77" not in text(response)
    assert User.select().count() == 0


def test_sign_up_needs_the_csrf_token(client):
    response = client.post("/signup", data={"username": "ann", "password": PASSWORD})
    assert response.status_code == 400
    assert User.select().count() == 0


# ----- sign in and out -----------------------------------------------------------------
def test_sign_in_and_sign_out(browser):
    make_user("Ann")
    ann = browser()
    response = signin(ann, "ANN")  # any case
    assert response.status_code == 303 and response.headers["Location"] == "/"
    assert signed_in_as(ann) == "Ann"
    response = signout(ann)
    assert response.status_code == 303
    assert signed_in_as(ann) is None
    assert ann.get("/me/stats").status_code == 302


def test_signing_out_a_guest_keeps_their_seats(browser):
    ann = browser()
    code = ann.create("Ann")
    assert ann.post("/signout").status_code == 303
    assert re.search(r'<li class="me">', ann.get(f"/t/{code}").data.decode())


def test_sign_out_is_a_post_with_csrf(browser):
    make_user("Ann")
    ann = browser()
    signin(ann, "ann")
    assert ann.client.get("/signout").status_code == 405
    assert ann.client.post("/signout").status_code == 400  # no token
    assert signed_in_as(ann) == "Ann"


def test_wrong_credentials_get_one_message_whether_or_not_the_user_exists(browser):
    make_user("ann")
    wrong_password = signin(browser(), "ann", "not the password")
    no_such_user = signin(browser(), "nobody", "not the password")
    for response in (wrong_password, no_such_user):
        assert response.status_code == 401
        assert "Wrong username or password." in text(response)
    strip = lambda r: re.sub(r'(value="|Token": ")[^"]*"', "", text(r))  # noqa: E731
    assert strip(wrong_password) == strip(no_such_user)


def test_the_session_is_renewed_at_sign_in(browser, app):
    make_user("ann")
    ann = browser()
    code = ann.create("Ann")
    old_token = ann.csrf
    with ann.client.session_transaction() as s:
        before = dict(s)
    ann.post("/signin", {"username": "ann", "password": PASSWORD})
    with ann.client.session_transaction() as s:
        after = dict(s)
    assert after["seats"] == before["seats"]  # the guest keeps their seat
    # a new CSRF secret once a page asks (Flask-WTF keeps it as "csrf_token")
    assert after.get("csrf_token") != before["csrf_token"]
    assert "_user_id" in after
    # The old CSRF token no longer works.
    response = ann.client.post(f"/t/{code}/rules", data={"csrf_token": old_token})
    assert response.status_code == 400


def test_remember_me_sets_a_long_lived_cookie(browser):
    make_user("ann")
    ann = browser()
    response = ann.post("/signin", {"username": "ann", "password": PASSWORD, "remember": "on"})
    assert "remember_token=" in " ".join(response.headers.getlist("Set-Cookie"))
    bob = browser()
    make_user("bob")
    response = signin(bob, "bob")
    assert "remember_token=" not in " ".join(response.headers.getlist("Set-Cookie"))


def test_pages_for_accounts_send_a_guest_to_sign_in(client):
    for url in ("/me/stats", "/me/history", "/account"):
        response = client.get(url)
        assert response.status_code == 302
        assert response.headers["Location"].startswith("/signin?next=")


def test_sign_in_returns_to_the_page_that_asked(browser):
    make_user("ann")
    ann = browser()
    location = ann.get("/me/history").headers["Location"]
    page = text(ann.get(location))
    assert 'name="next" value="/me/history"' in page
    response = ann.post("/signin", {"username": "ann", "password": PASSWORD, "next": "/me/history"})
    assert response.headers["Location"] == "/me/history"


# ----- rate limit ----------------------------------------------------------------------
TOO_MANY = re.compile(r"Too many sign-in attempts: try again in (\d+) minutes?\.")


def test_too_many_failures_for_a_username_lock_it_even_from_other_addresses(browser):
    make_user("ann")
    for i in range(5):
        response = signin(
            browser(), "ann", "wrong password", environ_base={"REMOTE_ADDR": f"10.0.0.{i}"}
        )
        assert response.status_code == 401
    response = signin(browser(), "ANN", environ_base={"REMOTE_ADDR": "10.0.1.1"})
    assert response.status_code == 429
    assert TOO_MANY.search(text(response)).group(1) == "15"
    # Another user from another address is not affected.
    make_user("bob")
    assert signin(browser(), "bob", environ_base={"REMOTE_ADDR": "10.0.2.1"}).status_code == 303


def test_too_many_failures_from_an_address_lock_it_for_every_username(browser):
    make_user("zed")
    b = browser()
    for name in ("a1x", "b2x", "c3x", "d4x", "e5x"):
        assert signin(b, name, "wrong password").status_code == 401
    response = signin(b, "zed")  # right password, but this address is locked
    assert response.status_code == 429 and TOO_MANY.search(text(response))
    assert signed_in_as(b) is None
    assert signin(browser(), "zed", environ_base={"REMOTE_ADDR": "10.9.9.9"}).status_code == 303


def test_behind_a_proxy_the_forwarded_address_counts(browser, app):
    app.config["PROXY_HOPS"] = 1
    make_user("zed")
    for i in range(5):
        headers = {"X-Forwarded-For": f"spoofed, 203.0.113.{i % 2}"}
        signin(browser(), f"user{i}", "wrong password", headers=headers)
    # 203.0.113.0 failed 3 times and .1 twice: neither is locked, nor is the proxy.
    assert signin(browser(), "zed", headers={"X-Forwarded-For": "203.0.113.9"}).status_code == 303
    for _ in range(2):
        signin(browser(), "nobody1", "wrong", headers={"X-Forwarded-For": "203.0.113.0"})
    locked = signin(browser(), "zed", headers={"X-Forwarded-For": "x, 203.0.113.0"})
    assert locked.status_code == 429


class Clock:
    """Stands in for the `time` module of the rate limit's storage and strategy."""

    def __init__(self, now: float):
        self.now = now

    def time(self) -> float:
        return self.now


def test_the_limit_is_a_sliding_window(browser, app, monkeypatch):
    start = 1_800_000_000.0
    clock = Clock(start)
    for module in (limits.storage.memory, limits.strategies, ratelimit):
        monkeypatch.setattr(module, "time", clock)
    app.config.update(SIGNIN_MAX_FAILURES=3, SIGNIN_WINDOW_SECONDS=600)
    make_user("ann")
    make_user("bob")

    def attempt(name, address, password="correct horse"):
        return signin(browser(), name, password, environ_base={"REMOTE_ADDR": address})

    for t in (0, 100, 200):
        clock.now = start + t
        assert attempt("ann", "1.2.3.4", "wrong password").status_code == 401
    clock.now = start + 300
    locked = attempt("ann", "5.6.7.8")  # the username: 300 s until the first failure leaves
    assert locked.status_code == 429 and TOO_MANY.search(text(locked)).group(1) == "5"
    assert attempt("bob", "1.2.3.4").status_code == 429  # the address
    assert attempt("bob", "5.6.7.8").status_code == 303
    clock.now = start + 601  # the first failure left the window
    assert attempt("ann", "1.2.3.4").status_code == 303


def test_the_wait_is_said_in_whole_minutes():
    assert ratelimit.too_many_message(61) == "Too many sign-in attempts: try again in 2 minutes."
    assert ratelimit.too_many_message(20) == "Too many sign-in attempts: try again in 1 minute."


def test_a_successful_sign_in_forgets_the_usernames_failures(browser):
    make_user("ann")
    b = browser()
    for _ in range(4):
        signin(b, "ann", "wrong password", environ_base={"REMOTE_ADDR": "10.1.1.1"})
    assert signin(b, "ann", environ_base={"REMOTE_ADDR": "10.1.1.1"}).status_code == 303
    signout(b)
    c = browser()
    signin(c, "ann", "wrong password", environ_base={"REMOTE_ADDR": "10.2.2.2"})
    assert signin(c, "ann", environ_base={"REMOTE_ADDR": "10.2.2.2"}).status_code == 303


# ----- password ------------------------------------------------------------------------
def test_change_password_signs_out_the_other_devices(browser):
    make_user("ann")
    phone, laptop = browser(), browser()
    signin(phone, "ann")
    signin(laptop, "ann")
    response = phone.post(
        "/account/password", {"current_password": PASSWORD, "new_password": "a new secret"}
    )
    assert response.status_code == 303
    assert "Your password is changed" in text(phone.get(response.headers["Location"]))
    assert signed_in_as(phone) == "ann"
    assert signed_in_as(laptop) is None
    assert signin(browser(), "ann").status_code == 401
    assert signin(browser(), "ann", "a new secret").status_code == 303


def test_change_password_checks_the_current_one_and_the_new_ones_length(browser):
    make_user("ann")
    ann = browser()
    signin(ann, "ann")
    wrong = ann.post("/account/password", {"current_password": "nope", "new_password": "x" * 9})
    assert wrong.status_code == 400 and "That is not your current password." in text(wrong)
    short = ann.post("/account/password", {"current_password": PASSWORD, "new_password": "short"})
    assert short.status_code == 400 and "at least 8 characters" in text(short)
    assert signin(browser(), "ann").status_code == 303  # unchanged


# ----- seats and the account -----------------------------------------------------------
def test_signed_in_players_find_their_name_prefilled(browser):
    make_user("ann")
    host, ann = browser(), browser()
    code = host.create("Host")
    signin(ann, "ann")
    assert 'id="host-name" name="name" value="ann"' in text(ann.get("/"))
    assert re.search(r'id="join-name"[^>]*value="ann"', text(ann.get(f"/t/{code}")))
    assert not re.search(
        r'id="join-name"[^>]*value="ann"', browser().get(f"/t/{code}").data.decode()
    )


def test_a_signed_in_player_comes_back_to_their_seat_from_another_device(browser):
    ann_user = make_user("ann")
    host, phone, laptop = browser(), browser(), browser()
    code = host.create("Host")
    signin(phone, "ann")
    phone.join(code, "Annie")
    seat = Seat.get((Seat.table == code) & (Seat.name == "Annie"))
    assert seat.user_id == ann_user.id
    signin(laptop, "ann")
    page = laptop.get(f"/t/{code}").data.decode()
    assert re.search(r'<li class="me">.*?Annie', page, re.S)
    assert 'id="join-name"' not in page
    # Joining again from the laptop does not add a second seat.
    laptop.join(code, "Ann again")
    assert Seat.select().where((Seat.table == code) & (Seat.left == False)).count() == 2  # noqa: E712
    # Signed out, the laptop is a spectator again.
    signout(laptop)
    assert 'id="join-name"' in laptop.get(f"/t/{code}").data.decode()


def test_a_seat_of_an_account_is_not_reached_by_its_token_after_sign_out(browser):
    make_user("ann")
    ann = browser()
    signin(ann, "ann")
    code = ann.create("Ann")
    with ann.client.session_transaction() as s:
        token = s["seats"][code]
    ann.post("/signout")
    guest = browser()
    guest.get("/")
    with guest.client.session_transaction() as s:
        s["seats"] = {code: token}  # a copied cookie of the account's seat
    assert 'id="join-name"' in guest.get(f"/t/{code}").data.decode()


def test_a_guest_who_signs_up_during_a_game_keeps_it(browser):
    ann, bob = browser(), browser()
    code = ann.create("Ann")
    bob.join(code, "Bob")
    ann.post(f"/t/{code}/start", {"version": ann.version()})
    signup(ann, "ann")
    seat = Seat.get((Seat.table == code) & (Seat.name == "Ann"))
    assert seat.user_id == user("ann").id
    # Her seat follows the account to another device.
    laptop = browser()
    signin(laptop, "ann")
    assert 'action="/t/' + code + '/leave"' in laptop.get(f"/t/{code}").data.decode()
    bob.post(f"/t/{code}/leave")  # Bob leaves: the game ends by forfeit
    result = Result.get((Result.table == code) & (Result.seat == seat))
    assert result.user_id == user("ann").id and result.rank == 1


def test_a_guest_who_signs_in_right_after_a_game_keeps_its_result(browser):
    make_user("ann")
    ann, bob = browser(), browser()
    code = ann.create("Ann")
    bob.join(code, "Bob")
    ann.post(f"/t/{code}/start", {"version": ann.version()})
    ann.post(f"/t/{code}/leave")  # Ann forfeits: Bob wins
    result = Result.get((Result.table == code) & (Result.name == "Ann"))
    assert result.user_id is None and result.forfeited
    signin(ann, "ann")
    result = Result.get_by_id(result.id)
    assert result.user_id == user("ann").id
    stats = text(ann.get("/me/stats"))
    assert re.search(r'id="st-games">1<', stats) and re.search(r'id="st-forfeits">1<', stats)
    # Bob, still a guest, keeps his own result, unowned.
    assert Result.get((Result.table == code) & (Result.name == "Bob")).user_id is None


def test_claiming_skips_seats_owned_by_someone_else_and_second_seats(browser):
    ann_user, bob_user = make_user("ann"), make_user("bob")
    code, (mine, other) = table_with(("Ann", ann_user), ("Guest", None))
    code2, (owned,) = table_with(("Bob", bob_user))
    moved = accounts.claim_seats(ann_user, {code: other.token, code2: owned.token})
    assert moved == 0  # Ann already sits at `code`; Bob's seat is Bob's
    assert Seat.get_by_id(other.id).user_id is None
    assert Seat.get_by_id(owned.id).user_id == bob_user.id


# ----- deleting ------------------------------------------------------------------------
def test_deleting_while_playing_a_game_is_refused(browser):
    make_user("ann")
    ann, bob = browser(), browser()
    signin(ann, "ann")
    code = ann.create("Ann")
    bob.join(code, "Bob")
    ann.post(f"/t/{code}/start", {"version": ann.version()})
    response = ann.post("/account/delete", {"delete_password": PASSWORD})
    assert response.status_code == 409
    assert f"You are playing at table {code}: finish or leave that game first" in text(response)
    assert User.select().count() == 1 and signed_in_as(ann) == "ann"
    # Once she has left the game, she can.
    ann.post(f"/t/{code}/leave")
    response = ann.post("/account/delete", {"delete_password": PASSWORD})
    assert response.status_code == 200 and "Your account is deleted" in text(response)
    assert User.select().count() == 0


def test_deleting_needs_the_password(browser):
    make_user("ann")
    ann = browser()
    signin(ann, "ann")
    response = ann.post("/account/delete", {"delete_password": "wrong one"})
    assert response.status_code == 400 and "That is not your password." in text(response)
    assert User.select().count() == 1


def test_deleting_keeps_the_others_results_under_deleted_player(browser):
    ann_user, bob_user = make_user("ann"), make_user("bob")
    code, (a, b) = table_with(("Ann", ann_user), ("Bob", bob_user))
    finish(code, game_clean_win(a, b))
    lobby, (host, seated) = table_with(("Host", None), ("Ann", ann_user))
    ann = browser()
    signin(ann, "ann")
    response = ann.post("/account/delete", {"delete_password": PASSWORD})
    assert response.status_code == 200
    assert signed_in_as(ann) is None
    with ann.client.session_transaction() as s:
        assert "_user_id" not in s and not s.get("seats")
    # The login is gone, and so is every link to the person.
    assert User.get_or_none(User.username_lower == "ann") is None
    assert signin(browser(), "ann").status_code == 401
    assert not Seat.select().where(Seat.user == ann_user.id).exists()
    assert not Result.select().where(Result.user == ann_user.id).exists()
    # Bob's result stands; Ann's is there under "deleted player".
    rows = {r.name: r for r in Result.select().where(Result.table == code)}
    assert set(rows) == {"deleted player", "Bob"}
    assert rows["deleted player"].rank == 1 and rows["deleted player"].user_id is None
    assert rows["Bob"].user_id == bob_user.id
    page = browser().get(f"/t/{code}/games/1").data.decode()
    assert "deleted player" in page and "Ann" not in page
    record = GameRecord.get((GameRecord.table == code) & (GameRecord.number == 1)).record
    assert [p["name"] for p in record["players"]] == ["deleted player", "Bob"]
    assert "Ann" not in json.dumps(Table.get_by_id(code).state)
    # She left the lobby she was waiting in.
    assert Seat.get_by_id(seated.id).left
    # The name is free again.
    assert signup(browser(), "Ann").status_code == 303


# ----- the schema ----------------------------------------------------------------------
def test_an_existing_database_gets_the_new_column(tmp_path):
    path = tmp_path / "old.db"
    con = sqlite3.connect(path)
    con.executescript(
        """
        CREATE TABLE "table" ("code" VARCHAR(12) NOT NULL PRIMARY KEY, "status" VARCHAR(255)
          NOT NULL, "public" INTEGER NOT NULL, "rules" TEXT NOT NULL, "state" TEXT,
          "version" INTEGER NOT NULL, "game_number" INTEGER NOT NULL, "host_seat" INTEGER,
          "grace_seconds" INTEGER NOT NULL, "rejoin_seconds" INTEGER NOT NULL,
          "votes" TEXT NOT NULL, "created_at" DATETIME NOT NULL, "updated_at" DATETIME NOT NULL);
        CREATE TABLE "seat" ("id" INTEGER NOT NULL PRIMARY KEY, "table_id" VARCHAR(12) NOT NULL
          REFERENCES "table" ("code") ON DELETE CASCADE, "position" INTEGER NOT NULL,
          "name" VARCHAR(40) NOT NULL, "bot" VARCHAR(255), "token" VARCHAR(64) NOT NULL,
          "left" INTEGER NOT NULL, "joined_at" DATETIME NOT NULL);
        INSERT INTO "table" VALUES ('OLD111', 'lobby', 0, '{}', NULL, 0, 0, 1, 15, 180, '{}',
          '2024-01-01', '2024-01-01');
        INSERT INTO "seat" VALUES (1, 'OLD111', 0, 'Old Ann', NULL, 'tok', 0, '2024-01-01');
        """
    )
    con.commit()
    con.close()
    create_app(
        {"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": f"sqlite:///{path}", "INLINE_BOTS": 1}
    )
    with db.connection_context():
        assert "user_id" in {c.name for c in db.get_columns("seat")}
        assert Seat.get_by_id(1).name == "Old Ann" and Seat.get_by_id(1).user_id is None
        u = make_user("ann")
        Seat.update(user=u).where(Seat.id == 1).execute()
        assert Seat.get_by_id(1).user_id == u.id
    # A second start leaves it as it is.
    create_app(
        {"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": f"sqlite:///{path}", "INLINE_BOTS": 1}
    )
    with db.connection_context():
        assert Seat.get_by_id(1).user_id == u.id


def test_games_service_keeps_guest_joins_unowned(app):
    table, seat = tables.create_table("Ann")
    assert seat.user_id is None
    assert tables.join(table.code, "Bob").user_id is None

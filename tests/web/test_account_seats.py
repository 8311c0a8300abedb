"""Seats that follow the account, the guest's game moving to a new account, deleting
an account, and the schema of an existing database."""

from __future__ import annotations

import json
import re
import sqlite3

from app import create_app, tables
from app.features import accounts
from app.storage.models import GameRecord, Result, Seat, Table, User, db
from tests.web.account_helpers import (
    PASSWORD,
    cheap_hashing,  # noqa: F401 (an autouse fixture)
    finish,
    game_clean_win,
    make_user,
    signed_in_as,
    signin,
    signout,
    signup,
    table_with,
    text,
    user,
)


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


def test_claiming_skips_seats_owned_by_someone_else_and_second_seats(app, browser):
    ann_user, bob_user = make_user("ann"), make_user("bob")
    code, (mine, other) = table_with(app, ("Ann", ann_user), ("Guest", None))
    code2, (owned,) = table_with(app, ("Bob", bob_user))
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


def test_deleting_keeps_the_others_results_under_deleted_player(app, browser):
    ann_user, bob_user = make_user("ann"), make_user("bob")
    code, (a, b) = table_with(app, ("Ann", ann_user), ("Bob", bob_user))
    finish(code, game_clean_win(a, b))
    lobby, (host, seated) = table_with(app, ("Host", None), ("Ann", ann_user))
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
    with app.app_context():
        table, seat = tables.create_table("Ann")
        assert seat.user_id is None
        assert tables.join(table.code, "Bob").user_id is None

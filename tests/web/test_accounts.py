"""Optional accounts: sign up, sign in and out, passwords (the sign-in limit:
test_signin_limit.py; seats, deleting, the schema: test_account_seats.py)."""

from __future__ import annotations

import re

import pytest
from argon2 import PasswordHasher

from app.features import accounts
from app.storage.models import User
from tests.web.account_helpers import (
    PASSWORD,
    cheap_hashing,  # noqa: F401 (an autouse fixture)
    make_user,
    signed_in_as,
    signin,
    signout,
    signup,
    text,
    user,
)


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

"""The light and dark themes: the page is rendered in the device's colour scheme until a
choice is made in the menu's switch; the choice is kept in a cookie (this device) and on
the account (signed in), and a wrong choice changes nothing."""

from __future__ import annotations

import re
import sqlite3

from app import create_app
from app.storage.models import User
from tests.web.account_helpers import (  # noqa: F401 (cheap_hashing: an autouse fixture)
    cheap_hashing,
    signin,
    signup,
    user,
)
from tests.web.web_helpers import parse


def rendered(response) -> dict:
    """What the page says of its theme: <html data-theme>, the color-scheme meta, the
    theme-color metas (content, media), and which of the switch's buttons is pressed."""
    html = response.get_data(as_text=True)
    doc = parse(html)
    root = re.search(r"<html[^>]*>", html).group(0)
    theme = re.search(r'data-theme="([a-z]+)"', root)
    switch = doc.find("form", action="/theme")
    return {
        "data-theme": theme.group(1) if theme else None,
        "color-scheme": doc.find("meta", name="color-scheme").attrs["content"],
        "theme-color": [
            (m.attrs["content"], m.attrs.get("media"))
            for m in doc.find_all("meta", name="theme-color")
        ],
        "pressed": [
            b.attrs["value"] for b in switch.find_all("button") if b.attrs["aria-pressed"] == "true"
        ],
        "buttons": [b.text() for b in switch.find_all("button")],
    }


def choose(b, theme, back="/rules"):
    return b.post("/theme", {"theme": theme, "next": back})


def test_the_device_decides_until_a_choice_is_made(browser):
    ann = browser()
    page = rendered(ann.get("/"))
    assert page["data-theme"] is None
    assert page["color-scheme"] == "light dark"  # prefers-color-scheme picks one
    assert [media for _, media in page["theme-color"]] == [
        "(prefers-color-scheme:light)",
        "(prefers-color-scheme:dark)",
    ]
    assert page["pressed"] == ["device"]
    assert page["buttons"] == ["Light", "Dark", "As the device"]


def test_a_choice_is_remembered_on_this_device_and_brings_the_player_back(browser):
    ann = browser()
    answer = choose(ann, "light", back="/rules?lang=en")
    assert answer.status_code == 303 and answer.headers["Location"] == "/rules?lang=en"
    cookie = ann.client.get_cookie("theme")
    assert cookie.value == "light" and cookie.http_only and cookie.same_site == "Lax"
    for path in ("/", "/rules", "/leaderboard"):
        page = rendered(ann.get(path))
        assert page["data-theme"] == "light" and page["color-scheme"] == "light"
        assert page["theme-color"] == [("#cde", None)] and page["pressed"] == ["light"]
    choose(ann, "dark")
    page = rendered(ann.get("/"))
    assert page["data-theme"] == "dark" and page["color-scheme"] == "dark"
    assert page["theme-color"] == [("#102030", None)]
    choose(ann, "device")
    assert rendered(ann.get("/"))["color-scheme"] == "light dark"


def test_the_table_page_has_the_switch_in_its_menu(browser):
    ann = browser()
    code = ann.create("Ann")
    choose(ann, "dark", back=f"/t/{code}")
    page = ann.get(f"/t/{code}")
    assert rendered(page)["pressed"] == ["dark"]
    menu = parse(page.get_data(as_text=True)).find("form", action="/theme")
    assert menu.find("input", name="next").attrs["value"] == f"/t/{code}"


def test_a_wrong_choice_or_a_foreign_address_changes_nothing(browser):
    ann = browser()
    for wrong in ("blue", "", "LIGHT", "light "):
        answer = choose(ann, wrong)
        assert answer.status_code == 400
        assert "Choose a theme: light, dark or as the device." in answer.get_data(as_text=True)
        assert ann.client.get_cookie("theme") is None
    answer = choose(ann, "dark", back="//elsewhere.example/")
    assert answer.status_code == 303 and answer.headers["Location"] == "/"
    # Without the form's token, nothing is chosen either.
    refused = ann.client.post("/theme", data={"theme": "light"})
    assert refused.status_code == 400 and ann.client.get_cookie("theme").value == "dark"


def test_the_account_keeps_the_choice_for_its_other_devices(browser):
    ann = browser()
    signup(ann, "ann")
    assert user("ann").theme is None
    choose(ann, "light")
    assert user("ann").theme == "light"
    # Another device, signed in: the account's choice, with no cookie of its own.
    other = browser()
    assert rendered(other.get("/"))["data-theme"] is None
    signin(other, "ann")
    assert other.client.get_cookie("theme") is None
    assert rendered(other.get("/"))["data-theme"] == "light"
    # A device's own choice wins there, and becomes the account's.
    choose(other, "dark")
    assert user("ann").theme == "dark"
    assert rendered(other.get("/"))["data-theme"] == "dark"
    assert rendered(ann.get("/"))["data-theme"] == "light"  # its cookie says light
    # "As the device" clears the account's choice; that device keeps following itself.
    choose(other, "device")
    assert user("ann").theme is None
    assert rendered(other.get("/"))["color-scheme"] == "light dark"
    third = browser()
    signin(third, "ann")
    assert rendered(third.get("/"))["data-theme"] is None


def test_a_guest_choice_is_not_written_to_any_account(browser):
    bob = browser()
    choose(bob, "dark")
    signup(bob, "bob")
    assert user("bob").theme is None  # only a choice made signed in is the account's
    assert rendered(bob.get("/"))["data-theme"] == "dark"  # the device's cookie


def test_an_existing_database_gets_the_theme_column(tmp_path):
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:  # the user table as it was before themes
        db.execute(
            'CREATE TABLE "user" (id INTEGER PRIMARY KEY, username VARCHAR(20) NOT NULL,'
            " username_lower VARCHAR(20) NOT NULL UNIQUE, password_hash VARCHAR(255)"
            " NOT NULL, login_nonce VARCHAR(32) NOT NULL, created_at DATETIME NOT NULL,"
            " language VARCHAR(8))"
        )
        db.execute(
            'INSERT INTO "user" VALUES (1, ?, ?, ?, ?, ?, ?)',
            ("Ann", "ann", "hash", "nonce", "2026-01-01 00:00:00", "fr"),
        )
    create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": f"sqlite:///{path}"})
    with sqlite3.connect(path) as db:
        assert db.execute('SELECT username, theme FROM "user"').fetchall() == [("Ann", None)]
    create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": f"sqlite:///{path}"})
    assert User.get_by_id(1).theme is None

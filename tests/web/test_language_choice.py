"""Choosing a language: ?lang= switches and is remembered (cookie, account), a
guest's choice moves to their account, Accept-Language decides otherwise, every page
says its language and offers the switcher."""

from __future__ import annotations

import re
import sqlite3

import pytest

from app import create_app
from app.i18n import LANGUAGES, NAMES
from app.storage.models import User
from tests.web.account_helpers import (  # noqa: F401 (cheap_hashing: an autouse fixture)
    cheap_hashing,
    signin,
    signup,
    user,
)
from tests.web.web_helpers import parse


def lang_of(response) -> str:
    return re.search(r'<html lang="([A-Za-z-]+)"', response.data.decode()).group(1)


# ----- choosing ------------------------------------------------------------------------
def test_lang_switches_and_is_remembered_in_a_cookie(client):
    response = client.get("/?lang=fr")
    assert lang_of(response) == "fr"
    assert "Jouez à Skymo entre amis" in response.data.decode()
    cookie = client.get_cookie("lang")
    assert cookie.value == "fr" and cookie.http_only and cookie.max_age >= 30 * 24 * 3600
    # Any later page, without asking again, and whatever the browser prefers.
    response = client.get("/rules", headers={"Accept-Language": "de"})
    assert lang_of(response) == "fr"
    assert client.get("/leaderboard?lang=de").data.decode().count("Bestenliste") >= 1
    assert lang_of(client.get("/")) == "de"
    assert lang_of(client.get("/?lang=en")) == "en"
    assert client.get_cookie("lang").value == "en"
    # A language we do not speak changes nothing.
    assert lang_of(client.get("/?lang=xx")) == "en"
    assert client.get_cookie("lang").value == "en"


@pytest.mark.parametrize(
    "header, lang",
    [
        ("de-DE,de;q=0.9,en;q=0.8", "de"),
        ("fr-CH, fr;q=0.9, en;q=0.8", "fr"),
        ("es-ES,es;q=0.9,fr;q=0.5", "es"),
        ("es-419", "es"),
        ("it-IT,it;q=0.9,en-US;q=0.8,en;q=0.7", "it"),
        ("it-IT,en;q=0.5", "it"),  # a main language counts before the next choice
        ("de-AT,en;q=0.5", "de"),
        ("pt-BR,pt;q=0.9,en;q=0.8", "pt-BR"),
        ("pt", "pt-BR"),
        ("pt-PT,en;q=0.5", "pt-BR"),  # Portuguese readers: Brazil's before English
        ("nl-BE,fr;q=0.5", "nl"),
        ("nl", "nl"),
        ("en-US,pt-BR;q=0.5", "en"),
        ("pt-BR;q=0,nl;q=0.5", "nl"),  # q=0: not wanted
        ("ja-JP,zh;q=0.5", "en"),
        ("", "en"),
    ],
)
def test_accept_language_decides_without_a_choice(client, header, lang):
    response = client.get("/", headers={"Accept-Language": header})
    assert lang_of(response) == lang
    assert client.get_cookie("lang") is None  # the browser's wish is not a choice


def test_brazilian_portuguese_is_pt_BR_on_the_web_and_pt_BR_for_babel(client):
    """The web's tag (html lang, hreflang, ?lang=, cookie) is pt-BR; Babel's name for it,
    pt_BR, is also understood in a link, and the page is translated either way."""
    for asked in ("pt-BR", "pt_BR", "pt-br"):
        response = client.get(f"/?lang={asked}")
        assert lang_of(response) == "pt-BR", asked
        assert "Jogue Skymo com amigos" in response.data.decode()
        assert client.get_cookie("lang").value == "pt-BR"
    page = client.get("/rules").data.decode()  # the cookie: rules.pt-BR.md
    assert lang_of(client.get("/rules")) == "pt-BR" and "Como jogar Skymo" in page


@pytest.mark.parametrize(
    "lang, heading",
    [
        ("es", "Juega a Skymo con amigos"),
        ("it", "Gioca a Skymo con gli amici"),
        ("pt-BR", "Jogue Skymo com amigos"),
        ("nl", "Speel Skymo met vrienden"),
    ],
)
def test_each_new_language_by_choice_and_by_browser(app, lang, heading):
    chosen = app.test_client().get(f"/?lang={lang}")
    assert lang_of(chosen) == lang and heading in chosen.data.decode()
    header = {"Accept-Language": f"{lang},en;q=0.5"}
    wished = app.test_client().get("/signin", headers=header)
    assert lang_of(wished) == lang


def test_every_page_offers_the_switcher(client):
    for path in ("/", "/rules", "/leaderboard", "/signin", "/signup", "/t/NOSUCH"):
        for lang in LANGUAGES:
            doc = parse(client.get(f"{path}?lang={lang}").data)
            menu = doc.find("details", cls="lang-menu")
            assert menu is not None, path
            summary = menu.find("summary").text()
            assert lang.upper() in summary and len(summary) > 3  # "Langue : FR"
            links = menu.find_all("a")
            assert [a.attrs["hreflang"] for a in links] == list(LANGUAGES)
            assert [a.text() for a in links] == [NAMES[c] for c in LANGUAGES]
            current = [a.attrs["lang"] for a in links if a.attrs.get("aria-current")]
            assert current == [lang]
            for a in links:
                assert f"lang={a.attrs['lang']}" in a.attrs["href"]
                if path != "/t/NOSUCH":  # a page keeps its path in the other languages
                    assert a.attrs["href"].startswith(path)


def test_a_switch_keeps_the_pages_arguments(client):
    doc = parse(client.get("/leaderboard?by=avg_round&lang=de").data)
    hrefs = [a.attrs["href"] for a in doc.find("details", cls="lang-menu").find_all("a")]
    assert all("by=avg_round" in h for h in hrefs), hrefs


def test_the_account_remembers_its_language(browser, app):
    ann = browser()
    signup(ann, "ann")
    assert user("ann").language is None
    ann.get("/?lang=de")
    assert user("ann").language == "de"
    # Another device, without a cookie, in a browser that prefers French: German.
    other = browser()
    signin(other, "ann")
    response = other.get("/leaderboard", headers={"Accept-Language": "fr"})
    assert lang_of(response) == "de"
    # Choosing again on that device changes the account too.
    other.get("/?lang=fr")
    assert user("ann").language == "fr"
    assert lang_of(ann.get("/")) == "fr"  # the account wins over the old cookie
    other.get("/?lang=pt-BR")
    assert user("ann").language == "pt-BR"  # the tag, as the cookie and links say it
    assert lang_of(ann.get("/leaderboard")) == "pt-BR"


def test_a_guests_choice_moves_to_the_account(browser, app):
    bob = browser()
    bob.get("/?lang=fr")
    signup(bob, "bob")
    bob.get("/")
    assert user("bob").language == "fr"


def test_an_existing_database_gets_the_language_column(tmp_path):
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:  # the user table as it was before languages
        db.execute(
            'CREATE TABLE "user" (id INTEGER PRIMARY KEY, username VARCHAR(20) NOT NULL,'
            " username_lower VARCHAR(20) NOT NULL UNIQUE, password_hash VARCHAR(255)"
            " NOT NULL, login_nonce VARCHAR(32) NOT NULL, created_at DATETIME NOT NULL)"
        )
        db.execute(
            'INSERT INTO "user" VALUES (1, ?, ?, ?, ?, ?)',
            ("Ann", "ann", "hash", "nonce", "2026-01-01 00:00:00"),
        )
    create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": f"sqlite:///{path}"})
    with sqlite3.connect(path) as db:
        columns = [row[1] for row in db.execute('PRAGMA table_info("user")')]
        assert "language" in columns
        assert db.execute('SELECT username, language FROM "user"').fetchall() == [("Ann", None)]
    # And again on the migrated database: nothing to do, nothing fails.
    create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": f"sqlite:///{path}"})
    assert User.get_by_id(1).language is None

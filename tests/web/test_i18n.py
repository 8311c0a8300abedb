"""Languages: the pages in every language show no English, each player's pushes and
sockets are in their language, the rules page and the score sheet are translated
(choosing a language: test_language_choice.py)."""

from __future__ import annotations

import random
import re

import pytest
from flask_babel import force_locale, gettext

from app.i18n import LANGUAGES, NAMES
from app.live.hub import Connection
from app.storage.models import Seat
from tests.web.account_helpers import (  # noqa: F401 (cheap_hashing: an autouse fixture)
    cheap_hashing,
    finish,
    game_penalised_ender,
    make_user,
    signin,
    signup,
    table_with,
)
from tests.web.web_helpers import (
    Player,
    parse,
    phase_of,
    play_until,
    seat_table,
    start,
)

# Words of the English interface (a few are also words of a language: ALSO_THEIRS).
ENGLISH = {
    "the", "your", "you", "and", "with", "draw", "discard", "round", "rounds", "turn",
    "player", "players", "game", "games", "cards", "grid", "join", "leave", "sign",
    "account", "rules", "seats", "wins", "waiting", "left", "take", "keep", "of", "to",
    "is", "won", "rank", "next", "previous", "back", "password", "username", "leaderboard",
    "stats", "history", "results", "create", "play", "again", "host", "away", "column",
    "row", "rows", "columns", "cleared", "ended", "down", "pile", "shuffle",
    "penalty", "winner", "none", "yes", "no", "here",
}  # fmt: skip
# Words of the list above that a language writes too: Spanish, Italian and Portuguese
# "no" (Portuguese "no" is also "in the"), Dutch "is" and "of" ("or"); Italian and Dutch
# say "account" (and Italian "password") as English does.
ALSO_THEIRS = {
    "es": {"no"},
    "it": {"no", "account", "password"},
    "pt-BR": {"no"},
    "nl": {"is", "of", "account"},
}
TEXT_ATTRS = ("aria-label", "title", "placeholder", "hx-confirm", "alt", "data-done")


def visible_words(html: str, allowed: set[str]) -> list[str]:
    """The words a person can see or hear: text and the attributes screen readers read,
    less names the test gave (players, bots, codes)."""
    doc = parse(html)
    for script in doc.find_all("script") + doc.find_all("style"):
        script.children = []
    parts = [doc.text()]
    for node in doc.iter(templates=True):
        parts.extend(node.attrs.get(a, "") for a in TEXT_ATTRS)
    # Not words: the record format's name, and {placeholders} the page's script fills.
    text = re.sub(r"skymo\.game/1|\{\w+\}", " ", " ".join(parts))
    words = re.findall(r"[A-Za-zÀ-ÿ']+", text)
    return [w for w in words if w.lower() not in allowed and w not in allowed]


def english_in(html: str, allowed: set[str]) -> list[str]:
    return sorted({w.lower() for w in visible_words(html, allowed) if w.lower() in ENGLISH})


# ----- no English left -----------------------------------------------------------------
@pytest.fixture
def finished_game(app):
    """Ann (an account, penalised, second) and Bob: one finished game with results."""
    ann, bob = make_user("ann"), make_user("bob")
    code, (a, b) = table_with(app, ("Ann", ann), ("Bob", bob))
    finish(code, game_penalised_ender(a, b))
    return code


@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang != "en"])
def test_the_pages_show_no_english(browser, finished_game, lang):
    # The language menu names each language in itself (English among them).
    names = {"ann", "bob", "skymo"} | {w.lower() for n in NAMES.values() for w in n.split()}
    names |= {"brasil"} | ALSO_THEIRS.get(lang, set())
    people = seat_table(browser, names=("Ann", "Bob"), bots=("greedy",))
    host, guest = people
    for b in people:
        b.get(f"/?lang={lang}")
    code = host.code
    names |= {code.lower(), "gobbler"}
    pages = {}
    # The lobby as the host (rules form) and as a guest (summary), and as a visitor.
    pages["lobby host"] = host.get(f"/t/{code}").data.decode()
    pages["lobby guest"] = guest.get(f"/t/{code}").data.decode()
    visitor = browser()
    pages["lobby visitor"] = visitor.get(f"/t/{code}?lang={lang}").data.decode()
    start(host)
    players = [
        Player(b, n, random.Random(i)) for i, (b, n) in enumerate(zip(people, "AB", strict=True))
    ]
    pages["setup"] = host.get(f"/t/{code}").data.decode()
    seen = []
    for p in players:
        p.on_html = lambda html, doc: seen.append(html)
    assert play_until(players) in ("round_over", "game_over")
    pages["round over"] = host.get(f"/t/{code}").data.decode()
    assert phase_of(parse(pages["round over"])) in ("round_over", "game_over")
    # Every page the players saw while playing (each kind of turn, the log, banners).
    for n, html in enumerate(seen[:: max(1, len(seen) // 25)]):
        pages[f"play {n}"] = html
    for path in ("/", "/rules", "/leaderboard", "/signin", "/signup", "/t/NOSUCH"):
        pages[path] = host.get(path).data.decode()
    ann = browser()
    ann.get(f"/?lang={lang}")
    signin(ann, "ann")
    for path in ("/me/stats", "/me/history", "/account", "/leaderboard", "/u/bob"):
        pages[path] = ann.get(path).data.decode()
    pages["results"] = ann.get(f"/t/{finished_game}/games/1").data.decode()
    for step in (0, 3, 6, 99):  # a replay, from the deal to the end
        url = f"/t/{finished_game}/games/1/replay?step={step}"
        pages[f"replay {step}"] = ann.get(url).data.decode()
    pages["replay upload"] = ann.get("/replay").data.decode()
    # A score sheet: its list, a sheet with a penalised round, and a bad round.
    pages["sheets"] = ann.get("/score").data.decode()
    sheet = ann.post(
        "/score",
        {"player-1": "Ann", "player-2": "Bob", "end_score": "100"}
        | {"penalty_mode": "multiplier", "penalty_multiplier": "2", "penalty_flat": "10"},
    ).headers["Location"]
    rid = re.search(r'name="round_id" value="([^"]+)"', ann.get(sheet).data.decode()).group(1)
    ann.post(f"{sheet}/rounds", {"score-1": "12", "score-2": "5", "ender": "1", "round_id": rid})
    pages["sheet"] = ann.get(sheet).data.decode()
    pages["sheet error"] = ann.post(
        f"{sheet}/rounds", {"score-1": "x", "ender": "7", "round_id": "r"}
    ).data.decode()
    pages["sheet viewer"] = browser().get(f"{sheet}?lang={lang}").data.decode()
    pages["bad sign-in"] = (
        browser()
        .post(f"/signin?lang={lang}", {"username": "ann", "password": "wrong password"})
        .data.decode()
    )

    found = {where: english_in(html, names) for where, html in pages.items()}
    assert not {where: words for where, words in found.items() if words}
    for where, html in pages.items():
        if "<html" in html:
            assert f'<html lang="{lang}"' in html, where


def test_the_english_word_check_finds_english(app, client):
    """The check above can fail: on the English pages it finds the English words."""
    html = client.get("/?lang=en").data.decode()
    assert {"play", "with", "create", "join", "your", "the"} <= set(english_in(html, set()))
    html = client.get("/?lang=fr").data.decode()
    assert english_in(html.replace("Rejoindre", "Join"), set()) == ["join"]


# ----- pushes --------------------------------------------------------------------------
def test_each_player_gets_pushes_in_their_own_language(hub, browser):
    ann, bob = seat_table(browser, names=("Ann", "Bob"))
    code = ann.code
    got = {"fr": [], "de": [], "en": []}
    seats = {s.name: s.id for s in Seat.select().where(Seat.table == code)}
    conns = [
        Connection(code=code, seat_id=seats["Ann"], csrf="", send=got["fr"].append, locale="fr"),
        Connection(code=code, seat_id=seats["Bob"], csrf="", send=got["de"].append, locale="de"),
        Connection(code=code, seat_id=None, csrf="", send=got["en"].append, locale="en"),
    ]
    for c in conns:
        hub.add(c)
    try:
        start(ann)
        assert all(got.values()), {k: len(v) for k, v in got.items()}
        fr, de, en = (parse(got[k][-1]) for k in ("fr", "de", "en"))
        assert "Retournez 2 cartes de votre grille." in fr.text()
        assert "Decke 2 Karten deiner Auslage auf." in de.text()
        assert "This game has already started: you are watching." in en.text()
        assert english_in(got["fr"][-1], {"ann", "bob", code.lower()}) == []
        assert english_in(got["de"][-1], {"ann", "bob", code.lower()}) == []
        # A move by Ann reaches Bob in German and Ann in French.
        Player(ann, "Ann", random.Random(1)).act()
        assert "Ann hat" in parse(got["de"][-1]).text()
        assert "Ann a retourné" in parse(got["fr"][-1]).text()
    finally:
        for c in conns:
            hub.remove(c)


def test_pushes_in_spanish_italian_portuguese_and_dutch(hub, browser):
    """Two players (Brazilian Portuguese, Dutch) and two watchers (Spanish, Italian): one
    start, each push in its reader's language, with no English."""
    ann, bob = seat_table(browser, names=("Ann", "Bob"))
    code = ann.code
    got = {"pt-BR": [], "nl": [], "es": [], "it": []}
    seats = {s.name: s.id for s in Seat.select().where(Seat.table == code)}
    seat_of = {"pt-BR": seats["Ann"], "nl": seats["Bob"], "es": None, "it": None}
    conns = [
        Connection(code=code, seat_id=seat_of[lang], csrf="", send=got[lang].append, locale=lang)
        for lang in got
    ]
    for c in conns:
        hub.add(c)
    try:
        start(ann)
        assert all(got.values()), {k: len(v) for k, v in got.items()}
        text = {lang: parse(pushes[-1]).text() for lang, pushes in got.items()}
        assert "Vire 2 cartas da sua grade." in text["pt-BR"]
        assert "Draai 2 kaarten van je raster om." in text["nl"]
        assert "Esta partida ya ha empezado: estás mirando." in text["es"]
        assert "Questa partita è già iniziata: stai guardando." in text["it"]
        for lang, pushes in got.items():
            allowed = {"ann", "bob", code.lower()} | ALSO_THEIRS[lang]
            assert english_in(pushes[-1], allowed) == [], lang
        Player(ann, "Ann", random.Random(1)).act()
        assert "Ann heeft" in parse(got["nl"][-1]).text()
        assert "Ann virou" in parse(got["pt-BR"][-1]).text()
    finally:
        for c in conns:
            hub.remove(c)


def test_a_socket_keeps_the_language_of_its_page(live_server):
    """Against a real server: the socket remembers the language its page was in (the
    cookie the ?lang= choice set, or ?lang= on the socket's URL as the page writes it)."""
    import time

    import websocket

    from tests.web.web_helpers import LiveBrowser

    ann, bob = LiveBrowser(live_server.url), LiveBrowser(live_server.url)
    ann.get("/?lang=fr")
    code = ann.create("Ann")
    bob.join(code, "Bob")
    page = bob.get(f"/t/{code}?lang=de")
    assert f'ws-connect="/t/{code}/ws?lang=de&amp;v=' in page
    ann_ws = ann.socket()
    bob_ws = websocket.create_connection(
        live_server.url.replace("http://", "ws://") + f"/t/{code}/ws?lang=de",
        cookie=bob.cookie_header(),
        origin=live_server.url,
        timeout=2,
    )
    try:
        for ws in (ann_ws, bob_ws):
            ws.recv()  # the table at once, on connect
        assert ann.post(f"/t/{code}/start", {"version": ann.version()})[0] == 303
        texts = {}
        for who, ws in (("ann", ann_ws), ("bob", bob_ws)):
            deadline = time.monotonic() + 5
            while who not in texts and time.monotonic() < deadline:
                doc = parse(ws.recv())
                if doc.find("div", cls="board") is not None:
                    texts[who] = doc.text()
        assert "Retournez 2 cartes de votre grille." in texts["ann"]
        assert "Decke 2 Karten deiner Auslage auf." in texts["bob"]
    finally:
        ann_ws.close()
        bob_ws.close()


# ----- the rules page ------------------------------------------------------------------
@pytest.mark.parametrize(
    "lang, title",
    [
        ("fr", "Comment jouer à Skymo"),
        ("de", "So spielt man Skymo"),
        ("es", "Cómo jugar a Skymo"),
        ("it", "Come si gioca a Skymo"),
        ("pt-BR", "Como jogar Skymo"),
        ("nl", "Zo speel je Skymo"),
    ],
)
def test_the_rules_page_is_the_whole_translation(client, lang, title):
    """/rules shows docs/rules.<lang>.md: complete, not a summary (every section, list
    item and table row of the English rules has its counterpart)."""
    from pathlib import Path

    docs = Path(__file__).resolve().parents[2] / "docs"

    def shape(text: str) -> list[int]:
        lines = text.splitlines()
        return [
            sum(1 for line in lines if line.startswith("## ")),
            sum(1 for line in lines if re.match(r"\s*- ", line)),
            sum(1 for line in lines if line.startswith("|")),
            sum(1 for block in text.split("\n\n") if block.strip()),
        ]

    english = (docs / "rules.md").read_text(encoding="utf-8")
    translated = (docs / f"rules.{lang}.md").read_text(encoding="utf-8")
    assert shape(translated) == shape(english)
    assert len(translated) > 0.9 * len(english)
    doc = parse(client.get(f"/rules?lang={lang}").data)
    assert doc.find("h1").text() == title
    headings = [h.text() for h in doc.find_all("h2")]
    assert len(headings) == shape(english)[0]
    allowed = {"skymo"} | ALSO_THEIRS.get(lang, set())
    assert english_in(client.get(f"/rules?lang={lang}").data.decode(), allowed) == []


def test_score_sheet_viewers_get_the_sheet_in_their_language(app, browser):
    """A score sheet's viewers may read different languages: one rendering per language."""
    from app.web import score

    owner = browser()
    owner.get("/score?lang=en")
    sheet = owner.post(
        "/score",
        {"player-1": "Ann", "player-2": "Bob", "end_score": "100"}
        | {"penalty_mode": "multiplier", "penalty_multiplier": "2", "penalty_flat": "10"},
    ).headers["Location"]
    code = sheet.rsplit("/", 1)[1]
    got = {"fr": [], "de": []}
    conns = [
        Connection(code=code, seat_id=None, csrf="", send=got[lang].append, locale=lang)
        for lang in got
    ]
    for c in conns:
        app.extensions[score.SHEETS].add(c)
    try:
        rid = re.search(r'name="round_id" value="([^"]+)"', owner.get(sheet).data.decode())
        data = {"score-1": "12", "score-2": "5", "ender": "1", "round_id": rid.group(1)}
        assert owner.post(f"{sheet}/rounds", data).status_code == 303
        fr, de = parse(got["fr"][-1]).text(), parse(got["de"][-1]).text()
        assert "Feuille de scores" in fr and "12 devient 24 (×2)" in fr
        assert "Punkteblatt" in de and "aus 12 wird 24 (×2)" in de
        for lang in got:
            assert english_in(got[lang][-1], {"ann", "bob", code.lower()}) == [], lang
    finally:
        for c in conns:
            app.extensions[score.SHEETS].remove(c)


def test_the_web_manifest_in_the_pages_language(client):
    """A browser fetches the manifest without cookies: the page's link carries ?lang=."""
    names = {}
    for lang in LANGUAGES:
        doc = parse(client.get(f"/?lang={lang}").data)
        href = doc.find("link", rel="manifest").attrs["href"]
        assert f"lang={lang}" in href
        manifest = client.application.test_client().get(href).get_json()  # no cookie
        assert manifest["lang"] == lang
        names[lang] = manifest["name"]
    assert names == {
        "en": "Skymo: the card game with friends",
        "fr": "Skymo\xa0: le jeu de cartes entre amis",
        "de": "Skymo: das Kartenspiel mit Freunden",
        "es": "Skymo: el juego de cartas con amigos",
        "it": "Skymo: il gioco di carte con gli amici",
        "pt-BR": "Skymo: o jogo de cartas com amigos",
        "nl": "Skymo: het kaartspel met vrienden",
    }


def test_watching_a_replay_never_reads_as_playing_again(app):
    """German players read "Spiel wiederholen" (the replay) as "play again", which sits
    beside it: the replay's words say watching."""
    with app.test_request_context("/?lang=de"), force_locale("de"):
        again = gettext("Play again")
        for replay in ("Replay the game", "Replay a game"):
            said = gettext(replay)
            assert said != replay and "wiederhol" not in said.lower(), said
            assert "ansehen" in said and again not in said

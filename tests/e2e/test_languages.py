"""Two people at one table in two languages (a French phone and a German desktop; a
Brazilian phone and a Dutch desktop) play a round by clicks; every push each of them
receives is in their own language."""

from __future__ import annotations

import random
import re
import time

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.e2e_helpers import (
    DESKTOP,
    PHONE,
    RESULTS,
    click_and_wait_change,
    mark_alive,
    open_rules,
    settle,
    still_alive,
    sync,
    version,
)

pytestmark = pytest.mark.e2e

# English interface words that are neither French nor German words.
ENGLISH = re.compile(
    r"\b(the|your|you|and|draw|discard|round|turn|player|game|cards|grid|join|leave|"
    r"waiting|left|take|keep|of|is|won|next|back|pile|ended|cleared|down)\b",
    re.IGNORECASE,
)
ROUND_DONE = ".board.phase-round_over, " + RESULTS


@pytest.fixture
def server_env():
    return {"SKYMO_NEXT_ROUND_SECONDS": "600", "SKYMO_BOT_DELAY": "0.1"}


def english(page: Page, also_theirs: tuple[str, ...] = ()) -> list[str]:
    """English words in what the page shows and reads out (names are Léa and Hans, Bruna
    and Daan), less those the page's language writes too (Dutch "is", "of")."""
    text = page.evaluate(
        """() => document.body.innerText + ' ' + [...document.querySelectorAll(
            '[aria-label],[title],[placeholder]')].map(e => [e.getAttribute('aria-label'),
            e.getAttribute('title'), e.getAttribute('placeholder')].join(' ')).join(' ')"""
    )
    return sorted(set(m.lower() for m in ENGLISH.findall(text)) - set(also_theirs))


def act(page: Page, rng: random.Random) -> str | None:
    """One thing this page's player can do now, found without reading any text."""
    settle(page)
    if page.locator(ROUND_DONE).count():
        return None
    reveal = page.locator("form.act-reveal button.card")
    if reveal.count():
        click_and_wait_change(page, reveal.nth(rng.randrange(reveal.count())))
        return "reveal"
    draw = page.locator(".actions form").filter(has=page.locator("input[value='draw']"))
    if not draw.count():
        return None
    click_and_wait_change(page, draw.locator("button"))
    targets = page.locator("form.act-keep_drawn button.card")
    down = page.locator("form.act-keep_drawn button.card.back")
    target = down.first if down.count() else targets.first
    click_and_wait_change(page, target)
    return "draw and keep"


def shoot(page: Page, path) -> None:
    """The top of the page as the player sees it (banner, header and language menu)."""
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=path)


def last_log(page: Page) -> str:
    return page.locator(".log li").first.inner_text()


def play_a_round(
    phone: Page, desk: Page, phone_lang: str, desk_lang: str, also=None, after_move=None
):
    """Both play by clicks until the round is over; returns the banners and log lines
    each page received by push (keyed by its language). Every page stays without English
    words (`also`: the ones a language writes too) and is never reloaded. after_move(phone,
    desk) runs after each move has reached the other page."""
    also = also or {}
    rng = random.Random(12)
    seen = {phone_lang: set(), desk_lang: set()}
    deadline = time.monotonic() + 120
    while not all(p.locator(ROUND_DONE).count() for p in (phone, desk)):
        assert time.monotonic() < deadline, "the round did not end"
        moved = False
        for page, other, lang in ((phone, desk, desk_lang), (desk, phone, phone_lang)):
            if act(page, rng):
                moved = True
                sync([other], version(page))  # a push: the other page did not reload
                settle(other)
                seen[lang].add(other.locator(".banner").inner_text())
                if other.locator(".log li").count():
                    seen[lang].add(last_log(other))
                assert english(other, also.get(lang, ())) == [], (lang, english(other))
                if after_move is not None:
                    after_move(phone, desk)
        if not moved:
            sync([phone, desk], max(version(phone), version(desk)))
    for page in (phone, desk):
        settle(page)
        assert still_alive(page), "a page reloaded: the moves were not pushed"
    return {lang: " | ".join(sorted(texts)) for lang, texts in seen.items()}


def host_a_small_table(page: Page, base: str, lang: str, heading: str, words: dict) -> str:
    """From the home page in `lang` (its words for the home page's and the rules form's
    labels): a table with a 2 × 2 grid and one card turned at the start, hosted by
    words["host"]; returns the invite link."""
    page.goto(base + "/")
    expect(page.locator("html")).to_have_attribute("lang", lang)
    expect(page.get_by_role("heading", level=1)).to_have_text(heading)
    page.get_by_label(words["name"]).fill(words["host"])
    page.get_by_role("button", name=words["create"]).click()
    page.wait_for_url(re.compile(r"/t/[A-Z0-9]+$"))
    settle(page)
    form = page.locator("#rules-form")
    open_rules(page)  # folded on a short lobby
    form.get_by_label(words["rows"], exact=True).fill("2")
    form.get_by_label(words["cols"], exact=True).fill("2")
    form.get_by_label(words["flips"], exact=True).fill("1")
    click_and_wait_change(page, form.get_by_role("button", name=words["save"]))
    return page.locator("#invite").input_value()


def join_in(page: Page, invite: str, lang: str, label: str, name: str, button: str) -> None:
    """Open the invite in `lang` and take a seat (the join form's `label` and `button`)."""
    page.goto(invite)
    expect(page.locator("html")).to_have_attribute("lang", lang)
    settle(page)
    page.locator("#join").get_by_label(label).fill(name)
    with page.expect_navigation():
        page.locator("#join").get_by_role("button", name=button).click()
    settle(page)


def test_a_french_phone_and_a_german_desktop_at_one_table(server, new_context, screenshots):
    # Neither chooses: each browser's own language (Accept-Language) decides.
    phone = new_context(**PHONE, locale="fr-FR").new_page()
    desk = new_context(**DESKTOP, locale="de-DE").new_page()

    french = {
        "host": "Léa",
        "name": "Votre nom",
        "create": "Créer une table",
        "rows": "Rangées",
        "cols": "Colonnes",
        "flips": "Cartes retournées au début",
        "save": "Enregistrer les règles",
    }
    invite = host_a_small_table(phone, server.url, "fr", "Jouez à Skymo entre amis", french)
    join_in(desk, invite, "de", "Dein Name", "Hans", "Beitreten")
    # The join reached the phone over its socket, in French.
    expect(phone.locator("#seats")).to_contain_text("2 sur 8")
    expect(desk.locator("#seats")).to_contain_text("2 von 8")
    for page in (phone, desk):
        mark_alive(page)

    click_and_wait_change(phone, phone.get_by_role("button", name="Lancer la partie"))
    sync([desk], version(phone))
    expect(phone.locator(".banner")).to_contain_text("Retournez 1 carte de votre grille.")
    expect(desk.locator(".banner")).to_contain_text("Decke 1 Karte deiner Auslage auf.")
    shoot(phone, screenshots / "i18n-fr-phone-setup.png")
    shoot(desk, screenshots / "i18n-de-desktop-setup.png")

    shot = []

    def shoot_once_the_log_fills(phone: Page, desk: Page) -> None:
        if not shot and desk.locator(".log li").count() >= 4:
            shoot(phone, screenshots / "i18n-fr-phone-play.png")
            shoot(desk, screenshots / "i18n-de-desktop-play.png")
            shot.append(True)

    seen = play_a_round(phone, desk, "fr", "de", after_move=shoot_once_the_log_fills)
    fr, de = seen["fr"], seen["de"]
    # The move log and banners each received, in their language, with card articles.
    assert re.search(r"Hans a (pioché et gardé|retourné) un -?\d+", fr), fr
    assert re.search(r"Léa hat eine -?\d+ (gezogen und behalten|aufgedeckt)", de), de
    assert re.search(r"À vous\xa0: piochez une carte ou prenez le -?\d+\.", fr), fr
    assert re.search(r"Du bist dran: Ziehe eine Karte oder nimm die -?\d+\.", de), de
    # The round's results, each in their language.
    expect(phone.locator("#round-h, #final-h").first).to_contain_text(
        re.compile(r"Résultats de la manche 1|gagne|ex æquo")
    )
    expect(desk.locator("#round-h, #final-h").first).to_contain_text(
        re.compile(r"Ergebnis der Runde 1|gewinnt|gemeinsam")
    )
    assert english(phone) == [] and english(desk) == []
    phone.screenshot(path=screenshots / "i18n-fr-phone-results.png", full_page=True)
    desk.screenshot(path=screenshots / "i18n-de-desktop-results.png", full_page=True)

    # Switching on the phone: the menu in the header, then the page and its pushes in
    # English, remembered.
    phone.evaluate("window.scrollTo(0, 0)")
    phone.locator("details.lang-menu summary").click()
    phone.screenshot(path=screenshots / "i18n-fr-phone-menu.png")
    with phone.expect_navigation():
        phone.locator("details.lang-menu").get_by_role("link", name="English").click()
    expect(phone.locator("html")).to_have_attribute("lang", "en")
    phone.reload()
    expect(phone.locator("html")).to_have_attribute("lang", "en")


def test_a_brazilian_phone_and_a_dutch_desktop_at_one_table(server, new_context, screenshots):
    # Neither chooses: each browser's own language (Accept-Language) decides.
    phone = new_context(**PHONE, locale="pt-BR").new_page()
    desk = new_context(**DESKTOP, locale="nl-NL").new_page()
    dutch = {"nl": ("is", "of")}

    portuguese = {
        "host": "Bruna",
        "name": "Seu nome",
        "create": "Criar uma mesa",
        "rows": "Linhas",
        "cols": "Colunas",
        "flips": "Cartas viradas no início",
        "save": "Salvar as regras",
    }
    invite = host_a_small_table(phone, server.url, "pt-BR", "Jogue Skymo com amigos", portuguese)
    shoot(phone, screenshots / "i18n-pt-BR-phone-lobby.png")

    join_in(desk, invite, "nl", "Je naam", "Daan", "Meedoen")
    expect(phone.locator("#seats")).to_contain_text("2 de 8")  # pushed, in Portuguese
    expect(desk.locator("#seats")).to_contain_text("2 van 8")
    for page in (phone, desk):
        mark_alive(page)

    click_and_wait_change(phone, phone.get_by_role("button", name="Começar a partida"))
    sync([desk], version(phone))
    expect(phone.locator(".banner")).to_contain_text("Vire 1 carta da sua grade.")
    expect(desk.locator(".banner")).to_contain_text("Draai 1 kaart van je raster om.")
    shoot(phone, screenshots / "i18n-pt-BR-phone-setup.png")
    shoot(desk, screenshots / "i18n-nl-desktop-setup.png")

    seen = play_a_round(phone, desk, "pt-BR", "nl", dutch)
    pt, nl = seen["pt-BR"], seen["nl"]
    assert re.search(r"Daan (comprou e ficou com|virou) um -?\d+", pt), pt
    assert re.search(r"Bruna heeft een -?\d+ (getrokken en gehouden|omgedraaid)", nl), nl
    assert re.search(r"Sua vez: compre uma carta ou pegue o -?\d+\.", pt), pt
    assert re.search(r"Jouw beurt: trek een kaart of pak de -?\d+\.", nl), nl
    expect(phone.locator("#round-h, #final-h").first).to_contain_text(
        re.compile(r"Resultados da rodada 1|venceu|dividem a vitória")
    )
    expect(desk.locator("#round-h, #final-h").first).to_contain_text(
        re.compile(r"Uitslag van ronde 1|wint|winnen samen")
    )
    assert english(phone) == [] and english(desk, dutch["nl"]) == []
    phone.screenshot(path=screenshots / "i18n-pt-BR-phone-results.png", full_page=True)
    desk.screenshot(path=screenshots / "i18n-nl-desktop-results.png", full_page=True)

    # The header's menu lists every language in its own name; the phone picks Dutch.
    phone.evaluate("window.scrollTo(0, 0)")
    phone.locator("details.lang-menu summary").click()
    links = phone.locator("details.lang-menu a")
    expect(links).to_have_text(
        ["English", "Français", "Deutsch", "Español", "Italiano", "Português (Brasil)",
         "Nederlands"]
    )  # fmt: skip
    phone.screenshot(path=screenshots / "i18n-pt-BR-phone-menu.png")
    with phone.expect_navigation():
        phone.locator("details.lang-menu").get_by_role("link", name="Nederlands").click()
    expect(phone.locator("html")).to_have_attribute("lang", "nl")
    phone.reload()
    expect(phone.locator("html")).to_have_attribute("lang", "nl")
    expect(phone.locator(".banner, #round-h, #final-h").first).to_be_visible()

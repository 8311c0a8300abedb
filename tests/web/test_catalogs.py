"""The translation catalogs: every string marked in the code and templates is in the
French and German catalogs, translated, not fuzzy, with the same placeholders.

A failure names the missing strings: run the extract / update commands of the README's
contributor notes, translate, and the test passes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from app.i18n import LANGUAGES, TRANSLATIONS, compile_catalogs

ROOT = Path(__file__).resolve().parent.parent.parent
KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2), "_l": None, "lazy_gettext": None}
PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]")
TRANSLATED = [lang for lang in LANGUAGES if lang != "en"]


def marked_strings() -> set[str]:
    """Every msgid marked in the sources now (the catalog may be stale: this reads the
    sources themselves, with the same method map as babel.cfg)."""
    found = set()
    methods = [("app/**.py", "python"), ("templates/**.html", "jinja2")]
    for _file, _line, message, _comments, _context in extract_from_dir(
        str(ROOT), method_map=methods, keywords=KEYWORDS
    ):
        if not (_file.startswith("app") or _file.startswith("templates")):
            continue
        found.add(message[0] if isinstance(message, tuple) else message)
    return found


def catalog(lang: str):
    with (TRANSLATIONS / lang / "LC_MESSAGES" / "messages.po").open("rb") as f:
        return read_po(f, locale=lang)


@pytest.fixture(scope="module")
def marked():
    strings = marked_strings()
    assert len(strings) > 100  # the extraction itself works
    return strings


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_marked_string_is_translated(lang, marked):
    cat = catalog(lang)
    by_id = {}
    for m in cat:
        if m.id:
            by_id[m.id[0] if isinstance(m.id, tuple) else m.id] = m
    missing = sorted(s for s in marked if s not in by_id)
    assert not missing, f"{lang}: not in the catalog (run pybabel extract/update): {missing}"
    untranslated = sorted(
        key
        for key, m in by_id.items()
        if key in marked and (not m.string or (isinstance(m.string, tuple) and not all(m.string)))
    )
    assert not untranslated, f"{lang}: no translation for {untranslated}"
    fuzzy = sorted(key for key, m in by_id.items() if key in marked and m.fuzzy)
    assert not fuzzy, f"{lang}: fuzzy (check and remove the flag): {fuzzy}"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_translations_keep_the_placeholders(lang):
    """A translation that drops or misspells %(name)s would raise at render time."""
    wrong = []
    for m in catalog(lang):
        if not m.id or not m.string:
            continue
        ids = m.id if isinstance(m.id, tuple) else (m.id,)
        strings = m.string if isinstance(m.string, tuple) else (m.string,)
        expected = set(PLACEHOLDER.findall(ids[-1])) - {"num"}
        for s in strings:
            if set(PLACEHOLDER.findall(s)) - {"num"} != expected:
                wrong.append((ids[0], s))
    assert not wrong, f"{lang}: placeholders differ: {wrong}"


def test_catalogs_compile_when_missing_or_older(tmp_path):
    """compile_catalogs (run by create_app) builds each .mo from its .po when the .mo is
    missing or older, and leaves an up-to-date one alone."""
    import os
    import shutil

    from babel.support import Translations

    for lang in TRANSLATED:
        folder = tmp_path / lang / "LC_MESSAGES"
        folder.mkdir(parents=True)
        shutil.copy(TRANSLATIONS / lang / "LC_MESSAGES" / "messages.po", folder)
    built = compile_catalogs(tmp_path)
    assert sorted(p.parent.parent.name for p in built) == sorted(TRANSLATED)
    fr = Translations.load(str(tmp_path), ["fr"])
    assert fr.gettext("Start the game") == "Lancer la partie"
    assert compile_catalogs(tmp_path) == []  # up to date: nothing rebuilt
    po = tmp_path / "de" / "LC_MESSAGES" / "messages.po"
    later = po.with_suffix(".mo").stat().st_mtime + 10
    os.utime(po, (later, later))
    assert [p.parent.parent.name for p in compile_catalogs(tmp_path)] == ["de"]


def test_french_punctuation_keeps_its_space_attached():
    """French puts a space before : ; ! ? and inside « »: a non-breaking one, so that a
    narrow phone never starts a line with the colon."""
    loose = []
    for m in catalog("fr"):
        if not m.id:
            continue  # the header
        strings = m.string if isinstance(m.string, tuple) else (m.string,)
        loose += [s for s in strings if s and re.search(r"\S [:;!?»]|« ", s)]
    assert not loose, f"fr: use a non-breaking space (\\u00a0) in: {loose}"

"""The translation catalogs: every string marked in the code and templates is in every
language's catalog, translated, not fuzzy, with the same placeholders and the language's
plural forms.

A failure names the missing strings: run the extract / update commands of the README's
contributor notes, translate, and the test passes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from app.i18n import LANGUAGES, TRANSLATIONS, babel_name, compile_catalogs

ROOT = Path(__file__).resolve().parent.parent.parent
KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2), "_l": None, "lazy_gettext": None}
PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]")
TRANSLATED = [lang for lang in LANGUAGES if lang != "en"]
FOLDERS = [babel_name(lang) for lang in TRANSLATED]  # pt-BR's catalog is pt_BR/


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


def catalog(lang: str, folder: Path = TRANSLATIONS):
    with (folder / babel_name(lang) / "LC_MESSAGES" / "messages.po").open("rb") as f:
        return read_po(f, locale=babel_name(lang))


def problems(cat, marked: set[str]) -> list[str]:
    """What keeps `cat` from covering `marked`: strings missing (or only obsolete: #~),
    untranslated, or fuzzy."""
    by_id = {}
    for m in cat:
        if m.id:
            by_id[m.id[0] if isinstance(m.id, tuple) else m.id] = m
    found = [f"not in the catalog (run pybabel extract/update): {s!r}" for s in marked - set(by_id)]
    for key, m in by_id.items():
        if key not in marked:
            continue
        if not m.string or (isinstance(m.string, tuple) and not all(m.string)):
            found.append(f"no translation for {key!r}")
        if m.fuzzy:
            found.append(f"fuzzy (check and remove the flag): {key!r}")
    return sorted(found)


@pytest.fixture(scope="module")
def marked():
    strings = marked_strings()
    assert len(strings) > 100  # the extraction itself works
    return strings


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_marked_string_is_translated(lang, marked):
    assert problems(catalog(lang), marked) == [], lang


def test_every_language_has_its_catalog_and_every_catalog_a_language():
    folders = {po.parent.parent.name for po in TRANSLATIONS.glob("*/LC_MESSAGES/messages.po")}
    assert folders == set(FOLDERS)


def test_a_broken_catalog_fails_the_check(tmp_path, marked):
    """The check above can fail: a copy of a catalog with one string removed, one made
    obsolete (#~: the string is still used) and one flagged fuzzy names all three."""
    po = TRANSLATIONS / babel_name(TRANSLATED[-1]) / "LC_MESSAGES" / "messages.po"
    text = po.read_text(encoding="utf-8")
    entries = text.split("\n\n")
    gone, old, unsure = (
        next(i for i, e in enumerate(entries) if f'msgid "{key}"' in e)
        for key in ("Start the game", "Your grid", "Next round")
    )
    entries[old] = "\n".join(
        "#~ " + line for line in entries[old].splitlines() if not line.startswith("#,")
    )
    entries[unsure] = "#, fuzzy\n" + entries[unsure]
    del entries[gone]
    broken = tmp_path / babel_name(TRANSLATED[-1]) / "LC_MESSAGES"
    broken.mkdir(parents=True)
    (broken / "messages.po").write_text("\n\n".join(entries), encoding="utf-8")
    found = problems(catalog(TRANSLATED[-1], tmp_path), marked)
    assert found == [
        "fuzzy (check and remove the flag): 'Next round'",
        "not in the catalog (run pybabel extract/update): 'Start the game'",
        "not in the catalog (run pybabel extract/update): 'Your grid'",
    ]
    assert problems(catalog(TRANSLATED[-1]), marked) == []  # the original passes


@pytest.mark.parametrize("lang", TRANSLATED)
def test_plural_forms_are_the_languages(lang):
    """The header's plural rule is Babel's for the language (Dutch 2 forms, Spanish,
    Italian, Portuguese and French 3: one, "many" for millions, other), and every plural
    string gives each form."""
    from babel import Locale
    from babel.messages.plurals import get_plural

    cat = catalog(lang)
    expected = get_plural(Locale.parse(babel_name(lang)))
    assert (cat.num_plurals, cat.plural_expr) == (expected.num_plurals, expected.plural_expr)
    plurals = [m for m in cat if m.id and isinstance(m.id, tuple)]
    assert plurals
    for m in plurals:
        assert len(m.string) == cat.num_plurals and all(m.string), (lang, m.id)


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

    for name in FOLDERS:
        folder = tmp_path / name / "LC_MESSAGES"
        folder.mkdir(parents=True)
        shutil.copy(TRANSLATIONS / name / "LC_MESSAGES" / "messages.po", folder)
    built = compile_catalogs(tmp_path)
    assert sorted(p.parent.parent.name for p in built) == sorted(FOLDERS)
    fr = Translations.load(str(tmp_path), ["fr"])
    assert fr.gettext("Start the game") == "Lancer la partie"
    pt = Translations.load(str(tmp_path), [babel_name("pt-BR")])
    assert pt.gettext("Start the game") == "Começar a partida"
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

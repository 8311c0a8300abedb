"""Languages: Flask-Babel set up once; the choice of language per request; the few
phrases built from game values (a card with its article, a penalty, a list of names).

Every string a person sees goes through `gettext` (`_` in templates and code). The
catalogs live in `app/translations/<lang>/LC_MESSAGES/messages.po`; the compiled `.mo`
files are built from them when the app starts (see `compile_catalogs`).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from babel.lists import format_list
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from flask import request
from flask_babel import Babel, format_decimal, format_percent, get_locale
from flask_babel import gettext as _

LANGUAGES = ("en", "fr", "de")
DEFAULT = "en"
TRANSLATIONS = Path(__file__).resolve().parent / "translations"

babel = Babel()
log = logging.getLogger(__name__)


def select_locale() -> str:
    """?lang= on any page, else the remembered cookie, else the browser's preference."""
    chosen = request.args.get("lang") or request.cookies.get("lang")
    if chosen in LANGUAGES:
        return chosen
    return request.accept_languages.best_match(LANGUAGES) or DEFAULT


# ----- phrases built from game values ---------------------------------------------------
def card(value) -> str:
    """A card value with its article: 'a 7', 'an 8' (French 'un 7', German 'eine 7')."""
    if value in (8, 11):
        return _("an %(card)s", card=value)
    return _("a %(card)s", card=value)


def describe_penalty(penalty) -> str:
    """The ender's penalty of a RuleSet: '×2', '+10', '×2 then +10'."""
    if penalty.mode == "multiplier":
        return f"×{penalty.multiplier}"
    if penalty.mode == "flat":
        return f"+{penalty.flat}"
    return _("×%(times)s then +%(plus)s", times=penalty.multiplier, plus=penalty.flat)


def rules_summary(rules) -> str:
    """A short line for lists of tables: '3×4, to 100, ender ×2'."""
    parts = [
        f"{rules.rows}×{rules.cols}",
        _("to %(score)s", score=rules.end_score),
        _("ender %(penalty)s", penalty=describe_penalty(rules.penalty)),
    ]
    if rules.clear_rows:
        parts.append(_("rows clear"))
    if rules.initial_flips != 2:
        parts.append(_("%(count)s flips", count=rules.initial_flips))
    return ", ".join(parts)


def bot_label(kind: str) -> str:
    return {
        "random": _("random bot"),
        "greedy": _("greedy bot"),
        "strong": _("strong bot"),
        "expert": _("expert bot"),
    }.get(kind, _("bot"))


def bot_kind_names() -> dict[str, str]:
    return {
        "random": _("random"),
        "greedy": _("greedy"),
        "strong": _("strong"),
        "expert": _("expert"),
    }


def and_list(names) -> str:
    """'Ann and Bob', 'Ann, Bob and Cy' in the current language (Babel's list patterns)."""
    names = [str(n) for n in names]
    return format_list(names, locale=str(get_locale())) if names else ""


def percent(x) -> str:
    return format_percent(x)


def decimal(x) -> str:
    return format_decimal(x, format="0.0")


# ----- compiled catalogs ---------------------------------------------------------------
def compile_catalogs(folder: Path = TRANSLATIONS) -> list[Path]:
    """Build each `messages.mo` from its `.po` when missing or older, so `pip install -e .`
    and `python -m app` are all it takes (the .mo files are not in the repository).
    Returns the files built."""
    built = []
    for po in sorted(folder.glob("*/LC_MESSAGES/messages.po")):
        mo = po.with_suffix(".mo")
        if mo.exists() and mo.stat().st_mtime >= po.stat().st_mtime:
            continue
        with po.open("rb") as f:
            catalog = read_po(f, locale=po.parent.parent.name)
        tmp = mo.with_name(f"messages.{os.getpid()}.mo.tmp")
        try:
            with tmp.open("wb") as f:
                write_mo(f, catalog)
            tmp.replace(mo)  # atomic: a reader never sees half a catalog
        except OSError as exc:  # a read-only install: serve what is there
            log.warning("cannot compile %s: %s", po, exc)
            continue
        built.append(mo)
    return built


def init_app(app) -> None:
    app.config.setdefault("BABEL_DEFAULT_LOCALE", DEFAULT)
    app.config.setdefault("BABEL_TRANSLATION_DIRECTORIES", str(TRANSLATIONS))
    compile_catalogs()
    babel.init_app(app, locale_selector=select_locale)
    app.jinja_env.globals.update(
        card=card,
        describe_penalty=describe_penalty,
        bot_label=bot_label,
        and_list=and_list,
    )
    app.jinja_env.filters.update(percent=percent, decimal=decimal)

    @app.context_processor
    def language():
        return {"lang": str(get_locale()), "languages": LANGUAGES}

"""Languages: Flask-Babel set up once; the choice of language per request; the few
phrases built from game values (a card with its article, a penalty, a list of names).

Every string a person sees goes through `gettext` (`_` in templates and code). The
catalogs live in `app/translations/<lang>/LC_MESSAGES/messages.po`; the compiled `.mo`
files are built from them when the app starts (see `compile_catalogs`).
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path

from babel import Locale
from babel.lists import format_list
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from flask import current_app, request, url_for
from flask_babel import (
    Babel,
    force_locale,
    format_decimal,
    format_percent,
    get_locale,
    get_translations,
)
from flask_login import current_user
from markupsafe import Markup

from app.storage.models import DELETED_NAME, User

# Languages as the web names them (BCP 47 tags: html lang, hreflang, ?lang=, the cookie,
# the account's choice). Babel and the catalog folders write a region with "_" (pt_BR).
LANGUAGES = ("en", "fr", "de", "es", "it", "pt-BR", "nl")
DEFAULT = "en"
# Each language named in itself, as language menus do (a reader finds their own).
NAMES = {
    "en": "English",
    "fr": "Français",
    "de": "Deutsch",
    "es": "Español",
    "it": "Italiano",
    "pt-BR": "Português (Brasil)",
    "nl": "Nederlands",
}
# Any spelling of a tag we speak ("pt_BR", "pt-br") -> the tag; a main language alone
# ("pt", as in "pt-PT" or "de" in "de-AT") -> the variant we speak of it.
SPOKEN = {tag.lower(): tag for tag in LANGUAGES}
BY_MAIN = {tag.split("-")[0].lower(): tag for tag in LANGUAGES}
COOKIE = "lang"
COOKIE_AGE = 60 * 60 * 24 * 365
TRANSLATIONS = Path(__file__).resolve().parent / "translations"

babel = Babel()
log = logging.getLogger(__name__)


# ----- translating ---------------------------------------------------------------------
# Flask-Babel looks the catalog up through the app context on every call (dozens per
# table rendering). A rendering binds it once (`bound`); elsewhere these behave exactly
# like Flask-Babel's gettext and ngettext.
_bound: ContextVar = ContextVar("skymo_catalog", default=None)


def catalog():
    """The catalog strings are translated with now: the bound one, else Flask-Babel's
    (English outside an app)."""
    found = _bound.get()
    return found if found is not None else get_translations()


def per_catalog(cache: dict, key: tuple, build, limit: int = 4096):
    """`build()` for `key` in the current language, built once per catalog and kept in
    `cache`: one dict of its own per catalog, checked by identity (a new catalog cannot
    be taken for an old one whose id it reuses), cleared whole when `limit` is reached.
    An entry is only its key and value (no tuple of its own): a key of strings and
    numbers with a string value is nothing the garbage collector walks."""
    known = catalog_cache(cache)
    found = known.get(key)
    if found is not None:
        return found
    if len(known) >= limit:
        known.clear()
    value = known[key] = build()
    return value


def catalog_cache(cache: dict) -> dict:
    """`cache`'s dict for the current language (see per_catalog), for a caller that
    looks up many keys at once."""
    t = catalog()
    kept = cache.get(id(t))
    if kept is None or kept[0] is not t:
        kept = cache[id(t)] = (t, {})
    return kept[1]


@contextmanager
def speaking(lang: str):
    """Flask-Babel's language forced to `lang` and its catalog bound (`bound`), as a
    push renders one language: the catalog is looked up once per app and language."""
    catalogs = current_app.extensions.setdefault("skymo.catalogs", {})
    with force_locale(parsed(lang)):
        found = catalogs.get(lang)
        if found is None:
            found = catalogs[lang] = get_translations()
        with bound(found):
            yield


@contextmanager
def bound(translations=None):
    """Translate with `translations` (default: the current language's) until the end."""
    token = _bound.set(translations if translations is not None else get_translations())
    try:
        yield
    finally:
        _bound.reset(token)


@lru_cache(maxsize=32)
def parsed(lang: str) -> Locale:
    """A language tag ("pt-BR") or Babel name ("pt_BR") as Babel's Locale (parsing one
    takes longer than a push's whole translation work): for force_locale."""
    return Locale.parse(babel_name(lang))


def known(value: str | None) -> str | None:
    """`value` as one of LANGUAGES however it is spelled ("pt_BR", "pt-br": "pt-BR"),
    or None when we do not speak it."""
    return SPOKEN.get(value.replace("_", "-").lower()) if value else None


def babel_name(tag: str) -> str:
    """A language tag as Babel and the catalog folders name it: "pt-BR" -> "pt_BR"."""
    return tag.replace("-", "_")


def tag_of(locale) -> str:
    """A Babel locale (or its name) as the web writes it: pt_BR -> "pt-BR"."""
    return str(locale).replace("_", "-")


def current() -> str:
    """The language of this request (or of the push being rendered) as a tag."""
    return tag_of(get_locale())


def gettext(string: str, **variables) -> str:
    s = catalog().ugettext(string)
    return s % variables if variables else s


def ngettext(singular: str, plural: str, num: int, **variables) -> str:
    variables.setdefault("num", num)
    return catalog().ungettext(singular, plural, num) % variables


_ = gettext


def chosen_now() -> str | None:
    """The language this request asks for with ?lang=, if it is one we speak."""
    query = request.environ.get("QUERY_STRING", "")
    if "lang" not in query and "%" not in query:
        return None  # most requests: no query string to parse (every move, every push)
    return known(request.args.get("lang"))


def account():
    """The signed-in user's row, or None (flask-login's current_user, without importing
    the web layer)."""
    if current_user and current_user.is_authenticated:
        return getattr(current_user, "user", None)
    return None


def select_locale() -> str:
    """?lang= on any page; else the signed-in account's choice; else the one this browser
    remembers (cookie); else the browser's Accept-Language; else English. As Babel names
    it (Flask-Babel parses it): pt_BR."""
    user = account()
    for lang in (
        chosen_now(),
        known(user.language) if user is not None else None,
        known(request.cookies.get(COOKIE)),
    ):
        if lang is not None:
            return babel_name(lang)
    return babel_name(from_browser(request.accept_languages) or DEFAULT)


def from_browser(accepted) -> str | None:
    """The browser's most wanted language that we speak: each of its languages in its
    order of preference, exactly ("pt-BR") or by its main language ("de-AT": de, "pt-PT":
    pt-BR), so "it-IT, en;q=0.5" reads Italian (werkzeug's best_match would answer en,
    trying main languages only after every exact match)."""
    for value, quality in accepted:
        if quality <= 0 or value == "*":
            continue
        lang = known(value) or BY_MAIN.get(value.replace("_", "-").split("-")[0].lower())
        if lang is not None:
            return lang
    return None


def remember(response):
    """After a ?lang= choice: the cookie, and the account's preference when signed in.
    A signed-in account without a preference adopts the one this browser remembers."""
    upgrade = request.environ.get("HTTP_UPGRADE", "")  # not headers.get: it raises when missing
    if request.endpoint == "static" or upgrade.lower() == "websocket":
        return response  # an asset chooses nothing; a socket repeats its page's language
    chosen = chosen_now()
    if chosen is None and COOKIE not in request.cookies:
        return response  # nothing chosen here or before: nothing to remember
    if chosen is not None and request.cookies.get(COOKIE) != chosen:
        response.set_cookie(
            COOKIE,
            chosen,
            max_age=COOKIE_AGE,
            samesite="Lax",
            httponly=True,
            secure=bool(current_app.config.get("SESSION_COOKIE_SECURE")),
        )
    lang = chosen or known(request.cookies.get(COOKIE))
    user = account()
    if (
        user is not None
        and lang is not None
        and user.language != lang
        and (chosen or user.language is None)
    ):
        User.update(language=lang).where(User.id == user.id).execute()
        user.language = lang
    return response


def lang_url(lang: str) -> str:
    """This page in another language (a GET page keeps its arguments); the home page
    after a POST, whose URL cannot be loaded again."""
    if request.method == "GET" and request.endpoint and request.endpoint != "static":
        args = {**(request.view_args or {}), **request.args.to_dict(), "lang": lang}
        return url_for(request.endpoint, **args)
    return url_for("lobby.home", lang=lang)


# ----- phrases built from game values ---------------------------------------------------
def card(value) -> str:
    """A card value with its article: 'a 7', 'an 8' (French 'un 7', German 'eine 7',
    Dutch 'een 8')."""
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


def person(name: str) -> str:
    """A player's name as shown: a deleted account's stored placeholder name (English,
    app.storage.models.DELETED_NAME) reads in the viewer's language."""
    return _("deleted player") if name == DELETED_NAME else name


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
    app.after_request(remember)
    _install_jinja_gettext(app.jinja_env)
    app.jinja_env.globals.update(
        lang_url=lang_url,
        language_names=NAMES,
        card=card,
        describe_penalty=describe_penalty,
        bot_label=bot_label,
        and_list=and_list,
    )
    app.jinja_env.filters["person"] = person
    app.jinja_env.filters.update(percent=percent, decimal=decimal)

    @app.context_processor
    def language():
        return {"lang": current(), "languages": LANGUAGES}


def _install_jinja_gettext(env) -> None:
    """The templates' `_`, `gettext` and `ngettext`, through the bound catalog (see
    `bound`); the same behaviour as Jinja's newstyle gettext (a format string, escaped
    when autoescaping). `_` is the function itself, not Jinja's alias that looks
    `gettext` up again on every call."""
    from jinja2 import pass_context

    # (id(catalog), msgid) -> (catalog, the translation as markup, formatted without
    # variables): a rendering says the same few dozen phrases again and again.
    said: dict[tuple[int, str], tuple] = {}

    @pass_context
    def jinja_gettext(context, string, **variables):
        t = catalog()
        if not context.eval_ctx.autoescape:
            return t.ugettext(string) % variables
        found = said.get((id(t), string))
        if found is None or found[0] is not t:
            if len(said) > 10_000:
                said.clear()
            rv = Markup(t.ugettext(string))
            found = said[id(t), string] = (t, rv, None if "%(" in rv else rv % {})
        if variables or found[2] is None:
            return found[1] % variables
        return found[2]

    @pass_context
    def jinja_ngettext(context, singular, plural, num, **variables):
        variables.setdefault("num", num)
        rv = catalog().ungettext(singular, plural, num)
        if context.eval_ctx.autoescape:
            rv = Markup(rv)
        return rv % variables

    env.globals.update(_=jinja_gettext, gettext=jinja_gettext, ngettext=jinja_ngettext)

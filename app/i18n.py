"""Languages: Flask-Babel set up once; the choice of language per request.

Every string a person sees goes through `gettext` (`_` in templates and code). The
catalogs live in `app/translations/<lang>/LC_MESSAGES/messages.po`.
"""

from __future__ import annotations

from flask import request
from flask_babel import Babel

LANGUAGES = ("en", "fr", "de")
DEFAULT = "en"

babel = Babel()


def select_locale() -> str:
    """?lang= on any page, else the remembered cookie, else the browser's preference."""
    chosen = request.args.get("lang") or request.cookies.get("lang")
    if chosen in LANGUAGES:
        return chosen
    return request.accept_languages.best_match(LANGUAGES) or DEFAULT


def init_app(app) -> None:
    app.config.setdefault("BABEL_DEFAULT_LOCALE", DEFAULT)
    app.config.setdefault("BABEL_TRANSLATION_DIRECTORIES", "translations")
    babel.init_app(app, locale_selector=select_locale)

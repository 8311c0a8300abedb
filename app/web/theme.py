"""The light and dark themes: which one a page is rendered in, and the header menu's
switch (light, dark, or as the device).

A choice is remembered per device in a cookie, so the server renders the page in it
(`<html data-theme>`, `color-scheme`): no flash of the other theme and no script. A
signed-in player's choice is also kept on their account, which decides on a device
that has chosen nothing. "As the device" leaves it to `prefers-color-scheme`."""

from __future__ import annotations

from flask import Blueprint, redirect, render_template, request, url_for
from flask_babel import gettext as _

from app.features import accounts
from app.web.auth import safe_next, signed_in
from app.web.security import remember_on_device

bp = Blueprint("theme", __name__)

COOKIE = "theme"
DEVICE = "device"  # the choice that follows the device's colour scheme
CHOICES = (*accounts.THEMES, DEVICE)
# The browser's bar (`theme-color`): the header's colour in each theme.
BAR = {"light": "#cde", "dark": "#102030"}


def chosen() -> str:
    """The theme this request's page is rendered in: the device's cookie, else the
    signed-in account's choice, else the device's own ("device")."""
    cookie = request.cookies.get(COOKIE)
    if cookie in CHOICES:
        return cookie
    user = signed_in()
    if user is not None and user.theme in accounts.THEMES:
        return user.theme
    return DEVICE


def here() -> str:
    """Where the switch brings the player back: this page (a GET page with its
    arguments), or the home page after a POST, whose URL cannot be loaded again."""
    if request.method != "GET" or request.endpoint in (None, "static"):
        return url_for("lobby.home")
    query = request.query_string.decode("latin-1")
    return request.path + ("?" + query if query else "")


@bp.post("/theme")
def choose():
    choice = request.form.get("theme")
    if choice not in CHOICES:
        message = _("Choose a theme: light, dark or as the device.")
        return render_template("pages/error.html", message=message, status=400), 400
    response = redirect(safe_next(request.form.get("next")) or url_for("lobby.home"), 303)
    remember_on_device(response, COOKIE, choice)
    user = signed_in()
    if user is not None:
        accounts.set_theme(user, None if choice == DEVICE else choice)
    return response


def init_app(app) -> None:
    app.register_blueprint(bp)
    app.jinja_env.globals.update(theme=chosen, theme_bar=BAR, theme_here=here)

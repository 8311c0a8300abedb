"""Accounts: sign up, sign in, sign out, change password, delete (app.features.accounts).

Sessions are flask-login's. The id kept in the session is "<user id>:<login nonce>";
a new password draws a new nonce, which signs out every other session and remember
cookie. Signing in renews the session: only the guest's seat tokens (they move to the
account) and the device token (its score sheets become the account's) survive;
everything else, the CSRF token included, starts afresh."""

from __future__ import annotations

import hmac
import os

from flask import (
    Blueprint,
    current_app,
    make_response,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_babel import gettext as _
from flask_login import LoginManager, UserMixin, current_user, login_user, logout_user

from app.features import accounts
from app.storage.models import User
from app.web import ratelimit
from app.web.security import csrf_token

bp = Blueprint("auth", __name__)
login_manager = LoginManager()
login_manager.login_view = "auth.signin"
login_manager.login_message = None  # the sign-in page says why, from `next`
# No "fresh login" is ever asked for, and flask-login's default protection ("basic")
# only marks a session not fresh: for a guest it did so on the browser's second request
# (its service worker's script, say), answering with the session cookie as it stood.
# Arriving after the answer that seated the player, that cookie took the seat away.
login_manager.session_protection = None


class Account(UserMixin):
    """The signed-in user as flask-login sees it."""

    def __init__(self, user: User):
        self.user = user
        self.id = user.id
        self.username = user.username

    def get_id(self) -> str:
        return f"{self.user.id}:{self.user.login_nonce}"


@login_manager.user_loader
def _load(session_id: str):
    user_id, _, nonce = str(session_id).partition(":")
    user = accounts.get_user(user_id)
    if user is None or not hmac.compare_digest(user.login_nonce, nonce):
        return None
    return Account(user)


def signed_in() -> User | None:
    """The signed-in user's row, or None for a guest."""
    if current_user and current_user.is_authenticated:
        return current_user.user
    return None


def safe_next(target: str | None) -> str | None:
    """Only a path on this site: no scheme, no host, no protocol-relative URL."""
    if not target or not target.startswith("/") or target.startswith("//"):
        return None
    if "\\" in target or any(ord(ch) < 32 for ch in target):
        return None
    return target


def start_session(user: User, remember: bool) -> None:
    """Renew the session for this user; the guest's seats move to the account."""
    keep = {key: session[key] for key in ("seats", "name", "device") if key in session}
    session.clear()
    session.update(keep)
    session.permanent = True
    login_user(Account(user), remember=remember)
    accounts.claim_seats(user, keep.get("seats", {}))


def page(template: str, status: int = 200, **ctx):
    ctx.setdefault("next", safe_next(request.values.get("next")))
    return render_template(template, csrf=csrf_token(), **ctx), status


# ----- sign up / in / out --------------------------------------------------------------
@bp.route("/signup", methods=["GET", "POST"])
def signup():
    if request.method == "GET":
        if signed_in():
            return redirect(url_for("stats.mine"), 303)
        return page("pages/signup.html", form={})
    form = request.form
    try:
        user = accounts.create_user(form.get("username"), form.get("password"))
    except accounts.AccountError as exc:
        return page("pages/signup.html", exc.status, form=form, error=exc.message, field=exc.field)
    start_session(user, remember=form.get("remember") == "on")
    return redirect(safe_next(form.get("next")) or url_for("stats.mine"), 303)


@bp.route("/signin", methods=["GET", "POST"])
def signin():
    if request.method == "GET":
        if signed_in():
            return redirect(safe_next(request.args.get("next")) or url_for("lobby.home"), 303)
        return page("pages/signin.html", form={})
    form = request.form
    username = (form.get("username") or "").strip()
    # Rate limited by app.web.ratelimit: refused attempts never reach this view.
    user = accounts.authenticate(username, form.get("password"))
    if user is None:
        return page("pages/signin.html", 401, form=form, error=accounts.WRONG_CREDENTIALS)
    ratelimit.forget_username_failures()
    start_session(user, remember=form.get("remember") == "on")
    return redirect(safe_next(form.get("next")) or url_for("lobby.home"), 303)


@bp.post("/signout")
def signout():
    if signed_in():
        logout_user()
        session.clear()  # a shared device keeps no seat of the account
    # A guest has nothing to sign out of: their seats stay theirs.
    return redirect(url_for("lobby.home"), 303)


# ----- the account page ----------------------------------------------------------------
def account_page(status: int = 200, **ctx):
    return page("pages/account.html", status, user=signed_in(), **ctx)


@bp.get("/account")
def account():
    if not signed_in():
        return login_manager.unauthorized()
    return account_page(done=request.args.get("done"))


@bp.post("/account/password")
def change_password():
    user = signed_in()
    if user is None:
        return login_manager.unauthorized()
    form = request.form
    try:
        accounts.change_password(user, form.get("current_password"), form.get("new_password"))
    except accounts.AccountError as exc:
        return account_page(exc.status, error=exc.message, field=exc.field)
    # The new nonce signed this session out too: renew it for the same person.
    remember_cookie = current_app.config.get("REMEMBER_COOKIE_NAME", "remember_token")
    start_session(user, remember=remember_cookie in request.cookies)
    return redirect(url_for("auth.account", done="password"), 303)


@bp.post("/account/delete")
def delete_account():
    user = signed_in()
    if user is None:
        return login_manager.unauthorized()
    try:
        accounts.delete_user(user, request.form.get("delete_password"))
    except accounts.AccountError as exc:
        return account_page(exc.status, error=exc.message, field=exc.field)
    logout_user()
    session.clear()
    return page(
        "pages/notice.html",
        title=_("Account deleted"),
        message=_(
            "Your account is deleted. Your games stay in the others' history "
            "under “deleted player”. You can still play as a guest."
        ),
    )


def init_app(app) -> None:
    app.config.setdefault("PROXY_HOPS", int(os.environ.get("SKYMO_PROXY_HOPS", "0") or 0))
    app.config.setdefault("REMEMBER_COOKIE_HTTPONLY", True)
    app.config.setdefault("REMEMBER_COOKIE_SAMESITE", "Lax")
    app.config.setdefault("REMEMBER_COOKIE_SECURE", app.config.get("SESSION_COOKIE_SECURE"))
    login_manager.init_app(app)
    app.register_blueprint(bp)
    ratelimit.init_app(app, "auth.signin", _too_many)


def _too_many(seconds: float):
    """A sign-in refused by the rate limit: the page says for how long."""
    message = ratelimit.too_many_message(seconds)
    return make_response(page("pages/signin.html", 429, form=request.form, error=message))

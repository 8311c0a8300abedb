"""Optional accounts: sign-up, passwords (argon2), seats and results that belong to a user,
and deleting an account (the sign-in rate limit is app.web.ratelimit).

Guests never need any of this. A guest who signs up or signs in keeps the seats of
their session (`session["seats"]`: table code -> seat token) and the results of those
seats. Deleting an account is refused while its holder plays a game in progress (they
finish it or leave it first); otherwise their lobby seats are given up, and their name is
replaced by "deleted player" wherever the other players still see their tables."""

from __future__ import annotations

import contextlib
import re
import secrets

import peewee as pw
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from app import tables
from app.storage import alerts, chat
from app.storage.models import DELETED_NAME, Entry, Rating, Result, Seat, Table, User, db

USERNAME_RE = re.compile(r"[A-Za-z0-9_-]{3,20}")
PASSWORD_MIN = 8
PASSWORD_MAX = 1000  # hashing a megabyte on every attempt is a denial of service
WRONG_CREDENTIALS = _l("Wrong username or password.")

hasher = PasswordHasher()
_dummy: dict[str, str] = {}


def _dummy_hash() -> str:
    """Verified against when the username is unknown, so both failures take as long
    (made with the same parameters as the real hashes)."""
    key = repr((hasher.time_cost, hasher.memory_cost, hasher.parallelism))
    if key not in _dummy:
        _dummy[key] = hasher.hash(secrets.token_hex(16))
    return _dummy[key]


class AccountError(Exception):
    """Input an account form cannot take; `message` is shown next to `field`."""

    def __init__(self, message: str, field: str | None = None, status: int = 400):
        super().__init__(message)
        self.message = message
        self.field = field
        self.status = status


# ----- validation ----------------------------------------------------------------------
def clean_username(raw) -> str:
    username = (raw or "").strip() if isinstance(raw, str) else ""
    if not username:
        raise AccountError(_("Choose a username."), "username")
    if not USERNAME_RE.fullmatch(username):
        raise AccountError(
            _("A username has 3 to 20 characters: letters, digits, _ or -."), "username"
        )
    return username


def check_new_password(raw, field: str = "password") -> str:
    password = raw if isinstance(raw, str) else ""
    if len(password) < PASSWORD_MIN:
        message = _("A password has at least %(num)s characters.", num=PASSWORD_MIN)
        raise AccountError(message, field)
    if len(password) > PASSWORD_MAX:
        message = _("A password has at most %(num)s characters.", num=PASSWORD_MAX)
        raise AccountError(message, field)
    return password


# ----- users ---------------------------------------------------------------------------
def get_user(user_id) -> User | None:
    try:
        return User.get_or_none(User.id == int(user_id))
    except (TypeError, ValueError):
        return None


def by_username(username: str) -> User | None:
    if not isinstance(username, str):
        return None
    return User.get_or_none(User.username_lower == username.strip().lower())


def create_user(username, password) -> User:
    username = clean_username(username)
    password = check_new_password(password)
    taken = _("That username is taken: choose another.")
    if by_username(username) is not None:
        raise AccountError(taken, "username")
    try:
        with db.atomic():
            return User.create(
                username=username,
                username_lower=username.lower(),
                password_hash=hasher.hash(password),
                login_nonce=secrets.token_hex(8),
            )
    except pw.IntegrityError:  # taken between the check and the insert
        raise AccountError(taken, "username") from None


def verify(user: User | None, password) -> bool:
    """True if `password` is this user's. Takes as long for an unknown user."""
    password = password if isinstance(password, str) else ""
    if len(password) > PASSWORD_MAX:
        return False
    try:
        hasher.verify(user.password_hash if user else _dummy_hash(), password)
    except (VerificationError, InvalidHashError):
        return False
    if user is None:
        return False
    if hasher.check_needs_rehash(user.password_hash):
        user.password_hash = hasher.hash(password)
        user.save()
    return True


def authenticate(username, password) -> User | None:
    user = by_username(username)
    return user if verify(user, password) else None


def change_password(user: User, current, new) -> None:
    if not verify(user, current):
        raise AccountError(_("That is not your current password."), "current_password")
    new = check_new_password(new, "new_password")
    user.password_hash = hasher.hash(new)
    user.login_nonce = secrets.token_hex(8)  # every other session is signed out
    user.save()


THEMES = ("light", "dark")


def set_theme(user: User, theme: str | None) -> None:
    """The account's theme ("light" or "dark"; None: each device's own), used where a
    device has chosen none."""
    if theme is not None and theme not in THEMES:
        raise ValueError(f"unknown theme {theme!r}")
    User.update(theme=theme).where(User.id == user.id).execute()
    user.theme = theme


# ----- seats and results ---------------------------------------------------------------
def find_seat(table: Table | str, token: str | None, user: User | None) -> Seat | None:
    """The visitor's seat at a table (the row or its code): by the seat token of their
    session, else by their account. A seat that belongs to an account is only ever that
    account's."""
    user_id = user.id if user is not None else None
    seat = _known_seat(table, token, user_id)
    if seat is not None:
        return seat
    seat = tables.seat_by_token(table, token)
    if seat is not None and seat.user_id is not None and seat.user_id != user_id:
        seat = None
    if seat is None:
        seat = tables.seat_by_user(table, user_id)
    return seat


def _known_seat(table: Table | str, token: str | None, user_id: int | None) -> Seat | None:
    """The visitor's seat among the table's seats this process knows (its newest
    snapshot), without a query; None: not found there (the database decides). A seat
    that changed hands since is no risk: claims and deletions only ever move a seat
    within its holder's session, and signing out clears the session's seats."""
    if not token and user_id is None:
        return None
    known = tables.store.known_seats(table if isinstance(table, str) else table.code)
    if not known:
        return None
    if token:
        seat = next((s for s in known if s.token == token), None)
        if seat is not None and seat.user_id in (None, user_id):
            return seat
    if user_id is not None:
        return next((s for s in known if s.user_id == user_id), None)
    return None


def claim_seats(user: User, tokens: dict) -> int:
    """Give the account the guest seats of this session and their results. A seat
    already owned by an account, or at a table where the user has another seat, stays
    as it is. Returns how many seats moved."""
    tokens = [t for t in (tokens or {}).values() if isinstance(t, str) and t]
    if not tokens:
        return 0
    moved = 0
    with db.atomic():
        for seat in Seat.select().where(Seat.token.in_(tokens) & Seat.user.is_null()):
            other = Seat.select().where(
                (Seat.table == seat.table_id) & (Seat.user == user) & (Seat.id != seat.id)
            )
            if other.exists():
                continue
            Seat.update(user=user).where(Seat.id == seat.id).execute()
            Result.update(user=user).where(
                (Result.seat == seat.id) & Result.user.is_null()
            ).execute()
            moved += 1
    return moved


# ----- deleting ------------------------------------------------------------------------
def games_in_progress(user: User) -> list[str]:
    """Codes of the tables where this user still plays a game in progress."""
    codes = []
    query = (
        Seat.select(Seat, Table)
        .join(Table)
        .where((Seat.user == user) & (Seat.left == False) & (Table.status == Table.PLAYING))  # noqa: E712
    )
    for seat in query:
        game = tables.load_game(seat.table)
        if game is not None and not game.is_over and seat.player_id not in game.forfeited:
            codes.append(seat.table.code)
    return codes


def delete_user(user: User, password) -> None:
    """Remove the account. Refused while the user plays a game in progress; lobby seats
    are given up; finished games keep their results under "deleted player"."""
    if not verify(user, password):
        raise AccountError(_("That is not your password."), "delete_password")
    playing = games_in_progress(user)
    if playing:
        codes = ", ".join(playing)
        raise AccountError(
            _(
                "You are playing at table %(tables)s: finish or leave that game first, "
                "then delete your account.",
                tables=codes,
            ),
            "delete_password",
            409,
        )
    lobby_seats = list(
        Seat.select(Seat, Table)
        .join(Table)
        .where((Seat.user == user) & (Seat.left == False) & (Table.status == Table.LOBBY))  # noqa: E712
    )
    for seat in lobby_seats:
        # If the lobby changed meanwhile, the seat is still scrubbed below.
        with contextlib.suppress(tables.TableError):
            tables.remove_seat(seat.table.code, seat, seat.id)
    seats = list(Seat.select(Seat.id, Seat.table).where(Seat.user == user))
    for code in sorted({s.table_id for s in seats}):
        tables.rename_players(code, {s.id for s in seats if s.table_id == code}, DELETED_NAME)
    with db.atomic():
        chat.forget_seats(s.id for s in seats)  # their chat messages go with the account
        chat.forget_reporter(user)
        alerts.forget_seats(s.id for s in seats)
        Result.update(user=None, name=DELETED_NAME).where(Result.user == user).execute()
        Seat.update(user=None).where(Seat.user == user).execute()
        # Its ratings and started games go with it (the foreign keys cascade too).
        Rating.delete().where(Rating.user == user).execute()
        Entry.delete().where(Entry.user == user).execute()
        user.delete_instance()

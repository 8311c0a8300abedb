"""Checking what people type: names, the lobby's rules form and its timers."""

from __future__ import annotations

import re

import regex
from flask_babel import gettext as _

from app.engine import RuleError, RuleSet
from app.storage.models import Seat
from app.storage.table_store import TableError

NAME_MAX = 20
NAME_CODE_POINTS = 200  # what the NAME_MAX characters a person sees may hide
GRACE_RANGE = (5, 120)
REJOIN_RANGE = (30, 1800)
MESSAGE_MAX = 200  # characters a person sees, as names count them
MESSAGE_CODE_POINTS = 1000
# Bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) and the marks
# (U+200E, U+200F, U+061C): they could turn the rest of the chat or a name around.
BIDI = frozenset(map(chr, [*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x61C]))


def clean_name(name, seats: list[Seat] | None = None, exclude: Seat | None = None) -> str:
    """A name as shown at the table; `seats`: the names it must differ from."""
    if not isinstance(name, str):
        raise TableError(_("Type a name."), field="name")
    name = " ".join(name.split())  # trims, and folds runs of spaces
    if not name:
        raise TableError(_("Type a name."), field="name")
    # Counted as a person sees characters (an emoji family is one), as the page does.
    if len(regex.findall(r"\X", name)) > NAME_MAX or len(name) > NAME_CODE_POINTS:
        raise TableError(_("A name has at most %(num)s characters.", num=NAME_MAX), field="name")
    if unshowable(name):
        raise TableError(_("That name has characters we cannot show."), field="name")
    for seat in seats or ():
        if seat is not exclude and seat.name.casefold() == name.casefold():
            raise TableError(
                _("%(name)s is already at this table: pick another name.", name=name),
                field="name",
            )
    return name


def unshowable(name: str) -> bool:
    """A control character: nothing a page can show (a tab or a newline is folded into
    a space before this is asked)."""
    return any(ord(ch) < 32 or 127 <= ord(ch) < 160 for ch in name)


def clean_message(text) -> str:
    """A chat message as stored: spaces folded, control and bidi characters removed;
    TableError (field "text") when nothing is left or it is too long."""
    if not isinstance(text, str):
        text = ""
    text = " ".join(text.split())  # newlines and tabs fold into spaces first
    text = "".join(ch for ch in text if not (unshowable(ch) or ch in BIDI)).strip()
    if not text:
        raise TableError(_("Type a message: it was empty."), field="text")
    if len(regex.findall(r"\X", text)) > MESSAGE_MAX or len(text) > MESSAGE_CODE_POINTS:
        raise TableError(
            _("A message has at most %(num)s characters.", num=MESSAGE_MAX), field="text"
        )
    return text


def parse_chat(form, current: bool) -> bool:
    """The lobby form's chat setting ("on" or "off"); absent: unchanged."""
    raw = form.get("chat")
    if raw is None:
        return current
    if raw not in ("on", "off"):
        raise TableError(_("Chat: that value is not one of the choices."), field="chat")
    return raw == "on"


def parse_min_finished(form, current: int | None) -> int | None:
    """The lobby form's "only players who finish at least N% of their games": a whole
    percent from 1 to 100; blank or 0: anyone may join (None); absent: unchanged."""
    raw = form.get("min_finished")
    if raw is None:
        return current
    raw = str(raw).strip().rstrip("%").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if not 0 <= value <= 100:
        message = _("Games finished: a whole percent from 0 to 100, or blank for anyone.")
        raise TableError(message, field="min_finished")
    return value or None


def parse_rules(form) -> RuleSet:
    """Build a RuleSet from the lobby form; RuleError names the field that is wrong."""

    def number(field, default, rule=None):
        raw = form.get(field)
        if raw is None or str(raw).strip() == "":
            return default
        try:
            return int(str(raw).strip())
        except ValueError:
            # Named as the engine names it, so the message lands next to its field.
            raise RuleError(rule or field, "must be a whole number") from None

    def flag(field):
        return str(form.get(field, "")).lower() in ("on", "1", "true", "yes")

    defaults = RuleSet()
    data = {
        "rows": number("rows", defaults.rows),
        "cols": number("cols", defaults.cols),
        "initial_flips": number("initial_flips", defaults.initial_flips),
        "end_score": number("end_score", defaults.end_score),
        "clear_rows": flag("clear_rows"),
        "penalty": {
            "mode": form.get("penalty_mode") or defaults.penalty.mode,
            "multiplier": number(
                "penalty_multiplier", defaults.penalty.multiplier, "penalty.multiplier"
            ),
            "flat": number("penalty_flat", defaults.penalty.flat, "penalty.flat"),
        },
        "show_running_score": flag("show_running_score"),
        "reseat": form.get("reseat") or defaults.reseat,
    }
    return RuleSet.from_dict(data)


def parse_timers(form, grace: int, rejoin: int) -> tuple[int, int]:
    """The absent-player timers of the lobby form, in seconds, within sane bounds;
    a blank field keeps the current value."""
    values = []
    for field, label, (low, high), current in (
        ("grace_seconds", _("Grace period"), GRACE_RANGE, grace),
        ("rejoin_seconds", _("Rejoin window"), REJOIN_RANGE, rejoin),
    ):
        raw = str(form.get(field, "")).strip()
        if not raw:
            values.append(current)
            continue
        try:
            value = int(raw)
        except ValueError:
            message = _("%(label)s must be a whole number of seconds.", label=label)
            raise TableError(message, field=field) from None
        if not low <= value <= high:
            message = _(
                "%(label)s must be from %(low)s to %(high)s seconds.",
                label=label,
                low=low,
                high=high,
            )
            raise TableError(message, field=field)
        values.append(value)
    return values[0], values[1]


def rule_message(exc: RuleError) -> str:
    """The engine's RuleError (English, for developers) as a sentence in the player's
    language: the field's label and, for numbers, the range it must be in."""
    labels = {
        "rows": _("Rows"),
        "cols": _("Columns"),
        "initial_flips": _("Cards turned at the start"),
        "end_score": _("End score"),
        "clear_rows": _("Rows clear"),
        "show_running_score": _("Running totals"),
        "penalty": _("Penalty"),
        "penalty.mode": _("Penalty"),
        "penalty.multiplier": _("Multiplier"),
        "penalty.flat": _("Points added"),
        "reseat": _("Seating"),
        "players": _("Players"),
    }
    label = labels.get(exc.field, exc.field)
    bounds = RANGE_RE.search(exc.message)
    if bounds:
        low, high = bounds.groups()
        return _("%(label)s must be from %(low)s to %(high)s.", label=label, low=low, high=high)
    return _("%(label)s: that value is not one of the choices.", label=label)


RANGE_RE = re.compile(r"from (-?\d+) to (-?\d+)")


def illegal_message(reason: str) -> str:
    """An engine IllegalMove reason (English) in the player's language. The engine stays
    free of the web; the moves a page offers never hit these, a stale tab might."""
    known = {
        "There is no card at that position": _("There is no card at that position."),
        "The game is over": _("The game is over."),
        "You are not playing in this game": _("You are not playing in this game."),
        "You have left this game": _("You have left this game."),
        "The round is over; the next one has not started yet": _(
            "The round is over; the next one has not started yet."
        ),
        "Turn your first cards face up before play starts": _(
            "Turn your first cards face up before play starts."
        ),
        "You have already turned your first cards; wait for the others": _(
            "You have already turned your first cards; wait for the others."
        ),
        "Play has started: draw a card or take the discard": _(
            "Play has started: draw a card or take the discard."
        ),
        "You have drawn a card: keep it or discard it": _(
            "You have drawn a card: keep it or discard it."
        ),
        "Draw a card first": _("Draw a card first."),
        "Choose a face-down card to turn over": _("Choose a face-down card to turn over."),
        "That card was cleared from the grid": _("That card was cleared from the grid."),
        "That card is already face up": _("That card is already face up."),
    }
    if reason in known:
        return known[reason]
    turn = TURN_RE.fullmatch(reason)
    if turn:
        return _("It is %(name)s's turn.", name=turn.group(1))
    return _("That move is not allowed now.")


TURN_RE = re.compile(r"It is (.+)'s turn")

"""Checking what people type: names, the lobby's rules form and its timers."""

from __future__ import annotations

from ..engine import RuleError, RuleSet
from ..models import Seat
from .store import TableError

NAME_MAX = 20
GRACE_RANGE = (5, 120)
REJOIN_RANGE = (30, 1800)


def clean_name(name, seats: list[Seat] | None = None, exclude: Seat | None = None) -> str:
    """A name as shown at the table; `seats`: the names it must differ from."""
    if not isinstance(name, str):
        raise TableError("Type a name.", field="name")
    name = " ".join(name.split())  # trims, and folds runs of spaces
    if not name:
        raise TableError("Type a name.", field="name")
    if len(name) > NAME_MAX:
        raise TableError(f"A name has at most {NAME_MAX} characters.", field="name")
    if any(ord(ch) < 32 for ch in name):
        raise TableError("That name has characters we cannot show.", field="name")
    for seat in seats or ():
        if seat is not exclude and seat.name.casefold() == name.casefold():
            raise TableError(f"{name} is already at this table: pick another name.", field="name")
    return name


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
        ("grace_seconds", "Grace period", GRACE_RANGE, grace),
        ("rejoin_seconds", "Rejoin window", REJOIN_RANGE, rejoin),
    ):
        raw = str(form.get(field, "")).strip()
        if not raw:
            values.append(current)
            continue
        try:
            value = int(raw)
        except ValueError:
            raise TableError(f"{label} must be a whole number of seconds.", field=field) from None
        if not low <= value <= high:
            raise TableError(f"{label} must be from {low} to {high} seconds.", field=field)
        values.append(value)
    return values[0], values[1]


def rule_message(exc: RuleError) -> str:
    labels = {
        "rows": "Rows",
        "cols": "Columns",
        "initial_flips": "Cards turned at the start",
        "end_score": "End score",
        "penalty.mode": "Penalty",
        "penalty.multiplier": "Multiplier",
        "penalty.flat": "Points added",
        "reseat": "Seating",
        "players": "Players",
    }
    return f"{labels.get(exc.field, exc.field)} {exc.message}."

"""The moves a player can make. Small frozen values, easy to compare and to serialise."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reveal:
    """Setup: turn one of your own face-down cards face up."""

    row: int
    col: int


@dataclass(frozen=True)
class TakeDiscard:
    """Take the top of the discard pile; it replaces the card at (row, col)."""

    row: int
    col: int


@dataclass(frozen=True)
class Draw:
    """Draw the top card of the draw pile; only the drawer sees it."""


@dataclass(frozen=True)
class KeepDrawn:
    """The drawn card replaces the card at (row, col)."""

    row: int
    col: int


@dataclass(frozen=True)
class DiscardDrawn:
    """Discard the drawn card and turn the face-down card at `flip` face up.

    `flip` is None only when the player has no face-down card left."""

    flip: tuple[int, int] | None = None


@dataclass(frozen=True)
class Forfeit:
    """Leave the game for good."""


Action = Reveal | TakeDiscard | Draw | KeepDrawn | DiscardDrawn | Forfeit

_BY_NAME = {
    "reveal": Reveal,
    "take_discard": TakeDiscard,
    "draw": Draw,
    "keep_drawn": KeepDrawn,
    "discard_drawn": DiscardDrawn,
    "forfeit": Forfeit,
}
_NAMES = {cls: name for name, cls in _BY_NAME.items()}


def action_to_dict(action: Action) -> dict:
    data: dict = {"type": _NAMES[type(action)]}
    if isinstance(action, Reveal | TakeDiscard | KeepDrawn):
        data.update(row=action.row, col=action.col)
    elif isinstance(action, DiscardDrawn):
        data["flip"] = list(action.flip) if action.flip is not None else None
    return data


def action_from_dict(data: dict) -> Action:
    """Parse a move sent by a client. Raises ValueError with a readable reason."""
    if not isinstance(data, dict):
        raise ValueError("A move must be an object")
    cls = _BY_NAME.get(data.get("type"))
    if cls is None:
        raise ValueError("Unknown move")
    if cls in (Reveal, TakeDiscard, KeepDrawn):
        return cls(_as_index(data.get("row"), "row"), _as_index(data.get("col"), "column"))
    if cls is DiscardDrawn:
        flip = data.get("flip")
        if flip is None:
            return DiscardDrawn(None)
        if not isinstance(flip, list | tuple) or len(flip) != 2:
            raise ValueError("Choose a card to turn over")
        return DiscardDrawn((_as_index(flip[0], "row"), _as_index(flip[1], "column")))
    return cls()


def _as_index(value, what: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"Bad {what}")
    try:
        index = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"Bad {what}") from None
    if not 0 <= index < 16:
        raise ValueError(f"Bad {what}")
    return index

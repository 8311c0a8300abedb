"""Skymo's rules engine: pure, deterministic, no I/O (docs/rules.md)."""

from app.engine.actions import (
    Action,
    DiscardDrawn,
    Draw,
    Forfeit,
    KeepDrawn,
    Reveal,
    TakeDiscard,
    action_from_dict,
    action_to_dict,
)
from app.engine.game import (
    DECK,
    DOWN,
    GAME_OVER,
    GONE,
    PLAY,
    ROUND_OVER,
    SETUP,
    UP,
    Game,
    IllegalMove,
    Player,
)
from app.engine.record import FORMAT, RecordError, replay, to_record
from app.engine.rules import Penalty, RuleError, RuleSet
from app.engine.view import view

__all__ = [
    "Action",
    "DECK",
    "DOWN",
    "DiscardDrawn",
    "Draw",
    "FORMAT",
    "Forfeit",
    "GAME_OVER",
    "GONE",
    "Game",
    "IllegalMove",
    "KeepDrawn",
    "PLAY",
    "Penalty",
    "Player",
    "ROUND_OVER",
    "RecordError",
    "Reveal",
    "RuleError",
    "RuleSet",
    "SETUP",
    "TakeDiscard",
    "UP",
    "action_from_dict",
    "action_to_dict",
    "replay",
    "to_record",
    "view",
]

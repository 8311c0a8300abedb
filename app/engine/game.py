"""The game state and its transitions (docs/rules.md).

A `Game` is a plain, deterministic state machine: `legal_actions(player)`,
`apply(player, action)`, `is_over`, `ranking()`. All randomness comes from the game's
seed, so a seed plus the move list reproduces a game exactly. `to_dict`/`from_dict`
round-trip the whole state through JSON.
"""

from __future__ import annotations

import random

from app.engine.actions import Action
from app.engine.plays import HANDLERS, Plays
from app.engine.rounds import Rounds
from app.engine.rules import RuleSet, check_player_count
from app.engine.scoring import shared_ranks
from app.engine.state import (
    DECK,
    DOWN,
    GAME_OVER,
    GONE,
    PLAY,
    ROUND_OVER,
    SCORING,
    SETUP,
    UP,
    Grid,
    IllegalMove,
    Player,
    Round,
    clearing_cells,
)
from app.engine.turns import Turns

__all__ = [
    "DECK",
    "DOWN",
    "GAME_OVER",
    "GONE",
    "PLAY",
    "ROUND_OVER",
    "SCORING",
    "SETUP",
    "UP",
    "Game",
    "Grid",
    "IllegalMove",
    "Player",
    "Round",
    "clearing_cells",
]


class Game(Plays, Turns, Rounds):
    """A whole game: rounds until a total reaches the end score, or too few remain."""

    def __init__(
        self,
        players: list[Player] | list[dict],
        rules: RuleSet | None = None,
        seed: int | str = 0,
        game_id: str = "",
        *,
        deal: bool = True,
    ):
        self.rules = rules or RuleSet()
        self.players = [p if isinstance(p, Player) else Player(**p) for p in players]
        check_player_count(len(self.players))
        ids = [p.id for p in self.players]
        if len(set(ids)) != len(ids):
            raise ValueError("player ids must be unique")
        self.seed = seed
        self.id = game_id
        self.totals: dict[str, int] = {p: 0 for p in ids}
        self.forfeited: list[str] = []
        self.rounds: list[Round] = []
        self.phase = SETUP
        # reseat "game": one shuffle for the whole game, kept for every round.
        self.game_seating: list[str] | None = None
        self.hold_scoring = False
        if deal:
            self.start_next_round()

    # ----- lookups -------------------------------------------------------------------
    @property
    def round(self) -> Round:
        return self.rounds[-1]

    @property
    def is_over(self) -> bool:
        return self.phase == GAME_OVER

    def player(self, player_id: str) -> Player:
        for p in self.players:
            if p.id == player_id:
                return p
        raise KeyError(player_id)

    def name(self, player_id: str) -> str:
        return self.player(player_id).name

    def active(self) -> list[str]:
        """Players still in the game, in lobby order."""
        return [p.id for p in self.players if p.id not in self.forfeited]

    def _rng(self, *parts) -> random.Random:
        # One stream per purpose, all derived from the game's seed: no hidden RNG state
        # to store, and a record replays without it.
        return random.Random(":".join(map(str, (self.seed, *parts))))

    def apply(self, player_id: str, action: Action) -> list[dict]:
        """Apply one move, or raise IllegalMove and change nothing.

        Returns the public events the move caused (for move logs and animations)."""
        start = len(self.rounds[-1].log) if self.rounds else 0
        self._check(player_id, action)
        HANDLERS[type(action)](self, player_id, action)
        return self.rounds[-1].log[start:]

    # ----- results -------------------------------------------------------------------
    def ranking(self) -> list[dict]:
        """Best first; equal totals share a rank; forfeited players share the last rank,
        the one who left last listed first."""
        playing = self.active()
        ranking = shared_ranks(self.totals, playing)  # ties in lobby order
        last = len(playing) + 1
        for p in reversed(self.forfeited):
            ranking.append({"player": p, "rank": last, "total": self.totals[p]})
        return ranking

    def penalised(self, rnd: Round | None = None) -> bool:
        rnd = rnd or self.round
        result = rnd.result
        return (
            bool(result)
            and result["ender"] in result["scores"]
            and (result["scores"][result["ender"]] != result["raw"][result["ender"]])
        )

    # ----- serialisation -------------------------------------------------------------
    def to_dict(self, first_round: int = 0) -> dict:
        """The game as JSON-ready data; `first_round`: the rounds before it are left out
        (a table row keeps only those not stored apart, and is written every move)."""
        return {
            "id": self.id,
            "seed": self.seed,
            "rules": self.rules.to_dict(),
            "players": [p.to_dict() for p in self.players],
            "totals": self.totals,
            "forfeited": self.forfeited,
            "phase": self.phase,
            "game_seating": self.game_seating,
            "rounds": [r.to_dict() for r in self.rounds[first_round:]],
        }

    @classmethod
    def from_dict(cls, data: dict) -> Game:
        rules = RuleSet.from_dict(data["rules"])
        game = cls(data["players"], rules, data["seed"], data["id"], deal=False)
        game.totals = dict(data["totals"])
        game.forfeited = list(data["forfeited"])
        game.phase = data["phase"]
        game.game_seating = data["game_seating"]
        game.rounds = [Round.from_dict(rules, r) for r in data["rounds"]]
        return game

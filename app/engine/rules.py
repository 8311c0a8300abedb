"""The host's options (docs/rules.md, "Options the host can set"), checked when built."""

from __future__ import annotations

from dataclasses import dataclass, field

MIN_PLAYERS = 2
MAX_PLAYERS = 8
PENALTY_MODES = ("multiplier", "flat", "both")
RESEAT_POLICIES = ("never", "round", "game")
# The allowed range of each numeric option, (low, high): the one statement the checks
# below and the host's form both read. initial_flips is also below the grid's cards.
BOUNDS = {
    "rows": (2, 3),
    "cols": (2, 4),
    "initial_flips": (0, 4),
    "end_score": (10, 1000),
    "penalty.multiplier": (2, 5),
    "penalty.flat": (1, 50),
}


class RuleError(ValueError):
    """A rule option outside its allowed range; `field` names the option."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def _check_int(name: str, value, low: int | None = None, high: int | None = None) -> None:
    if low is None:
        low, high = BOUNDS[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise RuleError(name, f"must be a whole number from {low} to {high}")
    if not low <= value <= high:
        raise RuleError(name, f"must be from {low} to {high} (got {value})")


def _check_bool(name: str, value) -> None:
    if not isinstance(value, bool):
        raise RuleError(name, "must be on or off")


@dataclass(frozen=True)
class Penalty:
    """What happens to an ender who is not strictly lowest with a positive score."""

    mode: str = "multiplier"
    multiplier: int = 2
    flat: int = 10

    def __post_init__(self):
        if self.mode not in PENALTY_MODES:
            raise RuleError("penalty.mode", f"must be one of {', '.join(PENALTY_MODES)}")
        _check_int("penalty.multiplier", self.multiplier)
        _check_int("penalty.flat", self.flat)

    def apply(self, score: int) -> int:
        if self.mode == "multiplier":
            return score * self.multiplier
        if self.mode == "flat":
            return score + self.flat
        return score * self.multiplier + self.flat

    def describe(self) -> str:
        if self.mode == "multiplier":
            return f"×{self.multiplier}"
        if self.mode == "flat":
            return f"+{self.flat}"
        return f"×{self.multiplier} then +{self.flat}"


@dataclass(frozen=True)
class RuleSet:
    rows: int = 3
    cols: int = 4
    initial_flips: int = 2
    end_score: int = 100
    clear_rows: bool = False
    penalty: Penalty = field(default_factory=Penalty)
    show_running_score: bool = True
    reseat: str = "never"

    def __post_init__(self):
        _check_int("rows", self.rows)
        _check_int("cols", self.cols)
        low, high = BOUNDS["initial_flips"]
        _check_int("initial_flips", self.initial_flips, low, min(high, self.rows * self.cols - 1))
        _check_int("end_score", self.end_score)
        _check_bool("clear_rows", self.clear_rows)
        _check_bool("show_running_score", self.show_running_score)
        if not isinstance(self.penalty, Penalty):
            raise RuleError("penalty", "must be a penalty setting")
        if self.reseat not in RESEAT_POLICIES:
            raise RuleError("reseat", f"must be one of {', '.join(RESEAT_POLICIES)}")

    @property
    def cells(self) -> int:
        return self.rows * self.cols

    def to_dict(self) -> dict:
        """`asdict(self)`, without its generic deep copy (every move's save writes the
        rules: asdict was ~3% of a move's server time). Every field is a str, an int or a
        bool but the penalty, itself of ints and a str."""
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        p = self.penalty
        out["penalty"] = {"mode": p.mode, "multiplier": p.multiplier, "flat": p.flat}
        return out

    @classmethod
    def from_dict(cls, data: dict) -> RuleSet:
        data = dict(data)
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            raise RuleError(sorted(unknown)[0], "is not a rule option")
        penalty = data.pop("penalty", None)
        if penalty is not None and not isinstance(penalty, Penalty):
            if not isinstance(penalty, dict):
                raise RuleError("penalty", "must be a penalty setting")
            extra = set(penalty) - {"mode", "multiplier", "flat"}
            if extra:
                raise RuleError(f"penalty.{sorted(extra)[0]}", "is not a penalty option")
            penalty = Penalty(**penalty)
        return cls(**data, **({"penalty": penalty} if penalty is not None else {}))

    def summary(self) -> str:
        """A short line for lists of tables: '3×4, to 100, ender ×2'."""
        parts = [
            f"{self.rows}×{self.cols}",
            f"to {self.end_score}",
            f"ender {self.penalty.describe()}",
        ]
        if self.clear_rows:
            parts.append("rows clear")
        if self.initial_flips != 2:
            parts.append(f"{self.initial_flips} flips")
        return ", ".join(parts)


def check_player_count(count: int) -> None:
    _check_int("players", count, MIN_PLAYERS, MAX_PLAYERS)

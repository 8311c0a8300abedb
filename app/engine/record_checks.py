"""The shape of a game record (docs/design.md, "Game records"), checked field by field
before it is replayed: each fault is a RecordError that names its field, so that a page
can say what is wrong in its reader's words (app.features.record_messages)."""

from __future__ import annotations

from app.engine.game import DECK, Player
from app.engine.rules import MAX_PLAYERS, MIN_PLAYERS, RuleError, RuleSet


class RecordError(ValueError):
    """A record that is malformed or does not replay under the rules. The message is
    English, for developers; what is wrong is also kept as data, for a page to say in
    its reader's words:

    - `problem`: "format", "missing" or "wrong" (the value at `field` is absent, or not
      what the format says), "rules" (a rule option out of range: the RuleError is
      the `__cause__`), "players" (not 2 to 8), "duplicate" (a player id used twice),
      "numbered", "deck", "over" (a round after the end of the game), "unfinished",
      "kind" (a move of no known type, `found`), "illegal" (a move the rules refuse:
      `move`, and the rules' `reason`, IllegalMove's words), "starter" and "result"
      (`found` in the record, `expected` by the rules), or "" (nothing more known);
    - `field`: the record's key, as a path ("rules", "players.2.name", "seating", "row");
    - `round_number` and `move_number`: where, 1-based."""

    def __init__(
        self,
        message: str,
        round_number: int | None = None,
        move_number=None,
        *,
        problem: str = "",
        field: str = "",
        move=None,
        reason: str = "",
        found=None,
        expected=None,
    ):
        super().__init__(message)
        self.round_number = round_number
        self.move_number = move_number
        self.problem = problem
        self.field = field
        self.move = move
        self.reason = reason or message
        self.found = found
        self.expected = expected


def is_a(value, kinds: tuple) -> bool:
    """isinstance, but a JSON true or false is no number."""
    if isinstance(value, bool):
        return bool in kinds
    return isinstance(value, kinds)


def need(data: dict, key: str, kinds: tuple, field: str = "", round_number=None):
    """data[key], one of `kinds`; else a RecordError naming the field (path `field`)."""
    field = field or key
    where = f"round {round_number}: " if round_number else "bad header: "
    if key not in data:
        raise RecordError(
            f"{where}{field} is missing", round_number, problem="missing", field=field
        )
    value = data[key]
    if not is_a(value, kinds):
        names = " or ".join(k.__name__ for k in kinds)
        raise RecordError(
            f"{where}{field} is not a {names}", round_number, problem="wrong", field=field
        )
    return value


def header(record: dict) -> tuple[RuleSet, list[Player], list]:
    """The rules, the players and the list of rounds of a record."""
    try:
        rules = RuleSet.from_dict(need(record, "rules", (dict,)))
    except RuleError as exc:
        raise RecordError(
            f"bad header: rules: {exc}", problem="rules", field=f"rules.{exc.field}"
        ) from exc
    if "id" in record:
        need(record, "id", (str,))
    entries = need(record, "players", (list,))
    if not MIN_PLAYERS <= len(entries) <= MAX_PLAYERS:
        raise RecordError(
            f"bad header: {len(entries)} players",
            problem="players",
            field="players",
            found=len(entries),
        )
    players: list[Player] = []
    for i, entry in enumerate(entries, start=1):
        where = f"players.{i}"
        if not isinstance(entry, dict):
            raise RecordError(f"bad header: {where} is not a dict", problem="wrong", field=where)
        pid = need(entry, "id", (str,), f"{where}.id")
        name = need(entry, "name", (str,), f"{where}.name")
        if not name.strip():
            raise RecordError(
                f"bad header: {where}.name is empty", problem="wrong", field=f"{where}.name"
            )
        bot = entry.get("bot")
        if bot is not None and not isinstance(bot, str):
            raise RecordError(
                f"bad header: {where}.bot is not a str", problem="wrong", field=f"{where}.bot"
            )
        if any(p.id == pid for p in players):
            raise RecordError(
                f"bad header: player id {pid} is used twice",
                problem="duplicate",
                field=f"{where}.id",
                found=pid,
            )
        players.append(Player(pid, name, bot))
    return rules, players, need(record, "rounds", (list,))


def round_data(rules: RuleSet, rnd_data, position: int, active: list[str]) -> tuple[list, list]:
    """The deck dealt in a round (grids, discard, draw pile) and its moves, checked for
    their shape; the seating must be the players still in the game, each once."""
    if not isinstance(rnd_data, dict):
        raise RecordError(
            f"round {position} is not a dict", position, problem="wrong", field="round"
        )
    if "number" not in rnd_data:
        raise RecordError(
            f"round {position}: number is missing", position, problem="missing", field="number"
        )
    number = rnd_data["number"]
    if not is_a(number, (int,)) or number != position:
        raise RecordError(f"round {position} is numbered {number}", position, problem="numbered")
    seating = need(rnd_data, "seating", (list,), "seating", position)
    if not all(isinstance(p, str) for p in seating) or sorted(seating) != sorted(active):
        raise RecordError(
            f"round {position}: the seating is not the players still in the game",
            position,
            problem="wrong",
            field="seating",
        )
    grids = need(rnd_data, "grids", (dict,), "grids", position)
    deck: list = []
    for p in seating:
        if p not in grids:
            raise RecordError(
                f"round {position}: no grid of {p}",
                position,
                problem="missing",
                field="grids",
                found=p,
            )
        rows = grids[p]
        if not (
            isinstance(rows, list)
            and len(rows) == rules.rows
            and all(isinstance(row, list) and len(row) == rules.cols for row in rows)
            and all(is_a(card, (int,)) for row in rows for card in row)
        ):
            raise RecordError(
                f"round {position}: grid of {p} has the wrong shape",
                position,
                problem="wrong",
                field="grids",
                found=p,
            )
        for row in rows:
            deck.extend(row)
    for pile in ("discard", "draw_pile"):
        cards = need(rnd_data, pile, (list,), pile, position)
        if not all(is_a(card, (int,)) for card in cards):
            raise RecordError(
                f"round {position}: the {pile} holds something other than cards",
                position,
                problem="wrong",
                field=pile,
            )
        deck.extend(cards)
    if sorted(deck) != sorted(DECK):
        raise RecordError(
            f"round {position}: the deal is not the 150-card deck", position, problem="deck"
        )
    return deck, need(rnd_data, "moves", (list,), "moves", position)


class BadMove(Exception):
    """A recorded move that is not written as the format says (RecordError's fields)."""

    def __init__(self, message: str, problem: str, field: str, found=None):
        super().__init__(message)
        self.problem = problem
        self.field = field
        self.found = found


MOVE_TYPES = ("reveal", "take_discard", "draw", "forfeit", "reshuffle")


def move_value(move: dict, key: str, kinds: tuple):
    if key not in move:
        raise BadMove(f"its {key} is missing", "missing", key)
    value = move[key]
    if not is_a(value, kinds):
        raise BadMove(f"its {key} is not a {kinds[0].__name__}", "wrong", key)
    return value


def move_cell(move: dict) -> tuple[int, int]:
    return move_value(move, "row", (int,)), move_value(move, "col", (int,))

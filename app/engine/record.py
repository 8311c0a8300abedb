"""Game records in the `skymo.game/1` format (docs/design.md, "Game records"): write and replay."""

from __future__ import annotations

from .actions import DiscardDrawn, Draw, Forfeit, KeepDrawn, Reveal, TakeDiscard
from .game import DECK, GAME_OVER, PLAY, ROUND_OVER, SCORING, Game, IllegalMove, Player
from .rules import RuleSet

FORMAT = "skymo.game/1"
# The game keeps a forfeit made after its round was scored in that round's moves, marked
# with this key. Records written before AFTER_LAST_ROUND existed carry it too (replay
# still reads them); a record now lists such a forfeit where a reader that knows nothing
# of it applies it after the result (docs/design.md, "Game records").
AFTER_RESULT = "after_result"
AFTER_LAST_ROUND = "after_last_round"


class RecordError(ValueError):
    """A record that is malformed or does not replay under the rules. A move the rules
    refuse names its round and move (1-based) in `round_number` and `move_number`."""

    def __init__(self, message: str, round_number: int | None = None, move_number=None):
        super().__init__(message)
        self.round_number = round_number
        self.move_number = move_number
        self.reason = message


def to_record(game: Game) -> dict:
    rounds = []
    # Forfeits made after a round was scored: listed first in the next round's moves
    # (their players are not seated in it), or after the last round when none follows.
    between: list[dict] = []
    for rnd in game.rounds:
        entry = {
            "number": rnd.number,
            "seating": list(rnd.seating),
            "grids": rnd.dealt["grids"],
            "discard": rnd.dealt["discard"],
            "draw_pile": rnd.dealt["draw_pile"],
            "starter": _starter(game, rnd),
            "moves": between + [m for m in rnd.moves if not m.get(AFTER_RESULT)],
        }
        between = [_unmarked(m) for m in rnd.moves if m.get(AFTER_RESULT)]
        if rnd.result is not None:
            entry["result"] = rnd.result
        rounds.append(entry)
    ended = game.phase == GAME_OVER
    record = {
        "format": FORMAT,
        "id": game.id,
        "rules": game.rules.to_dict(),
        "players": [p.to_dict() for p in game.players],
        "rounds": rounds,
    }
    if between:
        record[AFTER_LAST_ROUND] = between
    record["final"] = {
        "ended": ended,
        "ranking": game.ranking(),
        "forfeited": list(game.forfeited),
    }
    return record


def _unmarked(move: dict) -> dict:
    return {k: v for k, v in move.items() if k != AFTER_RESULT}


def _starter(game: Game, rnd) -> str | None:
    """The first player who took, drew, kept or discarded in the round. While a round
    is being played and nobody has yet, whose turn it is: a record written then must
    name them, or a drawing of lots would not replay."""
    first = rnd.first_turn
    if first is None and rnd is game.round and game.phase == PLAY:
        return rnd.turn
    return first


def replay(record: dict) -> Game:
    """Rebuild a game from a record, checking every move against the rules.

    Raises RecordError naming the round and move that does not replay."""
    steps = replay_steps(record)
    game, _start = next(steps)  # the same game object is updated by every step
    for _step in steps:
        pass
    return game


def replay_steps(record: dict):
    """Replay a record one step at a time, checking each against the rules.

    Yields (game, step) with the game as it stands after the step. Steps: "start" (no
    round dealt yet), then per round "deal", one "move" per recorded move (`move` is its
    1-based number, `data` the move) and "result" once the round is scored. A forfeit
    made after a round was scored comes after its "result": listed first in the next
    round, it is a "move" of that round made before its "deal" (the game still shows
    the scored round); listed in `after_last_round`, a "move" of the last round."""
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise RecordError(f"not a {FORMAT} record")
    try:
        rules = RuleSet.from_dict(record["rules"])
        players = [Player(p["id"], p["name"], p.get("bot")) for p in record["players"]]
        game = Game(
            players, rules, seed=record.get("id", ""), game_id=record.get("id", ""), deal=False
        )
        game.hold_scoring = True
        rounds = list(record["rounds"])
        after_last = list(record.get(AFTER_LAST_ROUND, []))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise RecordError(f"bad header: {exc}") from exc
    yield game, {"kind": "start", "round": 0}
    previous = None
    for position, rnd_data in enumerate(rounds, start=1):
        try:
            number = rnd_data["number"]
            deck = _deck_of(rules, rnd_data)
            moves = list(rnd_data["moves"])
            seating = list(rnd_data["seating"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise RecordError(f"round {position}: malformed ({exc!r})", position) from exc
        if number != position:
            raise RecordError(f"round {position} is numbered {number!r}", position)
        if sorted(deck) != sorted(DECK):
            raise RecordError(f"round {number}: the deal is not the 150-card deck", number)
        if game.phase == SCORING:
            game.score_round()
            _check_result(game, previous)
            yield game, {"kind": "result", "round": previous["number"]}
        # Forfeits after the previous round was scored, by players this round no longer
        # seats: made before its deal.
        between = 0
        while (
            game.phase == ROUND_OVER
            and between < len(moves)
            and _left_before(moves[between], seating)
        ):
            yield _replay_move(game, moves[between], number, between)
            between += 1
        if game.rounds and game.phase != ROUND_OVER:
            raise RecordError(f"round {number}: the previous round did not end", number)
        try:
            if sorted(seating) != sorted(game.active()):
                raise RecordError(
                    f"round {number}: the seating is {seating}, but the players still in "
                    f"the game are {game.active()}",
                    number,
                )
            starter = rnd_data.get("starter")
            if starter is not None and starter not in seating:
                raise RecordError(f"round {number}: the starter {starter} is not seated", number)
            game.start_next_round(seating=seating, deck=deck, starter=starter)
        except (IllegalMove, KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, RecordError):
                raise
            reason = exc.reason if isinstance(exc, IllegalMove) else repr(exc)
            raise RecordError(f"round {number}: {reason}", number) from exc
        yield game, {"kind": "deal", "round": number}
        for index in range(between, len(moves)):
            move = moves[index]
            # Older records: a forfeit after the scoring stays in the scored round's
            # moves, marked (docs/design.md).
            if isinstance(move, dict) and move.get(AFTER_RESULT) and game.phase == SCORING:
                game.score_round()
                _check_result(game, rnd_data)
                yield game, {"kind": "result", "round": number}
            yield _replay_move(game, move, number, index)
        _check_starter(game.round, rnd_data)
        _check_result(game, rnd_data)
        previous = rnd_data
    if game.phase == SCORING:
        game.score_round()
        _check_result(game, previous)
        yield game, {"kind": "result", "round": previous["number"]}
    last = len(rounds)
    for index, move in enumerate(after_last):
        if game.phase != ROUND_OVER or not (
            isinstance(move, dict) and move.get("type") == "forfeit"
        ):
            raise RecordError(
                f"{AFTER_LAST_ROUND}, move {index + 1} ({move}): only forfeits made after "
                "the last round was scored, while the game went on, come there",
                last,
            )
        yield _replay_move(game, move, last, index, AFTER_LAST_ROUND)
    game.hold_scoring = False


def _left_before(move, seating: list[str]) -> bool:
    """A forfeit by a player the round does not seat: made before its deal."""
    return (
        isinstance(move, dict)
        and move.get("type") == "forfeit"
        and (move.get("player") not in seating)
    )


def _replay_move(game: Game, move, number: int, index: int, where: str = "") -> tuple:
    """Make move `index` (0-based) of round `number`, or of the list `where` names;
    the step it is."""
    try:
        _apply_move(game, move)
    except (IllegalMove, KeyError, TypeError, ValueError, AttributeError) as exc:
        reason = exc.reason if isinstance(exc, IllegalMove) else repr(exc)
        if where:
            raise RecordError(f"{where}, move {index + 1} ({move}): {reason}", number) from exc
        raise RecordError(
            f"round {number}, move {index + 1} ({move}): {reason}", number, index + 1
        ) from exc
    return game, {"kind": "move", "round": number, "move": index + 1, "data": move}


def _deck_of(rules: RuleSet, rnd_data: dict) -> list[int]:
    deck: list[int] = []
    for p in rnd_data["seating"]:
        rows = rnd_data["grids"][p]
        if len(rows) != rules.rows or any(len(r) != rules.cols for r in rows):
            raise RecordError(f"round {rnd_data['number']}: grid of {p} has the wrong shape")
        for row in rows:
            deck.extend(row)
    return deck + list(rnd_data["discard"]) + list(rnd_data["draw_pile"])


def _apply_move(game: Game, move: dict) -> None:
    kind = move["type"]
    if kind == "reshuffle":
        if game.round.draw_pile:
            raise IllegalMove("a reshuffle while the draw pile still has cards")
        game.reshuffle(list(move["draw_pile"]))
        return
    player = move["player"]
    if kind == "reveal":
        game.apply(player, Reveal(move["row"], move["col"]))
    elif kind == "take_discard":
        game.apply(player, TakeDiscard(move["row"], move["col"]))
    elif kind == "draw":
        game.apply(player, Draw())
        if move["keep"]:
            game.apply(player, KeepDrawn(move["row"], move["col"]))
        else:
            flip = move.get("flip")
            game.apply(player, DiscardDrawn(tuple(flip) if flip is not None else None))
    elif kind == "forfeit":
        game.apply(player, Forfeit())
    else:
        raise IllegalMove(f"unknown move type {kind!r}")


def _check_starter(rnd, rnd_data: dict) -> None:
    """The recorded starter played the round's first turn. In a round without turns it
    is null, or whose turn it is (a round still in play), or the player the rules named
    (as other implementations write it)."""
    recorded = rnd_data.get("starter")
    first = rnd.first_turn
    if recorded == first or (first is None and recorded in (rnd.starter, rnd.turn)):
        return
    played = f"{first} played the first turn" if first else "nobody played a turn"
    raise RecordError(f"round {rnd.number}: the starter is {recorded}, but {played}")


def _check_result(game: Game, rnd_data: dict) -> None:
    """A recorded result must be the one the rules give (checked once it is scored)."""
    if "result" not in rnd_data or game.phase == SCORING:
        return
    mine = game.round.result
    if mine != rnd_data["result"]:
        raise RecordError(
            f"round {rnd_data['number']}: result {rnd_data['result']} but the rules give {mine}"
        )

"""Game records in the `skymo.game/1` format (docs/design.md, "Game records"): write and replay."""

from __future__ import annotations

from app.engine.actions import DiscardDrawn, Draw, Forfeit, KeepDrawn, Reveal, TakeDiscard
from app.engine.game import GAME_OVER, PLAY, ROUND_OVER, SCORING, Game, IllegalMove
from app.engine.record_checks import (
    MOVE_TYPES,
    BadMove,
    RecordError,
    header,
    is_a,
    move_cell,
    move_value,
    round_data,
)

FORMAT = "skymo.game/1"
# The game keeps a forfeit made after its round was scored in that round's moves, marked
# with this key. Records written before AFTER_LAST_ROUND existed carry it too (replay
# still reads them); a record now lists such a forfeit where a reader that knows nothing
# of it applies it after the result (docs/design.md, "Game records").
AFTER_RESULT = "after_result"
AFTER_LAST_ROUND = "after_last_round"


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
        raise RecordError(f"not a {FORMAT} record", problem="format")
    rules, players, rounds = header(record)
    after_last = record.get(AFTER_LAST_ROUND, [])
    if not isinstance(after_last, list):
        raise RecordError(
            f"bad header: {AFTER_LAST_ROUND} is not a list", problem="wrong", field=AFTER_LAST_ROUND
        )
    game = Game(players, rules, seed=record.get("id", ""), game_id=record.get("id", ""), deal=False)
    game.hold_scoring = True
    yield game, {"kind": "start", "round": 0}
    previous = None
    for position, rnd_data in enumerate(rounds, start=1):
        # Forfeits after the previous round was scored, by players this round no longer
        # seats: listed first, made before its deal.
        between = _leading_forfeits(rnd_data) if game.phase in (SCORING, ROUND_OVER) else []
        leavers = {m["player"] for m in between}
        active = [p for p in game.active() if p not in leavers]
        deck, moves = round_data(rules, rnd_data, position, active)
        number = position
        if game.phase == SCORING:
            game.score_round()
            _check_result(game, previous)
            yield game, {"kind": "result", "round": previous["number"]}
        for index, move in enumerate(between):
            yield _replay_move(game, move, number, index)
        if game.phase == GAME_OVER:
            raise RecordError(
                f"round {number} comes after the end of the game", number, problem="over"
            )
        if game.rounds and game.phase != ROUND_OVER:
            raise RecordError(
                f"round {number}: the previous round did not end", number, problem="unfinished"
            )
        try:
            starter = rnd_data.get("starter")
            if starter is not None and starter not in rnd_data["seating"]:
                raise RecordError(
                    f"round {number}: the starter is not seated",
                    number,
                    problem="wrong",
                    field="starter",
                )
            game.start_next_round(seating=rnd_data["seating"], deck=deck, starter=starter)
        except (IllegalMove, KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, RecordError):
                raise
            # Not expected once round_data has checked the round: said without details.
            raise RecordError(f"round {number}: cannot be dealt ({exc})", number) from exc
        yield game, {"kind": "deal", "round": number}
        for index in range(len(between), len(moves)):
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
                f"{AFTER_LAST_ROUND}, move {index + 1}: only forfeits made after the last "
                "round was scored, while the game went on, come there",
                last,
                problem="wrong",
                field=AFTER_LAST_ROUND,
            )
        yield _replay_move(game, move, last, index)
    game.hold_scoring = False


def _leading_forfeits(rnd_data) -> list[dict]:
    """The forfeits a round lists first by players it does not seat: made after the
    previous round was scored, before this one's deal."""
    if not isinstance(rnd_data, dict):
        return []
    moves, seating = rnd_data.get("moves"), rnd_data.get("seating")
    if not isinstance(moves, list) or not isinstance(seating, list):
        return []
    found = []
    for move in moves:
        if not (
            isinstance(move, dict)
            and move.get("type") == "forfeit"
            and isinstance(move.get("player"), str)
            and move["player"] not in seating
        ):
            break
        found.append(move)
    return found


def _replay_move(game: Game, move, number: int, index: int) -> tuple:
    """Make move `index` (0-based) of round `number`; the step it is."""
    try:
        _apply_move(game, move)
    except RecordError:
        raise
    except BadMove as exc:
        raise RecordError(
            f"round {number}, move {index + 1}: {exc}",
            number,
            index + 1,
            problem=exc.problem,
            field=exc.field,
            found=exc.found,
            move=move,
        ) from None
    except IllegalMove as exc:
        raise RecordError(
            f"round {number}, move {index + 1} ({_move_text(move)}): {exc.reason}",
            number,
            index + 1,
            problem="illegal",
            move=move,
            reason=exc.reason,
        ) from exc
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        # Not expected once _apply_move has checked the move: said without details.
        raise RecordError(
            f"round {number}, move {index + 1}: cannot be replayed ({exc})",
            number,
            index + 1,
        ) from exc
    return game, {"kind": "move", "round": number, "move": index + 1, "data": move}


def _move_text(move: dict) -> str:
    return f"{move.get('type')} by {move.get('player')}" if "player" in move else move.get("type")


def _apply_move(game: Game, move) -> None:
    if not isinstance(move, dict):
        raise BadMove("not a dict", "wrong", "move")
    kind = move_value(move, "type", (str,))
    if kind not in MOVE_TYPES:
        raise BadMove(f"unknown move type {kind!r}", "kind", "type", kind)
    if kind == "reshuffle":
        order = move_value(move, "draw_pile", (list,))
        if not all(is_a(card, (int,)) for card in order):
            raise BadMove("its draw_pile holds something other than cards", "wrong", "draw_pile")
        if game.round.draw_pile:
            raise IllegalMove("a reshuffle while the draw pile still has cards")
        game.reshuffle(list(order))
        return
    player = move_value(move, "player", (str,))
    if not player.strip():
        raise BadMove("its player is blank", "wrong", "player")
    if kind == "reveal":
        game.apply(player, Reveal(*move_cell(move)))
    elif kind == "take_discard":
        game.apply(player, TakeDiscard(*move_cell(move)))
    elif kind == "draw":
        if move_value(move, "keep", (bool,)):
            cell = move_cell(move)
            game.apply(player, Draw())
            game.apply(player, KeepDrawn(*cell))
        else:
            flip = move.get("flip")
            if flip is not None and not (
                isinstance(flip, list) and len(flip) == 2 and all(is_a(v, (int,)) for v in flip)
            ):
                raise BadMove("its flip is not a row and a column", "wrong", "flip")
            game.apply(player, Draw())
            game.apply(player, DiscardDrawn(tuple(flip) if flip is not None else None))
    else:
        game.apply(player, Forfeit())


def _check_starter(rnd, rnd_data: dict) -> None:
    """The recorded starter played the round's first turn. In a round without turns it
    is null, or whose turn it is (a round still in play), or the player the rules named
    (as other implementations write it)."""
    recorded = rnd_data.get("starter")
    first = rnd.first_turn
    if recorded == first or (first is None and recorded in (rnd.starter, rnd.turn)):
        return
    played = f"{first} played the first turn" if first else "nobody played a turn"
    raise RecordError(
        f"round {rnd.number}: the starter is {recorded}, but {played}",
        rnd.number,
        problem="starter",
        found=recorded,
        expected=first,
    )


def _check_result(game: Game, rnd_data: dict) -> None:
    """A recorded result must be the one the rules give (checked once it is scored)."""
    if "result" not in rnd_data or game.phase == SCORING:
        return
    rnd = game.round
    mine = rnd.result
    if mine != rnd_data["result"]:
        raise RecordError(
            f"round {rnd.number}: the recorded result is not the one the rules give",
            rnd.number,
            problem="result",
            found=rnd_data["result"],
            expected=mine,
        )

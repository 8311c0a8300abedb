"""Game records in the `skymo.game/1` format (docs/design.md, "Game records"): write and replay."""

from __future__ import annotations

from .actions import DiscardDrawn, Draw, Forfeit, KeepDrawn, Reveal, TakeDiscard
from .game import GAME_OVER, PLAY, ROUND_OVER, SCORING, Game, IllegalMove
from .record_checks import (
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


def to_record(game: Game) -> dict:
    rounds = []
    for rnd in game.rounds:
        entry = {
            "number": rnd.number,
            "seating": list(rnd.seating),
            "grids": rnd.dealt["grids"],
            "discard": rnd.dealt["discard"],
            "draw_pile": rnd.dealt["draw_pile"],
            "starter": _starter(game, rnd),
            "moves": list(rnd.moves),
        }
        if rnd.result is not None:
            entry["result"] = rnd.result
        rounds.append(entry)
    ended = game.phase == GAME_OVER
    return {
        "format": FORMAT,
        "id": game.id,
        "rules": game.rules.to_dict(),
        "players": [p.to_dict() for p in game.players],
        "rounds": rounds,
        "final": {
            "ended": ended,
            "ranking": game.ranking(),
            "forfeited": list(game.forfeited),
        },
    }


def _starter(game: Game, rnd) -> str | None:
    """Who played the round's first turn. While a round is being played and nobody has
    yet, whose turn it is: a record written then must name them, or a drawing of lots
    would not replay."""
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
    1-based number, `data` the move) and "result" once the round is scored."""
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise RecordError(f"not a {FORMAT} record", problem="format")
    rules, players, rounds = header(record)
    game = Game(players, rules, seed=record.get("id", ""), game_id=record.get("id", ""), deal=False)
    game.hold_scoring = True
    yield game, {"kind": "start", "round": 0}
    previous = None
    for position, rnd_data in enumerate(rounds, start=1):
        deck, moves = round_data(rules, rnd_data, position, game.active())
        number = position
        if game.phase == SCORING:
            game.score_round()
            _check_result(game, previous)
            yield game, {"kind": "result", "round": previous["number"]}
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
        for index, move in enumerate(moves):
            try:
                if isinstance(move, dict) and move.get("after_result") and game.phase == SCORING:
                    game.score_round()
                    _check_result(game, rnd_data)
                    yield game, {"kind": "result", "round": number}
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
            yield game, {"kind": "move", "round": number, "move": index + 1, "data": move}
        _check_starter(game.round, rnd_data)
        _check_result(game, rnd_data)
        previous = rnd_data
    if game.phase == SCORING:
        game.score_round()
        _check_result(game, previous)
        yield game, {"kind": "result", "round": previous["number"]}
    game.hold_scoring = False


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

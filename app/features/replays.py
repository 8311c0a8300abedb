"""Replays of finished games from their `skymo.game/1` record: the board at step k (all
cards shown: the game is over), the move in words, round boundaries and scores.

A replay re-runs the record through the engine (app.engine.record.replay_steps), so an
uploaded file is checked by the rules themselves; nothing of an upload is stored."""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from dataclasses import dataclass, field

from flask_babel import gettext as _

from app.engine import DOWN, GONE, RecordError
from app.engine.record import FORMAT, replay_steps
from app.features.outcome import card_tone, log_line, round_result
from app.features.record_messages import explain, short

MAX_BYTES = 1_000_000  # the longest real games are a few tens of KB


class ReplayError(ValueError):
    """A record that cannot be replayed; `message` says what is wrong, for people."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass
class Replay:
    step: int  # the step shown, 0-based
    count: int  # how many steps the game has
    board: dict
    words: list[str]  # the move (or deal, or scoring) in words
    rounds: list[dict] = field(default_factory=list)  # number, first step, result step


def parse_upload(data: bytes) -> dict:
    """JSON of a record, or a ReplayError naming what is wrong."""
    if len(data) > MAX_BYTES:
        raise ReplayError(too_large(), 413)
    if not data.strip():
        raise ReplayError(_("Choose a %(format)s file to open.", format=FORMAT))
    try:
        record = json.loads(data.decode("utf-8-sig"))  # a byte order mark is no fault
    except UnicodeDecodeError:
        raise ReplayError(_("This file is not JSON: it is not even text.")) from None
    except json.JSONDecodeError as exc:
        raise ReplayError(
            _(
                "This file is not JSON (line %(line)d, column %(col)d).",
                line=exc.lineno,
                col=exc.colno,
            )
        ) from None
    except ValueError:  # an integer of thousands of digits: Python refuses to read it
        raise ReplayError(_("This file holds a number far too long for a game record.")) from None
    except RecursionError:
        raise ReplayError(_("This file is nested far too deeply for a game record.")) from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        found = record.get("format") if isinstance(record, dict) else None
        if isinstance(found, str) and found.strip():
            raise ReplayError(
                _(
                    "This is JSON but not a %(format)s record (its format is %(found)s).",
                    format=FORMAT,
                    found=json.dumps(short(found), ensure_ascii=False),
                )
            )
        raise ReplayError(_("This is JSON but not a %(format)s record.", format=FORMAT))
    return record


def pack(record: dict) -> str:
    """The record as the replay page's form carries it between steps: compressed, as
    its JSON would be several times bigger in an HTML attribute."""
    data = json.dumps(record, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(zlib.compress(data, 6)).decode()


def unpack(text: str) -> bytes:
    """The JSON bytes of a packed record (never more than MAX_BYTES + 1 of them)."""
    try:
        packed = base64.urlsafe_b64decode(text.encode())
        inflate = zlib.decompressobj()
        return inflate.decompress(packed, MAX_BYTES + 1)
    except (binascii.Error, ValueError, zlib.error):
        raise ReplayError(_("This replay's form was damaged: open the file again.")) from None


def too_large() -> str:
    return _("This file is too large: a record has at most %(n)d KB.", n=MAX_BYTES // 1000)


def replay_at(record: dict, step: int) -> Replay:
    """The game at `step` (clamped to the game's steps). One pass over the record: the
    board is taken at `step`, the rest only counts steps and marks round boundaries."""
    shown = None
    count = 0
    rounds: list[dict] = []
    log_seen = 0
    game = None
    try:
        for game, info in replay_steps(record):
            if info["kind"] == "start":
                continue
            if info["kind"] == "deal":
                rounds.append({"number": info["round"], "first": count, "result": None})
                log_seen = 0
            elif info["kind"] == "result":
                rounds[-1]["result"] = count
            log = game.round.log
            if count == step or shown is None:
                shown = (count, board(game, info), words(game, info, log[log_seen:]))
            log_seen = len(log)
            count += 1
    except RecordError as exc:
        raise ReplayError(explain(exc, game)) from None
    if shown is None:
        raise ReplayError(_("This record has no round to replay."))
    if step >= count:  # past the end: the last step (taken again, cheaply enough)
        return replay_at(record, count - 1)
    at, shown_board, shown_words = shown
    return Replay(at, count, shown_board, shown_words, rounds)


def words(game, info: dict, events: list[dict]) -> list[str]:
    names = {p.id: p.name for p in game.players}
    if info["kind"] == "deal":
        return [_("Round %(n)d: the cards are dealt.", n=info["round"])]
    lines = [line for line in (log_line(e, names) for e in events) if line]
    if info["kind"] == "result":
        lines.append(_("Round %(n)d is scored.", n=info["round"]))
        if game.is_over:
            lines.append(_("The game is over."))
    elif info["data"].get("type") == "reveal" and not lines:
        lines.append(_("%(name)s turned over a card.", name=names.get(info["data"]["player"], "")))
    return lines


def board(game, info: dict) -> dict:
    rnd = game.round
    names = {p.id: p.name for p in game.players}
    players = []
    for pid in rnd.seating:
        grid = rnd.grids[pid]
        rows = []
        for r in range(grid.rows):
            row = []
            for c in range(grid.cols):
                i = r * grid.cols + c
                value, state = grid.values[i], grid.state[i]
                where = _("Row %(row)s, column %(col)s", row=r + 1, col=c + 1)
                if state == GONE:
                    label = _("%(where)s: cleared", where=where)
                elif state == DOWN:
                    label = _("%(where)s: %(card)s, face down", where=where, card=value)
                else:
                    label = _("%(where)s: %(card)s", where=where, card=value)
                row.append(
                    {
                        "value": value,
                        "state": {DOWN: "down", GONE: "gone"}.get(state, "up"),
                        "tone": card_tone(value),
                        "label": label,
                    }
                )
            rows.append(row)
        players.append(
            {
                "id": pid,
                "name": names[pid],
                "total": game.totals[pid],
                "grid": rows,
                "is_turn": rnd.turn == pid,
                "is_ender": rnd.ender == pid,
                "forfeited": pid in game.forfeited,
            }
        )
    result = None
    if info["kind"] == "result" and rnd.result:
        result = round_result(game, rnd.result, names, None)
    return {
        "round": rnd.number,
        "players": players,
        "cols": game.rules.cols,
        "discard_top": rnd.discard[-1] if rnd.discard else None,
        "draw_count": len(rnd.draw_pile),
        "drawn": rnd.drawn,
        "turn": names.get(rnd.turn),
        "result": result,
        "ranking": [
            {"rank": r["rank"], "name": names[r["player"]], "total": r["total"]}
            for r in game.ranking()
        ]
        if game.is_over
        else None,
    }

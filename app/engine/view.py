"""What one player may know (boardgame.io's playerView): never a face-down value, never
the draw pile's order, never another player's drawn card."""

from __future__ import annotations

from .game import GAME_OVER, GONE, PLAY, SETUP, UP, Game

_DOWN = {"state": "down"}
_GONE = {"state": "gone"}


def view(game: Game, player_id: str | None) -> dict:
    """A JSON-able dict of everything `player_id` may see (None: a spectator).

    Grids are lists of rows of cells; a cell is {"state": "up", "value": v},
    {"state": "down"} or {"state": "gone"}."""
    rules = game.rules
    over = game.phase == GAME_OVER
    rnd = game.rounds[-1] if game.rounds else None
    show_totals = rules.show_running_score or over
    me = player_id if player_id in game.totals else None
    players = []
    for p in game.players:
        entry = {
            "id": p.id,
            "name": p.name,
            "bot": p.bot,
            "forfeited": p.id in game.forfeited,
            "total": game.totals[p.id] if show_totals else None,
        }
        players.append(entry)
    data = {
        "me": me,
        "rules": rules.to_dict(),
        "phase": game.phase,
        "players": players,
        "round": None,
        "previous_result": None,
        "ranking": game.ranking() if over else None,
    }
    if rnd is None:
        return data
    grids = {}
    for p, grid in rnd.grids.items():
        # The final reveal turns every card up before scoring, so a scored round shows all.
        cells = [_cell(value, state) for value, state in zip(grid.values, grid.state, strict=True)]
        cols = grid.cols
        grids[p] = [cells[r * cols : (r + 1) * cols] for r in range(grid.rows)]
    data["round"] = {
        "number": rnd.number,
        "seating": list(rnd.seating),
        "grids": grids,
        "setup_left": dict(rnd.setup_left) if game.phase == SETUP else {},
        "starter": rnd.starter,
        "turn": rnd.turn if game.phase == PLAY else None,
        "ender": rnd.ender,
        "last_turns": list(rnd.last_turns),
        "draw_count": len(rnd.draw_pile),
        "discard_top": rnd.discard[-1] if rnd.discard else None,
        "discard_count": len(rnd.discard),
        "has_drawn": rnd.drawn is not None,
        "drawn": rnd.drawn if rnd.drawn is not None and rnd.turn == me and me is not None else None,
        "log": list(rnd.log),
        "result": _visible_result(rnd.result, show_totals),
    }
    if len(game.rounds) > 1:
        data["previous_result"] = _visible_result(game.rounds[-2].result, show_totals)
    return data


def _visible_result(result: dict | None, show_totals: bool) -> dict | None:
    if result is None:
        return None
    visible = dict(result)
    if not show_totals:
        visible["totals"] = None
    return visible


def _cell(value: int, state: int) -> dict:
    if state == UP:
        return {"state": "up", "value": value}
    return dict(_GONE) if state == GONE else dict(_DOWN)

"""What one player may know (boardgame.io's playerView): never a face-down value, never
the draw pile's order, never another player's drawn card."""

from __future__ import annotations

from .game import DOWN, GAME_OVER, PLAY, SETUP, UP, Game
from .rules import RuleSet


def view(game: Game, player_id: str | None) -> dict:
    """A JSON-able dict of everything `player_id` may see (None: a spectator).

    Grids are lists of rows of cells; a cell is {"state": "up", "value": v},
    {"state": "down"} or {"state": "gone"}."""
    rules = game.rules
    over = game.phase == GAME_OVER
    rnd = game.rounds[-1] if game.rounds else None
    show_totals = rules.show_running_score or over
    me = player_id if player_id in game.totals else None
    totals = game.totals
    forfeited = game.forfeited
    players = [
        {
            "id": p.id,
            "name": p.name,
            "bot": p.bot,
            "forfeited": p.id in forfeited,
            "total": totals[p.id] if show_totals else None,
        }
        for p in game.players
    ]
    data = {
        "me": me,
        "rules": _rules_dict(rules),
        "phase": game.phase,
        "players": players,
        "round": None,
        "previous_result": None,
        "ranking": game.ranking() if over else None,
    }
    if rnd is None:
        return data
    # The final reveal turns every card up before scoring, so a scored round shows all.
    grids = {p: _rows(grid.values, grid.state, grid.cols) for p, grid in rnd.grids.items()}
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
        # Every card on the discard pile was seen face up by everyone: a player who
        # watched the whole round knows them (bottom first).
        "discard_pile": list(rnd.discard),
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


# RuleSet is frozen: its dict is built once per rule set (asdict is slow) and copied.
_RULES_DICTS: dict[int, tuple[RuleSet, dict, tuple[str, ...]]] = {}


def _rules_dict(rules: RuleSet) -> dict:
    cached = _RULES_DICTS.get(id(rules))
    if cached is None or cached[0] is not rules:
        if len(_RULES_DICTS) > 256:
            _RULES_DICTS.clear()
        data = rules.to_dict()
        nested = tuple(k for k, v in data.items() if isinstance(v, dict))
        cached = (rules, data, nested)
        _RULES_DICTS[id(rules)] = cached
    _, data, nested = cached
    copy = dict(data)
    for key in nested:
        copy[key] = dict(data[key])
    return copy


def _rows(values: list[int], state: list[int], cols: int) -> list[list[dict]]:
    """A grid as rows of fresh cell dicts (view() runs for every move a bot makes)."""
    rows = []
    for start in range(0, len(values), cols):
        row = []
        for i in range(start, start + cols):
            s = state[i]
            if s == UP:
                row.append({"state": "up", "value": values[i]})
            elif s == DOWN:
                row.append({"state": "down"})
            else:
                row.append({"state": "gone"})
        rows.append(row)
    return rows

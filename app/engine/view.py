"""What one player may know (boardgame.io's playerView): never a face-down value, never
the draw pile's order, never another player's drawn card.

A view is read-only and shared. Its public part is built once per change of the game
(every change appends a public event to the round's log, so the round and its log's
length name the change) and reused by every viewer; within it a grid's rows are rebuilt
only when that grid changed, the players only when a round is scored or someone leaves.
Per viewer only the drawer's drawn card and the legal actions differ."""

from __future__ import annotations

from operator import getitem

from app.engine.actions import action_to_dict
from app.engine.frozen import Frozen, freeze
from app.engine.game import DOWN, GAME_OVER, GONE, PLAY, SETUP, UP, Game
from app.engine.rules import RuleSet

__all__ = ["Frozen", "carry_over", "carry_over_newer", "freeze", "legal", "rules_view", "view"]

DOWN_CELL = Frozen(state="down")
GONE_CELL = Frozen(state="gone")
_EMPTY = Frozen()


def view(game: Game, player_id: str | None) -> dict:
    """Everything `player_id` may see (None: a spectator), as JSON-able data: a dict of
    its own whose values are read-only and shared with other views.

    Grids are tuples of rows of cells; a cell is {"state": "up", "value": v},
    {"state": "down"} or {"state": "gone"}. `legal` lists the viewer's legal actions now
    (Game.legal_actions in the `action_to_dict` form; Forfeit, always allowed, aside)."""
    shared = _shared(game)
    if player_id not in game.totals:
        return dict(shared.data)
    rnd = shared.rnd
    if rnd is not None and rnd.drawn is not None and rnd.turn == player_id:
        mine = Frozen(shared.data["round"], drawn=rnd.drawn)
        return dict(shared.data, me=player_id, round=mine, legal=legal(game, player_id))
    return dict(shared.data, me=player_id, legal=legal(game, player_id))


def legal(game: Game, player_id: str) -> tuple[Frozen, ...]:
    """The engine's legal actions for `player_id`, as read-only dicts. They depend only
    on the stage of the player's turn and the states of their grid, so each such
    combination is converted once."""
    stage = game.stage(player_id)
    if stage is None:
        return ()
    grid = game.rounds[-1].grids[player_id]
    state = grid.state
    if stage == "take" and GONE not in state:
        # Draw, or take the discard onto any card: the same for every such grid.
        key = (stage, grid.cols, len(state))
    else:
        key = (stage, grid.cols, *state)
    found = _LEGAL.get(key)
    if found is None:
        if len(_LEGAL) > 50_000:
            _LEGAL.clear()
        found = _LEGAL[key] = tuple(map(_as_dict, game.legal_actions(player_id)))
    return found


_LEGAL: dict[tuple, tuple[Frozen, ...]] = {}


def _as_dict(action) -> Frozen:
    """An action as a read-only dict. The engine's legal actions are shared instances,
    so each is converted once (the cache keeps the action, so its id stays its own)."""
    found = _ACTION_DICTS.get(id(action))
    if found is None or found[0] is not action:
        if len(_ACTION_DICTS) > 10_000:
            _ACTION_DICTS.clear()
        found = _ACTION_DICTS[id(action)] = (action, freeze(action_to_dict(action)))
    return found[1]


_ACTION_DICTS: dict[int, tuple] = {}


class _Shared:
    """The part of every view that does not depend on the viewer, for one change."""

    __slots__ = (
        "rnd",
        "events",
        "phase",
        "forfeits",
        "data",
        "players",
        "grids",
        "grids_view",
        "rules",
        "log",
        "seating",
        "results",
    )

    def __init__(self):
        self.rnd = None
        self.events = -1  # length of the round's log when built
        self.phase = None
        self.forfeits = 0
        self.data: Frozen = _EMPTY
        self.players: tuple = ((), ())  # (key, players)
        self.grids: dict[str, tuple] = {}  # player -> (values, state, rows)
        self.grids_view: Frozen | None = None  # every grid's rows, by player
        self.rules: tuple = (None, _EMPTY)  # (RuleSet, its view)
        self.log: tuple = ()
        self.seating: tuple = ()
        self.results: dict[int, tuple] = {}  # id(result) -> (result, show_totals, view)


def carry_over(original: Game, copy: Game) -> None:
    """Give `copy`, a fork of `original` whose current round is a copy of the original's
    (app.storage.table_store.fork), a view cache of its own that starts from the original's:
    the copy's first view then rebuilds only the grids its change touched, and neither
    game's cache is changed through the other."""
    old = original.__dict__.get("_view_cache")
    copy.__dict__.pop("_view_cache", None)
    if old is None:
        return
    # The copy's round has the same cards and log as the original's, so far.
    same = original.rounds and old.rnd is original.rounds[-1] and copy.rounds
    copy.__dict__["_view_cache"] = _started_from(old, copy.rounds[-1] if same else None)


def carry_over_newer(known: Game, newer: Game) -> None:
    """Give `newer`, the same game decoded at a later version (another process's change,
    app.storage.table_store.Store.from_message), a view cache that starts from `known`'s: its
    first view then rebuilds only the grids that changed since, and the grids and log
    lines that did not are the same objects (the board's presenter reuses what it drew
    for them by identity). Nothing is carried from another round or an older version."""
    old = known.__dict__.get("_view_cache")
    if old is None or not known.rounds or not newer.rounds or old.rnd is not known.rounds[-1]:
        return
    rnd = newer.rounds[-1]
    # A round's log only grows: the same round, as long or longer, starts with its events.
    if rnd.number != old.rnd.number or len(rnd.log) < len(old.log):
        return
    # The players' view is kept by a key that tells totals and forfeits apart, not names.
    players = [(p.id, p.name, p.bot) for p in known.players]
    same_players = players == [(p.id, p.name, p.bot) for p in newer.players]
    newer.__dict__["_view_cache"] = _started_from(old, rnd, same_players)


def _started_from(old: _Shared, rnd, players: bool = True) -> _Shared:
    """A new view cache with `old`'s parts: its round's grids and log when `rnd` is that
    same round (as far as `old` saw it), its players' view when `players`."""
    new = _Shared()
    if rnd is not None:
        new.rnd = rnd
        new.grids, new.grids_view = dict(old.grids), old.grids_view
        new.log, new.seating = old.log, old.seating
    if players:
        new.players = old.players
    new.rules = old.rules
    new.results = dict(old.results)
    return new


def _shared(game: Game) -> _Shared:
    cache = game.__dict__.get("_view_cache")
    if cache is None:
        cache = game.__dict__["_view_cache"] = _Shared()
    rounds = game.rounds
    rnd = rounds[-1] if rounds else None
    events = len(rnd.log) if rnd is not None else 0
    if (
        cache.events != events
        or cache.rnd is not rnd
        or cache.phase != game.phase
        or cache.forfeits != len(game.forfeited)
    ):
        _rebuild(game, rnd, cache)
        cache.rnd, cache.events = rnd, events
        cache.phase, cache.forfeits = game.phase, len(game.forfeited)
    return cache


def _rebuild(game: Game, rnd, cache: _Shared) -> None:
    phase = game.phase
    over = phase == GAME_OVER
    show_totals = game.rules.show_running_score or over
    # Totals change only when a round is scored, which changes the phase.
    key = (phase, len(game.rounds), len(game.forfeited), show_totals)
    if cache.players[0] != key:
        cache.players = (key, _players(game, show_totals))
    rules = cache.rules
    if rules[0] is not game.rules:
        rules = cache.rules = (game.rules, rules_view(game.rules))
    previous = None
    if rnd is not None and len(game.rounds) > 1:
        previous = _result(game.rounds[-2].result, show_totals, cache)
    cache.data = Frozen(
        {
            "me": None,
            "rules": rules[1],
            "phase": phase,
            "players": cache.players[1],
            "round": _round(game, rnd, cache, show_totals) if rnd is not None else None,
            "previous_result": previous,
            "ranking": freeze(game.ranking()) if over else None,
            "legal": (),
        }
    )


def _players(game: Game, show_totals: bool) -> tuple[Frozen, ...]:
    totals = game.totals
    forfeited = game.forfeited
    return tuple(
        Frozen(
            id=p.id,
            name=p.name,
            bot=p.bot,
            forfeited=p.id in forfeited,
            total=totals[p.id] if show_totals else None,
        )
        for p in game.players
    )


def _round(game: Game, rnd, cache: _Shared, show_totals: bool) -> Frozen:
    if cache.rnd is not rnd:
        cache.grids = {}
        cache.log = ()
        cache.seating = tuple(rnd.seating)
        cache.grids_view = None
    cached = cache.grids
    changed = cache.grids_view is None
    for p, grid in rnd.grids.items():
        # The final reveal turns every card up before scoring, so a scored round shows all.
        values, state = grid.values, grid.state
        old = cached.get(p)
        if old is None or old[0] != values or old[1] != state:
            cached[p] = (values[:], state[:], _rows(values, state, grid.cols))
            changed = True
    if changed:  # a draw, a reshuffle or a forfeit changes no grid
        cache.grids_view = Frozen({p: cached[p][2] for p in rnd.grids})
    log = cache.log
    if len(log) != len(rnd.log):
        # The engine's events are read-only already; a loaded game's are frozen here.
        new = tuple(rnd.log[len(log) :])
        if type(new[0]) is not Frozen:
            new = tuple(map(freeze, new))
        log = cache.log = log + new
    discard = rnd.discard
    phase = game.phase
    return Frozen(
        {
            "number": rnd.number,
            "seating": cache.seating,
            "grids": cache.grids_view,
            "setup_left": Frozen(rnd.setup_left) if phase == SETUP else _EMPTY,
            "starter": rnd.starter,
            "turn": rnd.turn if phase == PLAY else None,
            "ender": rnd.ender,
            "last_turns": tuple(rnd.last_turns),
            "draw_count": len(rnd.draw_pile),
            "discard_top": discard[-1] if discard else None,
            "discard_count": len(discard),
            # Every card on the discard pile was seen face up by everyone: a player who
            # watched the whole round knows them (bottom first).
            "discard_pile": tuple(discard),
            "has_drawn": rnd.drawn is not None,
            "drawn": None,
            "log": log,
            "result": _result(rnd.result, show_totals, cache) if rnd.result else None,
        }
    )


def _result(result: dict | None, show_totals: bool, cache: _Shared) -> Frozen | None:
    """A round's result (totals hidden unless shown), frozen once per result."""
    if result is None:
        return None
    found = cache.results.get(id(result))
    if found is not None and found[0] is result and found[1] == show_totals:
        return found[2]
    visible = freeze(result)
    if not show_totals:
        visible = Frozen(visible, totals=None)
    cache.results[id(result)] = (result, show_totals, visible)
    return visible


# RuleSet is frozen: its view is built once per rule set (asdict is slow) and shared.
_RULES: dict[int, tuple[RuleSet, Frozen]] = {}


def rules_view(rules: RuleSet) -> Frozen:
    cached = _RULES.get(id(rules))
    if cached is None or cached[0] is not rules:
        if len(_RULES) > 256:
            _RULES.clear()
        cached = _RULES[id(rules)] = (rules, freeze(rules.to_dict()))
    return cached[1]


# Every real card's cell exists once: _CELLS[state][value].
_CELLS = (
    {v: DOWN_CELL for v in range(-2, 13)},
    {v: Frozen(state="up", value=v) for v in range(-2, 13)},
    {v: GONE_CELL for v in range(-2, 13)},
)
assert (DOWN, UP, GONE) == (0, 1, 2)


def _cell(value: int, state: int) -> Frozen:
    if state == UP:
        return Frozen(state="up", value=value)
    return DOWN_CELL if state == DOWN else GONE_CELL


def _rows(values: list[int], state: list[int], cols: int) -> tuple[tuple, ...]:
    """A grid as rows of shared cells (looked up in C: this runs after every move)."""
    try:
        cells = tuple(map(getitem, map(_CELLS.__getitem__, state), values))
    except (KeyError, IndexError, TypeError):  # a card outside the deck's values
        cells = tuple(map(_cell, values, state))
    return tuple([cells[start : start + cols] for start in range(0, len(cells), cols)])

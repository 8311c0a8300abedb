"""What one player may know (boardgame.io's playerView): never a face-down value, never
the draw pile's order, never another player's drawn card.

A view is read-only and shared: the public part is built once per change of the game
(every change appends a public event to the round's log, so the round and its log's
length name the change) and reused by every viewer; a grid's rows are rebuilt only when
that grid changed. Only the drawer's view differs (its drawn card), and each viewer's
legal actions."""

from __future__ import annotations

from .actions import action_to_dict
from .game import DOWN, GAME_OVER, PLAY, SETUP, UP, Game
from .rules import RuleSet


class Frozen(dict):
    """A dict that refuses changes: views are shared between callers, so none may alter
    what the next one sees. Still a dict, so JSON and templates read it as usual."""

    __slots__ = ()

    def _read_only(self, *args, **kwargs):
        raise TypeError("a view is read-only")

    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only

    def __reduce__(self):
        return (Frozen, (dict(self),))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def freeze(data):
    """A read-only deep copy of JSON-like data (dicts become Frozen, lists tuples)."""
    if isinstance(data, dict):
        return Frozen({k: freeze(v) if isinstance(v, _NESTED) else v for k, v in data.items()})
    if isinstance(data, list | tuple):
        return tuple(freeze(v) if isinstance(v, _NESTED) else v for v in data)
    return data


_NESTED = (dict, list, tuple)


DOWN_CELL = Frozen(state="down")
GONE_CELL = Frozen(state="gone")
_UP_CELLS = {v: Frozen(state="up", value=v) for v in range(-2, 13)}


def view(game: Game, player_id: str | None) -> Frozen:
    """Everything `player_id` may see (None: a spectator), as read-only JSON-able data.

    Grids are tuples of rows of cells; a cell is {"state": "up", "value": v},
    {"state": "down"} or {"state": "gone"}. `legal` lists the viewer's legal actions now
    (Game.legal_actions in the `action_to_dict` form; Forfeit, always allowed, aside)."""
    shared = _shared(game)
    me = player_id if player_id in game.totals else None
    if me is None:
        return Frozen(shared.data, me=None, legal=())
    rnd = game.rounds[-1] if game.rounds else None
    if rnd is not None and rnd.drawn is not None and rnd.turn == me:
        mine = Frozen(shared.data["round"], drawn=rnd.drawn)
        return Frozen(shared.data, me=me, round=mine, legal=legal(game, me))
    return Frozen(shared.data, me=me, legal=legal(game, me))


def legal(game: Game, player_id: str) -> tuple[Frozen, ...]:
    """The engine's legal actions for `player_id`, as read-only dicts. They depend only
    on the stage of the player's turn and the states of their grid, so each such
    combination is converted once."""
    stage = game.stage(player_id)
    if stage is None:
        return ()
    grid = game.rounds[-1].grids[player_id]
    key = (stage, grid.cols, tuple(grid.state))
    found = _LEGAL.get(key)
    if found is None:
        if len(_LEGAL) > 50_000:
            _LEGAL.clear()
        found = tuple(_as_dict(a) for a in game.legal_actions(player_id))
        _LEGAL[key] = found
    return found


_LEGAL: dict[tuple, tuple[Frozen, ...]] = {}


def _as_dict(action) -> Frozen:
    """An action as a read-only dict; the engine's legal actions are shared instances,
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

    __slots__ = ("key", "data", "grids", "log", "results")

    def __init__(self):
        self.key = None
        self.data: Frozen | None = None
        self.grids: dict[str, tuple] = {}  # player -> (values, state, rows)
        self.log: tuple = ()
        self.results: dict[int, tuple] = {}  # id(result) -> (result, show_totals, view)


def _shared(game: Game) -> _Shared:
    cache = game.__dict__.get("_view_cache")
    if cache is None:
        cache = game.__dict__["_view_cache"] = _Shared()
    rnd = game.rounds[-1] if game.rounds else None
    key = (rnd, len(rnd.log) if rnd else 0, game.phase, len(game.forfeited))
    if cache.key is None or cache.key[0] is not key[0] or cache.key[1:] != key[1:]:
        _rebuild(game, rnd, cache)
        cache.key = key
    return cache


def _rebuild(game: Game, rnd, cache: _Shared) -> None:
    rules = game.rules
    over = game.phase == GAME_OVER
    show_totals = rules.show_running_score or over
    totals = game.totals
    forfeited = game.forfeited
    players = tuple(
        Frozen(
            id=p.id,
            name=p.name,
            bot=p.bot,
            forfeited=p.id in forfeited,
            total=totals[p.id] if show_totals else None,
        )
        for p in game.players
    )
    data = {
        "me": None,
        "rules": rules_view(rules),
        "phase": game.phase,
        "players": players,
        "round": None,
        "previous_result": None,
        "ranking": freeze(game.ranking()) if over else None,
    }
    if rnd is not None:
        data["round"] = _round(game, rnd, cache, show_totals)
        if len(game.rounds) > 1:
            data["previous_result"] = _visible_result(game.rounds[-2].result, show_totals, cache)
    cache.data = Frozen(data)


def _round(game: Game, rnd, cache: _Shared, show_totals: bool) -> Frozen:
    if cache.key is None or cache.key[0] is not rnd:
        cache.grids = {}
        cache.log = ()
    grids = {}
    for p, grid in rnd.grids.items():
        # The final reveal turns every card up before scoring, so a scored round shows all.
        old = cache.grids.get(p)
        if old is not None and old[0] == grid.values and old[1] == grid.state:
            grids[p] = old[2]
        else:
            rows = _rows(grid.values, grid.state, grid.cols)
            cache.grids[p] = (list(grid.values), list(grid.state), rows)
            grids[p] = rows
    log = cache.log
    if len(log) != len(rnd.log):
        log = cache.log = log + tuple(freeze(e) for e in rnd.log[len(log) :])
    discard = rnd.discard
    return Frozen(
        number=rnd.number,
        seating=tuple(rnd.seating),
        grids=Frozen(grids),
        setup_left=Frozen(rnd.setup_left) if game.phase == SETUP else Frozen(),
        starter=rnd.starter,
        turn=rnd.turn if game.phase == PLAY else None,
        ender=rnd.ender,
        last_turns=tuple(rnd.last_turns),
        draw_count=len(rnd.draw_pile),
        discard_top=discard[-1] if discard else None,
        discard_count=len(discard),
        # Every card on the discard pile was seen face up by everyone: a player who
        # watched the whole round knows them (bottom first).
        discard_pile=tuple(discard),
        has_drawn=rnd.drawn is not None,
        drawn=None,
        log=log,
        result=_visible_result(rnd.result, show_totals, cache),
    )


def _visible_result(result: dict | None, show_totals: bool, cache: _Shared) -> Frozen | None:
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


def _rows(values: list[int], state: list[int], cols: int) -> tuple[tuple[Frozen, ...], ...]:
    cells = [
        (_UP_CELLS.get(v) or Frozen(state="up", value=v))
        if s == UP
        else (DOWN_CELL if s == DOWN else GONE_CELL)
        for v, s in zip(values, state, strict=True)
    ]
    return tuple(tuple(cells[i : i + cols]) for i in range(0, len(cells), cols))

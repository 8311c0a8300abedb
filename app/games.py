"""The table service: the only place that joins the engine, the store and the hub.

Every change follows one path: lock the table, load it, check the client's `version`,
apply through the engine, write state and version in one transaction, then push.
Bots and timers (next round) go through the same path from the scheduler."""

from __future__ import annotations

import heapq
import logging
import random
import re
import secrets
import threading
import time
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass

from flask_babel import gettext as _

from . import i18n, models, stats
from .engine import (
    GAME_OVER,
    PLAY,
    ROUND_OVER,
    SETUP,
    Action,
    Forfeit,
    Game,
    IllegalMove,
    Player,
    RuleError,
    RuleSet,
    to_record,
    view,
)
from .engine.bots import BOTS, choose
from .hub import hub
from .models import GameRecord, Seat, Table, db, utcnow

log = logging.getLogger(__name__)

MAX_SEATS = 8
NAME_MAX = 20
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: codes are read aloud
NEXT_ROUND_SECONDS = 20
PROXY_BOT = "random"  # docs/rules.md: an away player's turns are played by the simplest bot
BOT_NAMES = {
    "random": ["Dice", "Coin", "Lottie", "Rolly"],
    "greedy": ["Gobbler", "Grabby", "Magpie", "Hoarder"],
    "strong": ["Ada", "Turing", "Deep Blue", "Hal"],
    "expert": ["Shannon", "Lovelace", "Knuth", "Kasparov"],
}


class TableError(Exception):
    """A request the table cannot take; `message` is shown to the player."""

    def __init__(self, message: str, status: int = 400, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.field = field


class Stale(Exception):
    """The client acted on an old version: it gets the current table back."""


@dataclass
class Settings:
    bot_delay: float = 0.8  # seconds a bot waits, so people can follow its moves
    next_round_seconds: float = NEXT_ROUND_SECONDS
    inline_bots: bool = False  # tests: bots move inside the request, no scheduler thread


settings = Settings()
_locks: dict[str, threading.Lock] = defaultdict(threading.Lock)
_locks_guard = threading.Lock()
_write_lock = threading.Lock()


@contextmanager
def locked(code: str):
    """One change at a time per table, then one write transaction at a time in this
    process. SQLite has a single writer anyway; queueing here wakes the next writer at
    once, where SQLite's busy handler would poll with growing sleeps (latency spikes,
    and "database is locked" once busy_timeout runs out under load). The version check
    keeps a change exactly-once across processes too."""
    with _locks_guard:
        lock = _locks[code]
    with lock, _write_lock:
        yield


# ----- lookups -------------------------------------------------------------------------
def get_table(code: str) -> Table:
    code = (code or "").strip().upper()
    table = Table.get_or_none(Table.code == code)
    if table is None or table.status == Table.CLOSED:
        raise TableError(_("There is no table with that code."), 404)
    return table


def game_record(code: str, number: int) -> GameRecord | None:
    """The record of a table's finished game number `number`, if there is one."""
    code = (code or "").strip().upper()
    return GameRecord.get_or_none((GameRecord.table == code) & (GameRecord.number == number))


def seats_of(table: Table) -> list[Seat]:
    return list(
        Seat.select().where((Seat.table == table) & (Seat.left == False)).order_by(Seat.position)  # noqa: E712
    )


def seat_by_token(table: Table, token: str | None) -> Seat | None:
    if not token:
        return None
    return Seat.get_or_none((Seat.table == table) & (Seat.token == token) & (Seat.left == False))  # noqa: E712


def seat_by_user(table: Table, user_id: int | None) -> Seat | None:
    """A signed-in user's seat at this table, whichever device they sat down from."""
    if user_id is None:
        return None
    return Seat.get_or_none((Seat.table == table) & (Seat.user == user_id) & (Seat.left == False))  # noqa: E712


def load_game(table: Table) -> Game | None:
    return Game.from_dict(table.state) if table.state else None


def public_tables(limit: int = 20) -> list[dict]:
    tables = (
        Table.select()
        .where((Table.public == True) & (Table.status == Table.LOBBY))  # noqa: E712
        .order_by(Table.updated_at.desc())
        .limit(limit)
    )
    listed = []
    for table in tables:
        seats = seats_of(table)
        host = next((s for s in seats if s.id == table.host_seat), None)
        if host is None or len(seats) >= MAX_SEATS:
            continue
        listed.append(
            {
                "code": table.code,
                "host": host.name,
                "seats": len(seats),
                "max": MAX_SEATS,
                "rules": i18n.rules_summary(RuleSet.from_dict(table.rules)),
            }
        )
    return listed


# ----- validation ----------------------------------------------------------------------
def clean_name(name, table: Table | None = None, exclude: Seat | None = None) -> str:
    if not isinstance(name, str):
        raise TableError(_("Type a name."), field="name")
    name = " ".join(name.split())  # trims, and folds runs of spaces
    if not name:
        raise TableError(_("Type a name."), field="name")
    if len(name) > NAME_MAX:
        raise TableError(_("A name has at most %(num)s characters.", num=NAME_MAX), field="name")
    if any(ord(ch) < 32 for ch in name):
        raise TableError(_("That name has characters we cannot show."), field="name")
    if table is not None:
        for seat in seats_of(table):
            if seat is not exclude and seat.name.casefold() == name.casefold():
                raise TableError(
                    _("%(name)s is already at this table: pick another name.", name=name),
                    field="name",
                )
    return name


def parse_rules(form) -> RuleSet:
    """Build a RuleSet from the lobby form; RuleError names the field that is wrong."""

    def number(field, default, rule=None):
        raw = form.get(field)
        if raw is None or str(raw).strip() == "":
            return default
        try:
            return int(str(raw).strip())
        except ValueError:
            # Named as the engine names it, so the message lands next to its field.
            raise RuleError(rule or field, "must be a whole number") from None

    def flag(field):
        return str(form.get(field, "")).lower() in ("on", "1", "true", "yes")

    defaults = RuleSet()
    data = {
        "rows": number("rows", defaults.rows),
        "cols": number("cols", defaults.cols),
        "initial_flips": number("initial_flips", defaults.initial_flips),
        "end_score": number("end_score", defaults.end_score),
        "clear_rows": flag("clear_rows"),
        "penalty": {
            "mode": form.get("penalty_mode") or defaults.penalty.mode,
            "multiplier": number(
                "penalty_multiplier", defaults.penalty.multiplier, "penalty.multiplier"
            ),
            "flat": number("penalty_flat", defaults.penalty.flat, "penalty.flat"),
        },
        "show_running_score": flag("show_running_score"),
        "reseat": form.get("reseat") or defaults.reseat,
    }
    return RuleSet.from_dict(data)


# ----- lobby ---------------------------------------------------------------------------
def new_code() -> str:
    while True:
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(6))
        if not Table.select().where(Table.code == code).exists():
            return code


def create_table(
    host_name: str, public: bool = False, user_id: int | None = None
) -> tuple[Table, Seat]:
    name = clean_name(host_name)
    with db.atomic():
        table = Table.create(code=new_code(), rules=RuleSet().to_dict(), public=bool(public))
        seat = Seat.create(
            table=table, position=0, name=name, token=secrets.token_urlsafe(24), user=user_id
        )
        table.host_seat = seat.id
        table.save()
    return table, seat


def join(code: str, name: str, user_id: int | None = None) -> Seat:
    """Sit down in the lobby; a signed-in user (`user_id`) owns the seat."""
    with locked(code), db.atomic():
        table = get_table(code)
        if user_id is not None and (mine := seat_by_user(table, user_id)) is not None:
            return mine  # already seated, from another device
        if table.status != Table.LOBBY:
            raise TableError(_("This game has already started: you can watch it."), 409)
        seats = seats_of(table)
        if len(seats) >= MAX_SEATS:
            raise TableError(_("This table is full."), 409)
        name = clean_name(name, table)
        position = max((s.position for s in seats), default=-1) + 1
        seat = Seat.create(
            table=table,
            position=position,
            name=name,
            token=secrets.token_urlsafe(24),
            user=user_id,
        )
        _touch(table)
    hub.publish(code, "lobby")
    return seat


def _require_host(table: Table, seat: Seat | None) -> None:
    if seat is None or seat.id != table.host_seat:
        raise TableError(_("Only the host can do that."), 403)


def _require_finished(table: Table) -> None:
    if table.status != Table.FINISHED:
        raise TableError(_("The game is not over yet."), 409)


def _add_vote(table: Table, key: str, seat: Seat) -> None:
    """Record a player's press of "Next round" or "Play again" (once each)."""
    votes = dict(table.votes)
    votes[key] = sorted(set(votes.get(key, [])) | {seat.id})
    table.votes = votes


def _require_lobby(table: Table) -> None:
    if table.status != Table.LOBBY:
        raise TableError(_("The game has already started."), 409)


def _touch(table: Table) -> None:
    table.version += 1
    table.updated_at = utcnow()
    table.save()


def update_rules(code: str, seat: Seat | None, form) -> RuleSet:
    with locked(code), db.atomic():
        table = get_table(code)
        _require_host(table, seat)
        _require_lobby(table)
        try:
            rules = parse_rules(form)
        except RuleError as exc:
            raise TableError(_rule_message(exc), field=exc.field) from None
        grace, rejoin = parse_timers(form, table)
        table.grace_seconds, table.rejoin_seconds = grace, rejoin
        table.rules = rules.to_dict()
        table.public = str(form.get("public", "")).lower() in ("on", "1", "true")
        _touch(table)
    hub.publish(code, "lobby")
    return rules


GRACE_RANGE = (5, 120)
REJOIN_RANGE = (30, 1800)


def parse_timers(form, table: Table) -> tuple[int, int]:
    """The absent-player timers of the lobby form, in seconds, within sane bounds."""
    values = []
    for field, label, (low, high), current in (
        ("grace_seconds", _("Grace period"), GRACE_RANGE, table.grace_seconds),
        ("rejoin_seconds", _("Rejoin window"), REJOIN_RANGE, table.rejoin_seconds),
    ):
        raw = str(form.get(field, "")).strip()
        if not raw:
            values.append(current)
            continue
        try:
            value = int(raw)
        except ValueError:
            message = _("%(label)s must be a whole number of seconds.", label=label)
            raise TableError(message, field=field) from None
        if not low <= value <= high:
            message = _(
                "%(label)s must be from %(low)s to %(high)s seconds.",
                label=label,
                low=low,
                high=high,
            )
            raise TableError(message, field=field)
        values.append(value)
    return values[0], values[1]


def _rule_message(exc: RuleError) -> str:
    """The engine's RuleError (English, for developers) as a sentence in the player's
    language: the field's label and, for numbers, the range it must be in."""
    labels = {
        "rows": _("Rows"),
        "cols": _("Columns"),
        "initial_flips": _("Cards turned at the start"),
        "end_score": _("End score"),
        "penalty.mode": _("Penalty"),
        "penalty.multiplier": _("Multiplier"),
        "penalty.flat": _("Points added"),
        "reseat": _("Seating"),
        "players": _("Players"),
    }
    label = labels.get(exc.field, exc.field)
    bounds = RANGE_RE.search(exc.message)
    if bounds:
        low, high = bounds.groups()
        return _("%(label)s must be from %(low)s to %(high)s.", label=label, low=low, high=high)
    return _("%(label)s: that value is not one of the choices.", label=label)


RANGE_RE = re.compile(r"from (-?\d+) to (-?\d+)")


def illegal_message(reason: str) -> str:
    """An engine IllegalMove reason (English) in the player's language. The engine stays
    free of the web; the moves a page offers never hit these, a stale tab might."""
    known = {
        "There is no card at that position": _("There is no card at that position."),
        "The game is over": _("The game is over."),
        "You are not playing in this game": _("You are not playing in this game."),
        "You have left this game": _("You have left this game."),
        "The round is over; the next one has not started yet": _(
            "The round is over; the next one has not started yet."
        ),
        "Turn your first cards face up before play starts": _(
            "Turn your first cards face up before play starts."
        ),
        "You have already turned your first cards; wait for the others": _(
            "You have already turned your first cards; wait for the others."
        ),
        "Play has started: draw a card or take the discard": _(
            "Play has started: draw a card or take the discard."
        ),
        "You have drawn a card: keep it or discard it": _(
            "You have drawn a card: keep it or discard it."
        ),
        "Draw a card first": _("Draw a card first."),
        "Choose a face-down card to turn over": _("Choose a face-down card to turn over."),
        "That card was cleared from the grid": _("That card was cleared from the grid."),
        "That card is already face up": _("That card is already face up."),
    }
    if reason in known:
        return known[reason]
    turn = TURN_RE.fullmatch(reason)
    if turn:
        return _("It is %(name)s's turn.", name=turn.group(1))
    return _("That move is not allowed now.")


TURN_RE = re.compile(r"It is (.+)'s turn")


def add_bot(code: str, seat: Seat | None, kind: str) -> Seat:
    if kind not in BOTS:
        raise TableError(_("Choose a bot: random, greedy, strong or expert."), field="bot")
    with locked(code), db.atomic():
        table = get_table(code)
        _require_host(table, seat)
        _require_lobby(table)
        seats = seats_of(table)
        if len(seats) >= MAX_SEATS:
            raise TableError(_("This table is full."), 409)
        taken = {s.name.casefold() for s in seats}
        base = [n for n in BOT_NAMES[kind] if n.casefold() not in taken]
        name = base[0] if base else f"Bot {len(seats) + 1}"
        n = 2
        while name.casefold() in taken:
            name, n = f"{BOT_NAMES[kind][0]} {n}", n + 1
        position = max((s.position for s in seats), default=-1) + 1
        bot = Seat.create(
            table=table, position=position, name=name, bot=kind, token=secrets.token_urlsafe(24)
        )
        _touch(table)
    hub.publish(code, "lobby")
    return bot


def remove_seat(code: str, seat: Seat | None, target_id) -> None:
    """The host removes a seat, or anyone leaves the lobby (target is their own seat)."""
    with locked(code), db.atomic():
        table = get_table(code)
        _require_lobby(table)
        try:
            target = Seat.get_or_none((Seat.id == int(target_id)) & (Seat.table == table))
        except (TypeError, ValueError, OverflowError):  # OverflowError: beyond SQLite's ints
            target = None
        if target is None or target.left:
            raise TableError(_("That seat is already empty."), 404)
        if seat is None or (seat.id != table.host_seat and seat.id != target.id):
            raise TableError(_("Only the host can do that."), 403)
        target.left = True
        target.save()
        if target.id == table.host_seat:
            # The host left: the next person in lobby order hosts.
            people = [s for s in seats_of(table) if s.bot is None]
            table.host_seat = people[0].id if people else None
            if table.host_seat is None:
                table.status = Table.CLOSED
        _touch(table)
    hub.publish(code, "lobby")


def start(code: str, seat: Seat | None, version) -> None:
    with locked(code), db.atomic():
        table = get_table(code)
        _check_version(table, version)
        _require_host(table, seat)
        _require_lobby(table)
        seats = seats_of(table)
        if len(seats) < 2:
            raise TableError(_("At least 2 players are needed: invite a friend or add a bot."))
        _new_game(table, seats)
    hub.publish(code, "table")
    after_change(code)


def _new_game(table: Table, seats: list[Seat]) -> Game:
    table.game_number += 1
    players = [Player(s.player_id, s.name, s.bot) for s in seats]
    game = Game(
        players,
        RuleSet.from_dict(table.rules),
        seed=secrets.token_hex(8),
        game_id=f"{table.code}-{table.game_number}",
    )
    _bot_setup(game)
    table.state = game.to_dict()
    table.status = Table.PLAYING
    table.votes = {}
    _touch(table)
    return game


def _check_version(table: Table, version) -> None:
    try:
        version = int(version)
    except (TypeError, ValueError):
        raise Stale() from None
    if version != table.version:
        raise Stale()


# ----- moves ---------------------------------------------------------------------------
def play(code: str, seat: Seat | None, action: Action, version) -> list[dict]:
    """Apply a player's move. Raises Stale for an old version, TableError for a move the
    rules refuse (nothing changes then)."""
    if seat is None:
        raise TableError(_("You are watching this table: join to play."), 403)
    with locked(code), db.atomic():
        table = get_table(code)
        if table.status != Table.PLAYING:
            raise TableError(_("There is no game in progress."), 409)
        _check_version(table, version)
        game = load_game(table)
        try:
            events = game.apply(seat.player_id, action)
        except IllegalMove as exc:
            raise TableError(illegal_message(exc.reason), 409) from None
        _save_game(table, game)
    _changed(code, table, game)
    return events


def _save_game(table: Table, game: Game) -> None:
    """State, version and (at game end) the record, in the caller's transaction."""
    if game.phase == ROUND_OVER and table.votes.get("round") != len(game.rounds):
        table.votes = {"round": len(game.rounds), "round_over_at": time.time(), "next": []}
    if game.phase == GAME_OVER and table.status != Table.FINISHED:
        table.status = Table.FINISHED
        table.votes = {"rematch": []}
        GameRecord.insert(
            table=table, number=table.game_number, record=to_record(game)
        ).on_conflict(
            conflict_target=[GameRecord.table, GameRecord.number],
            preserve=[GameRecord.record, GameRecord.finished_at],
        ).execute()
        stats.record_results(table, game)  # same transaction: results once per game
    table.state = game.to_dict()
    _touch(table)


def vote_next_round(code: str, seat: Seat | None, version) -> None:
    if seat is None:
        raise TableError(_("You are watching this table."), 403)
    with locked(code), db.atomic():
        table = get_table(code)
        _check_version(table, version)
        game = load_game(table)
        if game is None or game.phase != ROUND_OVER:
            raise TableError(_("The round is not over."), 409)
        _add_vote(table, "next", seat)
        if _everyone_ready(table, game):
            game.start_next_round()
            _bot_setup(game)
            _save_game(table, game)
        else:
            _touch(table)
    hub.publish(code, "table")
    after_change(code)


def _everyone_ready(table: Table, game: Game) -> bool:
    humans = {s.id for s in seats_of(table) if s.bot is None and s.player_id in game.active()}
    present = hub.present(table.code) & humans
    needed = present or humans
    return needed <= set(table.votes.get("next", []))


def forfeit(code: str, seat: Seat | None) -> None:
    if seat is None:
        raise TableError(_("You are watching this table."), 403)
    with locked(code), db.atomic():
        table = get_table(code)
        game = load_game(table)
        if game is None or game.is_over:
            raise TableError(_("There is no game in progress."), 409)
        try:
            game.apply(seat.player_id, Forfeit())
        except IllegalMove as exc:
            raise TableError(illegal_message(exc.reason), 409) from None
        _save_game(table, game)
    hub.publish(code, "table")
    after_change(code)


def rename_players(code: str, seat_ids: set[int], name: str) -> None:
    """Show these seats under another name in the table's game and records (a deleted
    account, app.accounts). At a finished table they also leave: no rematch for them."""
    players = {f"s{i}" for i in seat_ids}

    def rename(entries: list[dict]) -> bool:
        hits = [p for p in entries if p.get("id") in players and p.get("name") != name]
        for p in hits:
            p["name"] = name
        return bool(hits)

    with locked(code), db.atomic():
        table = Table.get_or_none(Table.code == code)
        if table is None:
            return
        for row in GameRecord.select().where(GameRecord.table == table):
            record = row.record
            if rename(record.get("players", [])):
                GameRecord.update(record=record).where(GameRecord.id == row.id).execute()
        state = table.state
        if state and rename(state.get("players", [])):
            table.state = state
        Seat.update(name=name).where(Seat.id.in_(list(seat_ids))).execute()
        if table.status == Table.FINISHED:
            Seat.update(left=True).where(Seat.id.in_(list(seat_ids))).execute()
        _touch(table)
    hub.publish(code, "table")


def opt_rematch(code: str, seat: Seat | None, version) -> None:
    if seat is None:
        raise TableError(_("You are watching this table."), 403)
    with locked(code), db.atomic():
        table = get_table(code)
        _check_version(table, version)
        _require_finished(table)
        _add_vote(table, "rematch", seat)
        _touch(table)
    hub.publish(code, "table")


def start_rematch(code: str, seat: Seat | None, version) -> None:
    with locked(code), db.atomic():
        table = get_table(code)
        _check_version(table, version)
        _require_finished(table)
        _require_host_or_first(table, seat)
        opted = set(table.votes.get("rematch", []))
        seats = [s for s in seats_of(table) if s.bot is not None or s.id in opted]
        if sum(1 for s in seats if s.bot is None) < 1 or len(seats) < 2:
            raise TableError(_("At least 2 players must choose to play again."))
        for s in seats_of(table):
            if s not in seats:
                s.left = True
                s.save()
        _new_game(table, seats)
    hub.publish(code, "table")
    after_change(code)


def _require_host_or_first(table: Table, seat: Seat | None) -> None:
    if seat is None:
        raise TableError(_("You are watching this table."), 403)
    if seat.id == table.host_seat:
        return
    opted = table.votes.get("rematch", [])
    if seat.id not in opted:
        raise TableError(_("Choose to play again first."), 409)


# ----- bots and timers -----------------------------------------------------------------
def _bot_setup(game: Game) -> None:
    """Bots turn their first cards at once: nobody needs to watch that."""
    if game.phase != SETUP:
        return
    for p in game.players:
        if p.bot and p.id in game.round.setup_left:
            rng = random.Random(f"{game.seed}:{game.round.number}:{p.id}:setup")
            while game.phase == SETUP and game.round.setup_left.get(p.id, 0) > 0:
                game.apply(p.id, choose(p.bot, view(game, p.id), rng))


HOST_HANDOVER_SECONDS = 10  # a host who reloads the page keeps the table
LOBBY_IDLE_SECONDS = 30 * 60  # a lobby with nobody present closes after this


def _human_seats(table: Table) -> list[Seat]:
    return [s for s in seats_of(table) if s.bot is None]


def next_automatic(
    table: Table, game: Game | None, now: float | None = None
) -> tuple[float, str, str | None] | None:
    """(due time, kind, player) of the next thing the server does by itself, if any:
    bots' moves, moves for away players, forfeits, the next round, lobby upkeep."""
    now = time.time() if now is None else now
    updated = table.updated_at.timestamp() if table.updated_at else now
    if table.status == Table.LOBBY:
        return _lobby_automatic(table, now)
    if table.status != Table.PLAYING or game is None:
        return None
    candidates: list[tuple[float, str, str | None]] = []
    seats = {s.player_id: s for s in seats_of(table)}
    away: dict[str, float] = {}
    for p in game.players:
        seat = seats.get(p.id)
        if p.bot or p.id in game.forfeited or seat is None:
            continue
        # From when they are (or, with no socket, will be) away: timers are due from
        # then, and a seat seen again in the meantime just moves them later.
        since = hub.absent_from(table.code, seat.id)
        if since is not None:
            away[p.id] = since
            # Gone longer than the rejoin window: they forfeit.
            candidates.append((since + table.rejoin_seconds, "forfeit", p.id))
    if game.phase == SETUP:
        for p in game.players:
            if game.round.setup_left.get(p.id, 0) <= 0 or p.id in game.forfeited:
                continue
            if p.bot:
                candidates.append((updated, "bot_setup", None))
            elif p.id in away:
                when = max(updated, away[p.id]) + table.grace_seconds
                candidates.append((when, "proxy_setup", p.id))
    elif game.phase == PLAY:
        current = game.player(game.round.turn)
        if current.bot:
            candidates.append((updated + settings.bot_delay, "bot", current.id))
        elif current.id in away:
            when = max(updated, away[current.id]) + table.grace_seconds
            candidates.append((when, "proxy", current.id))
    elif game.phase == ROUND_OVER:
        start = table.votes.get("round_over_at") or updated
        candidates.append((start + settings.next_round_seconds, "next_round", None))
    return min(candidates, key=lambda c: c[0]) if candidates else None


def _lobby_automatic(table: Table, now: float) -> tuple[float, str, str | None] | None:
    humans = _human_seats(table)
    present = hub.present(table.code)
    if not any(s.id in present for s in humans):
        since = max((hub.away_since(table.code, s.id, now) or now for s in humans), default=now)
        return since + LOBBY_IDLE_SECONDS, "close_lobby", None
    host = next((s for s in humans if s.id == table.host_seat), None)
    if host is None or host.id not in present:
        since = hub.away_since(table.code, host.id, now) if host else now
        return (since or now) + HOST_HANDOVER_SECONDS, "host_handover", None
    return None


def run_automatic(code: str, *, ignore_delays: bool = False, now: float | None = None) -> bool:
    """Do the next automatic step of a table if it is due. True if something changed.

    `ignore_delays` (tests): bots move at once, timers for people never fire."""
    now = time.time() if now is None else now
    with locked(code), db.atomic():
        table = Table.get_or_none(Table.code == code)
        if table is None:
            return False
        game = load_game(table)
        due = next_automatic(table, game, now)
        if due is None:
            return False
        when, kind, player = due
        if ignore_delays:
            if kind not in ("bot", "bot_setup"):
                return False
        elif when > now:
            return False
        what = "table"
        if kind == "close_lobby":
            table.status = Table.CLOSED
            _touch(table)
        elif kind == "host_handover":
            present = hub.present(code)
            heirs = [s for s in _human_seats(table) if s.id in present]
            if not heirs:
                return False
            table.host_seat = heirs[0].id
            _touch(table)
            what = "lobby"
        else:
            if kind == "bot_setup":
                _bot_setup(game)
            elif kind == "bot":
                rng = random.Random(f"{game.seed}:{table.version}")
                game.apply(player, choose(game.player(player).bot, view(game, player), rng))
            elif kind in ("proxy", "proxy_setup"):
                # An away player's whole turn (or all their first flips) at once.
                rng = random.Random(f"{game.seed}:{table.version}")
                while game.legal_actions(player) and (
                    kind == "proxy_setup" or game.round.turn == player
                ):
                    game.apply(player, choose(PROXY_BOT, view(game, player), rng))
                    if kind == "proxy" and game.round.drawn is None:
                        break
            elif kind == "forfeit":
                game.apply(player, Forfeit())
            elif kind == "next_round":
                game.start_next_round()
                _bot_setup(game)
            _save_game(table, game)
    hub.publish(code, what, snapshot=(table, game))
    return True


def _changed(code: str, table: Table, game: Game | None) -> None:
    """After a committed change: push it and schedule what follows, from the state just
    saved (no second load of the table)."""
    hub.publish(code, "table", snapshot=(table, game))
    after_change(code, table, game)


def after_change(code: str, table: Table | None = None, game: Game | None = None) -> None:
    """Let bots and timers follow a change: at once in tests, else via the scheduler."""
    if settings.inline_bots:
        for _ in range(10_000):
            if not run_automatic(code, ignore_delays=True):
                break
        return
    scheduler.wake(code, table, game)


class Scheduler:
    """One thread that runs bots' moves and timers when they fall due."""

    def __init__(self):
        self._heap: list[tuple[float, str]] = []
        self._due: dict[str, float] = {}  # the one live entry per table
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._app = None

    def start(self, app) -> None:
        self._app = app
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="skymo-scheduler", daemon=True)
            self._thread.start()
        # Resume every table that was in play when the server stopped.
        with db.connection_context():
            codes = [
                t.code
                for t in Table.select(Table.code).where(
                    Table.status.in_([Table.PLAYING, Table.LOBBY])
                )
            ]
        for code in codes:
            self.wake(code)

    def wake(self, code: str, table: Table | None = None, game: Game | None = None) -> None:
        """Look at this table again: schedule its next automatic step (one per table).
        `table` and `game`, when given, are the state just saved."""
        try:
            if table is not None:
                due = next_automatic(table, game)
            else:
                with db.connection_context():
                    table = Table.get_or_none(Table.code == code)
                    due = next_automatic(table, load_game(table)) if table else None
        except Exception:
            log.exception("scheduling table %s failed", code)
            return
        with self._cond:
            if due is None:
                self._due.pop(code, None)
                return
            self._due[code] = due[0]
            heapq.heappush(self._heap, (due[0], code))
            self._cond.notify()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._heap or self._heap[0][0] > time.time():
                    timeout = self._heap[0][0] - time.time() if self._heap else None
                    self._cond.wait(timeout)
                when, code = heapq.heappop(self._heap)
                if self._due.get(code) != when:
                    continue  # superseded by a later wake
                del self._due[code]
            try:
                with self._app.app_context(), db.connection_context():
                    run_automatic(code)
            except Exception:
                log.exception("automatic step at table %s failed", code)
            self.wake(code)


scheduler = Scheduler()


def init_app(app) -> None:
    settings.bot_delay = float(app.config.get("BOT_DELAY", settings.bot_delay))
    settings.next_round_seconds = float(app.config.get("NEXT_ROUND_SECONDS", NEXT_ROUND_SECONDS))
    settings.inline_bots = bool(app.config.get("INLINE_BOTS", False))
    if not settings.inline_bots:
        scheduler.start(app)
        hub.on_presence(_wake_on_presence)


def _wake_on_presence(code: str, seat_id: int, present: bool) -> None:
    """Someone left or came back: their turns, forfeits and the host may change."""
    scheduler.wake(code)


__all__ = ["Stale", "TableError", "models"]

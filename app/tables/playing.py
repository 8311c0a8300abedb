"""Game commands: moves, next-round and play-again votes, leaving, renaming. Each is an
act run by the change step (app.tables.step)."""

from __future__ import annotations

import random
import secrets

from flask_babel import gettext as _

from app import i18n
from app.bots.registry import choose
from app.engine import (
    ROUND_OVER,
    SETUP,
    Action,
    Forfeit,
    Game,
    IllegalMove,
    Player,
    Reveal,
    RuleSet,
    view,
)
from app.features import reliability
from app.storage.models import GameRecord, Seat, Table
from app.storage.table_store import Snapshot, Stale, TableError
from app.tables import clock, service
from app.tables.step import ANY_VERSION, Change, Unchanged, check_version
from app.tables.validation import illegal_message


def _require_seat(seat: Seat | None, message: str | None = None) -> None:
    if seat is None:
        raise TableError(message or _("You are watching this table."), 403)


def new_game(ch: Change, seats: list[Seat], *, seed: str | None = None, deck=None) -> Game:
    """A new game at the table: dealt from the game's seed, or from `deck` (the cards in
    dealing order: a lesson's fixed deal) for its first round."""
    table = ch.table
    table.game_number += 1
    players = [Player(s.player_id, s.name, s.bot) for s in seats]
    game = Game(
        players,
        RuleSet.from_dict(table.rules),
        seed=seed or secrets.token_hex(8),
        game_id=f"{table.code}-{table.game_number}",
        deal=deck is None,
    )
    if deck is not None:
        game.start_next_round(deck=list(deck))
    bot_setup(game)
    if not table.lesson:  # same transaction: the game counts once started
        reliability.started(table, seats)
    ch.set_game(game)
    table.status = Table.PLAYING
    table.votes = {}
    return game


def bot_setup(game: Game) -> None:
    """Bots turn their first cards at once: nobody needs to watch that."""
    if game.phase != SETUP:
        return
    for p in game.players:
        if p.bot and p.id in game.round.setup_left:
            rng = random.Random(f"{game.seed}:{game.round.number}:{p.id}:setup")
            while game.phase == SETUP and game.round.setup_left.get(p.id, 0) > 0:
                game.apply(p.id, choose(p.bot, view(game, p.id), rng))


def play(code: str, seat: Seat | None, action: Action, version) -> Snapshot:
    """Apply a player's move. Raises Stale for an old version, TableError for a move the
    rules refuse (nothing changes then)."""
    if seat is None:  # (the message is translated only when it is said)
        _require_seat(seat, _("You are watching this table: join to play."))

    def act(ch: Change):
        if ch.game is None:
            raise TableError(_("There is no game in progress."), 409)
        try:
            ch.game.apply(seat.player_id, action)
        except IllegalMove as exc:
            raise TableError(illegal_message(exc.reason), 409) from None
        ch.game_changed = True
        clock.played(ch.table, seat.player_id)  # here again: the timeouts start over

    # The status is checked before the version: a move at a finished table says so.
    return service.change(code, _status_first(act, version, action), version=ANY_VERSION)


def _status_first(act, version, action=None):
    def checked(ch: Change):
        if ch.table.status != Table.PLAYING:
            raise TableError(_("There is no game in progress."), 409)
        if not _setup_reveal(ch, action, version):
            check_version(ch.table, version)
        act(ch)

    return checked


def _setup_reveal(ch: Change, action, version) -> bool:
    """At the start of a round everyone turns their first cards at once, and each turn
    changes the table's version. A player's own grid changes only by their own turns
    then, so the reveal they chose on an older page is still what they meant: it counts
    (the rules still refuse a card already face up, or one reveal too many)."""
    if not isinstance(action, Reveal) or ch.game is None or ch.game.phase != SETUP:
        return False
    try:
        return 0 < int(version) <= ch.table.version  # a page this table did show
    except (TypeError, ValueError):
        return False


def _add_vote(ch: Change, key: str, seat: Seat) -> None:
    """Record a player's press of "Next round" or "Play again" (once each)."""
    votes = dict(ch.table.votes)
    pressed = set(votes.get(key, []))
    if seat.id in pressed:
        raise Unchanged  # pressed twice, or by two tabs: counted once
    votes[key] = sorted(pressed | {seat.id})
    ch.table.votes = votes


def vote_next_round(code: str, seat: Seat | None, version=None) -> Snapshot | None:
    """A vote counts whatever version it carries: presses at the same time all count."""
    _require_seat(seat)

    def act(ch: Change):
        game = ch.game
        if game is None or game.phase != ROUND_OVER:
            if version is not None and str(version) != str(ch.table.version):
                raise Stale()  # the round it voted for has begun
            raise TableError(_("The round is not over."), 409)
        _add_vote(ch, "next", seat)
        if everyone_ready(ch.snap):
            game.start_next_round()
            bot_setup(game)
            ch.game_changed = True

    return service.change(code, act)


def everyone_ready(snap: Snapshot) -> bool:
    game = snap.game
    humans = {s.id for s in snap.seats if s.bot is None and s.player_id in game.active()}
    present = service.current().presence.present(snap.code) & humans
    needed = present or humans
    return needed <= set(snap.table.votes.get("next", []))


def forfeit(code: str, seat: Seat | None) -> Snapshot:
    _require_seat(seat)

    def act(ch: Change):
        if ch.game is None or ch.game.is_over:
            raise TableError(_("There is no game in progress."), 409)
        try:
            ch.game.apply(seat.player_id, Forfeit())
        except IllegalMove as exc:
            raise TableError(illegal_message(exc.reason), 409) from None
        ch.game_changed = True

    return service.change(code, act)


def come_back(code: str, seat: Seat | None) -> Snapshot | None:
    """ "I'm back": a player treated as absent for letting the turn clock run out plays
    their own turns again (None if they were not absent)."""
    _require_seat(seat)

    def act(ch: Change):
        if not clock.played(ch.table, seat.player_id):
            raise Unchanged

    return service.change(code, act)


def opt_rematch(code: str, seat: Seat | None, version=None) -> Snapshot | None:
    """ "Play again": counted whatever version it carries (pressing twice is once)."""

    def act(ch: Change):
        if seat is None and ch.table.status == Table.PLAYING:
            # Pressed on the finished game's page after the others began without them.
            raise TableError(_("The new game began without you: you are watching it."), 409)
        _require_seat(seat)
        _require_finished(ch)
        _add_vote(ch, "rematch", seat)

    return service.change(code, act)


def start_rematch(code: str, seat: Seat | None, version) -> Snapshot:
    def act(ch: Change):
        _require_finished(ch)
        _require_seat(seat)
        starter = rematch_starter(ch.table, ch.seats, ch.game)
        if starter is None:
            raise TableError(_("Choose to play again first."), 409)
        if starter.id != seat.id:
            name = i18n.person(starter.name)
            raise TableError(_("Only %(name)s can start the rematch.", name=name), 403)
        seats = rematch_seats(ch.table, ch.seats, ch.game)
        if len(seats) < 2:
            raise TableError(_("At least 2 players must choose to play again."))
        gone = [s.id for s in ch.seats if s not in seats]
        if gone:
            Seat.update(left=True).where(Seat.id.in_(gone)).execute()
            ch.seats_changed = True
        ch.table.host_seat = starter.id  # who took over from a host who left hosts now
        new_game(ch, seats)

    return service.change(code, act, version=version)


def rematch_starter(table: Table, seats, game: Game | None):
    """Who may start the rematch: the host; once the host has left the game (pressed
    "Leave the game" or was out for good, or their seat is gone), the first person in
    seat order who chose "Play again". A host who is only away (a phone asleep, a lost
    signal) stays the host: the rematch waits for them."""
    out = set(game.forfeited) if game is not None else set()
    host = next((s for s in seats if s.id == table.host_seat and s.bot is None), None)
    if host is not None and host.player_id not in out:
        return host
    opted = set((table.votes or {}).get("rematch", []))
    return next(
        (s for s in seats if s.bot is None and s.id in opted and s.player_id not in out), None
    )


def rematch_seats(table: Table, seats, game: Game | None) -> list:
    """The seats of the rematch if it started now, in seat order: the bots, everyone who
    chose "Play again", and the one who starts it (the host never needs to choose)."""
    starter = rematch_starter(table, seats, game)
    opted = set((table.votes or {}).get("rematch", []))
    chosen = opted | ({starter.id} if starter is not None else set())
    return [s for s in seats if s.bot is not None or s.id in chosen]


def _require_finished(ch: Change) -> None:
    if ch.table.status != Table.FINISHED:
        raise TableError(_("The game is not over yet."), 409)


def rename_players(code: str, seat_ids: set[int], name: str) -> None:
    """Show these seats under another name in the table's game and records (a deleted
    account, app.features.accounts). At a finished table they also leave: no rematch for them."""
    players = {f"s{i}" for i in seat_ids}

    def rename(entries: list[dict]) -> bool:
        hits = [p for p in entries if p.get("id") in players and p.get("name") != name]
        for p in hits:
            p["name"] = name
        return bool(hits)

    def act(ch: Change):
        for row in GameRecord.select().where(GameRecord.table == ch.table):
            record = row.record
            if rename(record.get("players", [])):
                GameRecord.update(record=record).where(GameRecord.id == row.id).execute()
        if ch.game is not None:
            # New Player objects: the fork shares its players with the committed game.
            renamed = [
                type(p)(p.id, name, p.bot) if p.id in players and p.name != name else p
                for p in ch.game.players
            ]
            if renamed != ch.game.players:
                ch.game.players = renamed
                ch.game_changed = True
        Seat.update(name=name).where(Seat.id.in_(list(seat_ids))).execute()
        if ch.table.status == Table.FINISHED:
            Seat.update(left=True).where(Seat.id.in_(list(seat_ids))).execute()
        ch.seats_changed = True

    service.change(code, act, missing_ok=True)

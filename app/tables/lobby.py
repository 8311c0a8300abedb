"""Lobby commands: creating a table, sitting down, rules, bots, leaving, starting.
Each is an act run by the change step (app.tables.step)."""

from __future__ import annotations

import secrets

from flask_babel import gettext as _

from app import i18n
from app.bots.registry import BOTS
from app.engine import RuleError, RuleSet
from app.features import reliability
from app.storage import alerts, chat
from app.storage.models import Seat, Table, db
from app.storage.table_store import Snapshot, TableError, seats_of, store
from app.tables import clock, service
from app.tables.playing import new_game
from app.tables.step import ANY_VERSION, Change, Unchanged
from app.tables.validation import (
    clean_name,
    parse_chat,
    parse_min_finished,
    parse_rules,
    parse_timers,
    rule_message,
)

MAX_SEATS = 8
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: codes are read aloud
BOT_NAMES = {
    "random": ["Dice", "Coin", "Lottie", "Rolly"],
    "greedy": ["Gobbler", "Grabby", "Magpie", "Hoarder"],
    "strong": ["Ada", "Turing", "Deep Blue", "Hal"],
    "expert": ["Shannon", "Lovelace", "Knuth", "Kasparov"],
}


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


def new_code() -> str:
    while True:
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(6))
        if not Table.select().where(Table.code == code).exists():
            return code


def create_table(
    host_name: str, public: bool = False, user_id: int | None = None, **settings
) -> tuple[Table, Seat]:
    """A new table in its lobby, its host seated; `settings`: other columns of the table
    than the defaults (a lesson's rules, say)."""
    name = clean_name(host_name)
    with db.atomic():
        fields = {"rules": RuleSet().to_dict(), **settings}
        table = Table.create(code=new_code(), public=bool(public), **fields)
        seat = Seat.create(
            table=table, position=0, name=name, token=secrets.token_urlsafe(24), user=user_id
        )
        table.host_seat = seat.id
        table.save()
    service.current().presence.arrived(table.code, seat.id)
    return table, seat


def _require_host(ch: Change, seat: Seat | None) -> None:
    if seat is None or seat.id != ch.table.host_seat:
        raise TableError(_("Only the host can do that."), 403)


def _require_lobby(ch: Change) -> None:
    if ch.table.status != Table.LOBBY:
        raise TableError(_("The game has already started."), 409)


def _lobby_change(code: str, act, version=ANY_VERSION) -> Snapshot | None:
    def lobby_act(ch: Change):
        ch.what = "lobby"
        act(ch)

    return service.change(code, lobby_act, version=version)


def join(code: str, name: str, user_id: int | None = None, seats: int = MAX_SEATS) -> Seat:
    """Sit down in the lobby; a signed-in user (`user_id`) owns the seat. `seats`: how
    many the table may have at most (Play now fills fewer)."""
    seated: list[Seat] = []

    def act(ch: Change):
        if user_id is not None:
            mine = next((s for s in ch.seats if s.user_id == user_id), None)
            if mine is not None:
                seated.append(mine)  # already seated, from another device
                raise Unchanged
        if ch.table.status != Table.LOBBY:
            raise TableError(_("This game has already started: you can watch it."), 409)
        if len(ch.seats) >= seats:
            raise TableError(_("This table is full."), 409)
        check_finished_share(ch.table, user_id)
        clean = clean_name(name, ch.seats)
        seat = _add_seat(ch, name=clean, user=user_id)
        # Present from now: the join's push shows it (their page's request and socket
        # that follow then change nothing the others see, and push nothing).
        service.current().presence.arrived(ch.table.code, seat.id)
        seated.append(seat)

    _lobby_change(code, act)
    return seated[-1]  # the attempt that committed (app.tables.step.change may retry)


def check_finished_share(table: Table, user_id: int | None) -> None:
    """The host's "only players who finish at least N% of their games": guests cannot
    tell, so they cannot join; nor can an account with no game over yet."""
    least = table.min_finished
    if not least:
        return
    if user_id is None:
        message = _(
            "This table is for players with an account who finish at least %(least)s%% "
            "of their games: sign in to join.",
            least=least,
        )
        raise TableError(message, 403)
    share = reliability.finished_share(user_id)
    if share is None:
        message = _(
            "This table is for players who finish at least %(least)s%% of their games, "
            "and you have no games on record yet.",
            least=least,
        )
        raise TableError(message, 403)
    if share < least:
        message = _(
            "This table is for players who finish at least %(least)s%% of their games; "
            "you finished %(share)s%% of your recent games.",
            least=least,
            share=share,
        )
        raise TableError(message, 403)


def _add_seat(ch: Change, **fields) -> Seat:
    position = max((s.position for s in ch.seats), default=-1) + 1
    seat = Seat.create(table=ch.table, position=position, token=secrets.token_urlsafe(24), **fields)
    ch.seats_changed = True
    ch.snap.seats = [*ch.seats, seat]  # seen by what the act does next (more bots)
    return seat


def update_rules(code: str, seat: Seat | None, form) -> Snapshot:
    def act(ch: Change):
        _require_host(ch, seat)
        _require_lobby(ch)
        try:
            rules = parse_rules(form)
        except RuleError as exc:
            raise TableError(rule_message(exc), field=exc.field) from None
        table = ch.table
        table.grace_seconds, table.rejoin_seconds = parse_timers(
            form, table.grace_seconds, table.rejoin_seconds
        )
        table.rules = rules.to_dict()
        table.public = str(form.get("public", "")).lower() in ("on", "1", "true")
        table.chat = parse_chat(form, chat.chat_open(table))
        table.turn_clock = clock.parse(form, table.turn_clock)
        table.min_finished = parse_min_finished(form, table.min_finished)

    return _lobby_change(code, act)


def add_bot(code: str, seat: Seat | None, kind: str) -> Snapshot:
    if kind not in BOTS:
        raise TableError(_("Choose a bot: random, greedy, strong or expert."), field="bot")

    def act(ch: Change):
        _require_host(ch, seat)
        _require_lobby(ch)
        if len(ch.seats) >= MAX_SEATS:
            raise TableError(_("This table is full."), 409)
        add_bot_seat(ch, kind)

    return _lobby_change(code, act)


def add_bot_seat(ch: Change, kind: str) -> Seat:
    """A bot of this kind sits down, under a name nobody at the table has."""
    taken = {s.name.casefold() for s in ch.seats}
    base = [n for n in BOT_NAMES[kind] if n.casefold() not in taken]
    name = base[0] if base else f"Bot {len(ch.seats) + 1}"
    n = 2
    while name.casefold() in taken:
        name, n = f"{BOT_NAMES[kind][0]} {n}", n + 1
    return _add_seat(ch, name=name, bot=kind)


def remove_seat(code: str, seat: Seat | None, target_id) -> Snapshot:
    """The host removes a seat, or anyone leaves the lobby (target is their own seat)."""

    def act(ch: Change):
        _require_lobby(ch)
        try:
            target = ch.snap.seat(int(target_id))
        except (TypeError, ValueError, OverflowError):
            target = None
        if target is None:
            raise TableError(_("That seat is already empty."), 404)
        table = ch.table
        if seat is None or (seat.id != table.host_seat and seat.id != target.id):
            raise TableError(_("Only the host can do that."), 403)
        Seat.update(left=True).where(Seat.id == target.id).execute()
        alerts.forget_seats([target.id])
        ch.seats_changed = True
        if target.id == table.host_seat:
            # The host left: the next person in lobby order hosts.
            people = [s for s in ch.seats if s.bot is None and s.id != target.id]
            table.host_seat = people[0].id if people else None
            if table.host_seat is None:
                table.status = Table.CLOSED
                chat.forget_table(table.code)
                alerts.forget_table(table.code)

    return _lobby_change(code, act)


def start(code: str, seat: Seat | None, version) -> Snapshot:
    def act(ch: Change):
        _require_host(ch, seat)
        _require_lobby(ch)
        if len(ch.seats) < 2:
            raise TableError(_("At least 2 players are needed: invite a friend or add a bot."))
        new_game(ch, ch.seats)

    return service.change(code, act, version=version)


def get_table(code: str) -> Table:
    """The open table with this code (TableError 404 otherwise)."""
    table = store.row(code)
    if table is None or table.status == Table.CLOSED:
        raise TableError(_("There is no table with that code."), 404)
    return table

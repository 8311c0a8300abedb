"""What a table does by itself: bots' moves, turns of away players, forfeits, the next
round, lobby upkeep. `next_automatic` says what is due when; `run_automatic` does it
through the change step, like any command."""

from __future__ import annotations

import random
import time

from app.bots.registry import choose
from app.engine import PLAY, ROUND_OVER, SETUP, Forfeit, view
from app.storage import alerts, chat
from app.storage.models import Table
from app.storage.table_store import Snapshot
from app.tables import clock, quickplay, service
from app.tables.playing import bot_setup
from app.tables.ports import Presence
from app.tables.service import Timing
from app.tables.step import Change, Unchanged

PROXY_BOT = "random"  # docs/rules.md: an away player's turns are played by the simplest bot
HOST_HANDOVER_SECONDS = 10  # a host who reloads the page keeps the table
LOBBY_IDLE_SECONDS = 30 * 60  # a lobby with nobody present closes after this


Due = tuple[float, str, "str | None"]


def next_automatic(
    snap: Snapshot, presence: Presence, timing: Timing, now: float | None = None
) -> Due | None:
    """(due time, kind, player) of the next thing the server does by itself, if any:
    away players' timers from `presence`, bots' and rounds' delays from `timing`."""
    table, game = snap.table, snap.game
    now = time.time() if now is None else now
    updated = table.updated_at.timestamp() if table.updated_at else now
    if table.status == Table.LOBBY:
        return _lobby_automatic(snap, presence, now)
    if table.status != Table.PLAYING or game is None:
        return None
    candidates: list[Due] = []
    seats = {s.player_id: s for s in snap.seats}
    away: dict[str, float] = {}
    for p in game.players:
        seat = seats.get(p.id)
        if p.bot or p.id in game.forfeited or seat is None:
            continue
        # From when they are (or, with no socket, will be) away: timers are due from
        # then, and a seat seen again in the meantime just moves them later.
        since = presence.absent_from(table.code, seat.id)
        idle = clock.absent_since(table, p.id)  # let the turn clock run out too often
        if idle is not None:
            since = idle if since is None else min(since, idle)
        if since is not None:
            away[p.id] = since
            candidates.append((since + table.rejoin_seconds, "forfeit", p.id))
    due = clock.deadline(table, updated)
    if game.phase == SETUP:
        for p in game.players:
            if game.round.setup_left.get(p.id, 0) <= 0 or p.id in game.forfeited:
                continue
            if p.bot:
                candidates.append((updated, "bot_setup", None))
            elif p.id in away:
                when = max(updated, away[p.id]) + table.grace_seconds
                candidates.append((when, "proxy_setup", p.id))
            elif due is not None:
                candidates.append((due, "clock_setup", p.id))
    elif game.phase == PLAY:
        current = game.player(game.round.turn)
        if current.bot:
            candidates.append((updated + timing.bot_delay, "bot", current.id))
        elif current.id in away:
            when = max(updated, away[current.id]) + table.grace_seconds
            candidates.append((when, "proxy", current.id))
        elif due is not None:
            candidates.append((due, "clock", current.id))
    elif game.phase == ROUND_OVER:
        start = table.votes.get("round_over_at") or updated
        candidates.append((start + timing.next_round_seconds, "next_round", None))
    return min(candidates, key=lambda c: c[0]) if candidates else None


def _lobby_automatic(snap: Snapshot, presence: Presence, now: float) -> Due | None:
    humans = [s for s in snap.seats if s.bot is None]
    present = presence.present(snap.code)
    if not any(s.id in present for s in humans):
        since = max((presence.away_since(snap.code, s.id, now) or now for s in humans), default=now)
        return since + LOBBY_IDLE_SECONDS, "close_lobby", None
    start_at = quickplay.starts_at(snap.table)  # a Play now table starts by itself
    start = [(start_at, "auto_start", None)] if start_at is not None else []
    host = next((s for s in humans if s.id == snap.table.host_seat), None)
    if host is None or host.id not in present:
        since = presence.away_since(snap.code, host.id, now) if host else now
        handover = ((since or now) + HOST_HANDOVER_SECONDS, "host_handover", None)
        return min([handover, *start], key=lambda c: c[0])
    return start[0] if start else None


def run_automatic(code: str, *, ignore_delays: bool = False, now: float | None = None) -> bool:
    """Do the next automatic step of a table if it is due. True if something changed.

    `ignore_delays` (tests): bots move at once, timers for people never fire."""
    now = time.time() if now is None else now

    tables = service.current()

    def act(ch: Change):
        due = next_automatic(ch.snap, tables.presence, tables.timing, now)
        if due is None:
            raise Unchanged
        when, kind, player = due
        if (kind not in ("bot", "bot_setup")) if ignore_delays else when > now:
            raise Unchanged
        _do(ch, kind, player, now)

    return tables.change(code, act, missing_ok=True) is not None


def _do(ch: Change, kind: str, player: str | None, now: float) -> None:
    table, game = ch.table, ch.game
    if kind == "close_lobby":
        table.status = Table.CLOSED
        chat.forget_table(table.code)
        alerts.forget_table(table.code)
        return
    if kind == "host_handover":
        present = service.current().presence.present(table.code)
        heirs = [s for s in ch.seats if s.bot is None and s.id in present]
        if not heirs:
            raise Unchanged
        table.host_seat = heirs[0].id
        ch.what = "lobby"
        return
    if kind == "auto_start":
        quickplay.fill_and_start(ch)
        return
    if kind == "bot_setup":
        bot_setup(game)
    elif kind == "bot":
        rng = random.Random(f"{game.seed}:{table.version}")
        game.apply(player, choose(game.player(player).bot, view(game, player), rng))
    elif kind in ("proxy", "proxy_setup", "clock", "clock_setup"):
        # An away player's whole turn (or all their first flips) at once; the same for
        # a player whose turn clock ran out, which counts against them.
        setup = kind.endswith("_setup")
        rng = random.Random(f"{game.seed}:{table.version}")
        while game.legal_actions(player) and (
            # The first flips only: the turn that may follow them is timed on its own.
            game.phase == SETUP and game.round.setup_left.get(player, 0) > 0
            if setup
            else game.round.turn == player
        ):
            game.apply(player, choose(PROXY_BOT, view(game, player), rng))
            if not setup and game.round.drawn is None:
                break
        if kind.startswith("clock"):
            clock.timed_out(table, player, now)
    elif kind == "forfeit":
        game.apply(player, Forfeit())
    elif kind == "next_round":
        game.start_next_round()
        bot_setup(game)
    ch.game_changed = True

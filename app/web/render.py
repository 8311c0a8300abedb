"""Rendering the table: for a request (the page, htmx answers) and for pushes.

What the table shows is decided by app.web.presenter (pure). A push renders one
committed snapshot for every socket of the table under one app context: what everyone
sees alike is built once, then each socket gets its own board in its own language."""

from __future__ import annotations

import copy
import hashlib
import math
import time
from functools import lru_cache
from urllib.parse import urlsplit

import segno
from flask import current_app, has_request_context, request, url_for

from app import i18n, tables
from app.bots.registry import BOTS
from app.features import marks
from app.i18n import gettext as _
from app.live.hub import Connection
from app.storage.models import Seat, Table, db
from app.tables import Snapshot
from app.web import services
from app.web.board import (
    opponent_box,
    page_board_section,
    path_for,
    shared_pieces,
    table_html,
)
from app.web.extras import away_countdown
from app.web.presenter import Shared, board, other_modes
from app.web.reactions import slots_html
from app.web.security import csrf_token

__all__ = ["render_push", "table_context"]

BOT_KINDS = list(BOTS)  # the lobby offers every bot the engine has


def table_context(
    snap: Snapshot,
    me: Seat | None,
    *,
    mode: str | None = None,
    error: str | None = None,
    field: str | None = None,
    form=None,
    shared: Shared | None = None,
    invite_url: str | None = None,
    urls: dict | None = None,
) -> dict:
    """Everything the table templates show to `me`, from a committed snapshot. A push
    passes the `shared` part and the URLs it built once for all its sockets."""
    table = snap.table
    if shared is None:
        shared = shared_part(snap, services.presence().present(table.code))
    if invite_url is None or urls is None:
        # As this request's page has them (kept per table and address, as for pushes).
        page = request.root_url if has_request_context() else ""
        invite_url, urls = push_urls(current_app, table.code, page)
    ctx = {
        "table": table,
        "code": table.code,
        "version": table.version,
        "status": table.status,
        "me": me,
        "is_host": me is not None and me.id == table.host_seat,
        "seats": shared.seat_list(me) if table.status == Table.LOBBY else [],  # the lobby's
        "rules": shared.rules,
        "error": error,
        "error_field": field,
        "form": form,
        "invite_url": invite_url,
        "urls": urls,
        "away": shared.away,
        "memo": shared.memo,  # what viewers of this push share (app.web.board)
        "board": None,
        "max_seats": tables.MAX_SEATS,
        "bot_kinds": BOT_KINDS,
        # For the results' links and text: as a request shows them (a push has none).
        "url_for": path_for,
    }
    if table.status == Table.LOBBY:
        ctx["qr"] = LazyQR(invite_url)
        start_at = tables.starts_at(table)  # a Play now table's start by itself
        ctx["starts_in"] = None if start_at is None else max(0, math.ceil(start_at - time.time()))
        if start_at is not None:  # a Play now table seats fewer (bots in the rest)
            ctx["max_seats"] = tables.PLAY_NOW_SEATS
        ctx["bot_kind_names"] = i18n.bot_kind_names()
    if snap.game is not None:
        b = ctx["board"] = board(shared, me, mode)
        # The turn's other modes, rendered ahead (app.web.board.variant).
        ctx["variants"] = {m: board(shared, me, m) for m in other_modes(b)}
        if b["phase"] == "round_over":
            ctx["next_round_left"] = next_round_left(table)
        ctx["boxes"] = boxes(shared)
    ctx["pieces"] = shared_pieces(ctx)
    return ctx


def next_round_left(table: Table, now: float | None = None) -> int:
    """Whole seconds until the next round starts by itself (as app.tables.automation
    times it: from the round's end)."""
    now = time.time() if now is None else now
    start = table.votes.get("round_over_at") or table.updated_at.timestamp()
    return max(0, math.ceil(start + tables.current().timing.next_round_seconds - now))


def table_urls(code: str) -> dict:
    """The table's URLs its forms and links use (built once per push). Paths: outside a
    request (a timer's push) url_for would make them absolute, with this process's own
    host, which a reverse proxy's visitors cannot reach."""
    names = ("show", "move", "leave", "back")
    return {name: url_for(f"table.{name}", code=code, _external=False) for name in names} | {
        "react": url_for("table.react", code=code, _external=False),
        "home": url_for("lobby.home", _external=False),
    }


def url_adapter(app, base_url: str):
    """The URL builder of a page at `base_url` (kept per app and address: it only reads)."""
    known = app.extensions.setdefault("skymo.url_adapters", {})
    found = known.get(base_url)
    if found is None:
        if len(known) >= 256:
            known.clear()
        base = urlsplit(base_url)
        found = known[base_url] = app.url_map.bind(
            base.netloc, script_name=base.path or "/", url_scheme=base.scheme
        )
    return found


def push_urls(app, code: str, base_url: str) -> tuple[str, dict]:
    """The invite link and the table's URLs as the sockets' page had them: built once per
    table and page address (url_for is a good part of a push's cost otherwise)."""
    known = app.extensions.setdefault("skymo.push_urls", {})
    found = known.get((code, base_url))
    if found is None:
        if len(known) >= 4096:
            known.clear()
        invite = url_for("table.show", code=code, _external=True)
        found = known[code, base_url] = (invite, table_urls(code))
    return found


def shared_part(snap: Snapshot, present: set[int]) -> Shared:
    """What everyone at the table sees alike. Kept per table and language for the
    snapshot's version: the `?mode=` links and stale answers that follow a push show the
    same. A push or a page gets a copy with its own `memo`, which holds what it renders
    once for all its viewers (app.web.board); the kept one holds no HTML (a Markup is
    an object the garbage collector walks, a version's are young). The next version's
    is built from it (the grids and log lines that did not change)."""
    away = away_countdown(snap.table)  # the same for every viewer
    if snap.game is None:
        return _with_memo(_shared(snap, present, away), {})
    slots = slots_html(snap.code, [p.id for p in snap.game.players])
    t = i18n.catalog()
    # Everything the shared part is made of: the version (with the game's id) names
    # the table, its seats and game; the rest changes between versions (presence, the
    # away countdown's seconds, a reaction being shown).
    shown = tuple(map(str, slots.values()))
    key = (snap.version, snap.game.id, tuple(sorted(present)), away, shown)
    found = _SHARED.get((snap.code, id(t)))
    if found is not None and found[0] is t and found[1] == key:
        return _with_memo(found[2], slots)
    previous = found[2] if found is not None and found[0] is t else None
    shared = _shared(snap, present, away, previous)
    _keep(snap, (t, key, shared))
    return _with_memo(shared, slots)


def _with_memo(shared: Shared, slots: dict) -> Shared:
    shared = copy.copy(shared)
    shared.memo = {"slots": slots}  # the viewer's own box shows theirs
    return shared


# (code, catalog id) -> (catalog, key, Shared, kept at). The catalog is kept alive with
# it, so its id is not reused. A Shared holds its snapshot's game: an entry goes when
# its table closes or has not changed for as long as the store keeps its game.
_SHARED: dict[tuple[str, int], tuple] = {}
_swept = [0.0]


def _keep(snap: Snapshot, entry: tuple) -> None:
    now = time.monotonic()
    if now - _swept[0] > 60 or len(_SHARED) >= 4096:
        _swept[0] = now
        idle = tables.store.IDLE_SECONDS
        for k in [k for k, e in _SHARED.items() if now - e[3] > idle or len(_SHARED) >= 4096]:
            del _SHARED[k]
    if snap.table.status == Table.CLOSED:
        for k in [k for k in _SHARED if k[0] == snap.code]:
            del _SHARED[k]
        return
    _SHARED[snap.code, id(entry[0])] = (*entry, now)


def _shared(snap: Snapshot, present: set[int], away, previous=None) -> Shared:
    shared = Shared(snap, present, previous, seat_marks(snap.seats))
    shared.away = away
    return shared


def seat_marks(seats) -> dict[int, tuple[str, str]]:
    """The marks beside account holders' names (app.features.marks), by seat id: a
    short text ("1034 · 95%") and what it says in words."""
    owners = {s.id: s.user_id for s in seats if s.user_id is not None and s.bot is None}
    if not owners:
        return {}
    found = marks.marks(owners.values())
    out = {}
    for seat_id, user_id in owners.items():
        m = found[user_id]
        shown = _("%(rating)s?", rating=m.rating) if m.provisional else str(m.rating)
        words = (
            _("rating %(rating)s, provisional", rating=m.rating)
            if m.provisional
            else _("rating %(rating)s", rating=m.rating)
        )
        if m.finished is not None:
            shown = _("%(rating)s · %(finished)s%%", rating=shown, finished=m.finished)
            words = _(
                "%(rating)s; finishes %(finished)s%% of their games",
                rating=words,
                finished=m.finished,
            )
        out[seat_id] = (shown, words)
    return out


def boxes(shared: Shared) -> dict:
    """Each other player's box, once per push or page (app.web.board keeps each box
    while it does not change)."""
    memo = shared.memo
    found = memo.get("boxes")
    if found is None:
        game = shared.game
        show_totals = shared.rules.show_running_score or game.is_over
        slots = memo["slots"]
        found = memo["boxes"] = {
            pid: opponent_box(o, shared.cells[pid], slots[pid], show_totals, game.phase)
            for pid, o in shared.opponent.items()
        }
    return found


# A code is about 1.5 KB: one per table a process shows (its lobby, its score sheet).
@lru_cache(maxsize=4096)
def qr_svg(url: str) -> str:
    return segno.make(url, error="m").svg_inline(border=2, dark="#1b2a3a", omitsize=True)


class LazyQR:
    """The invite's QR code, drawn only where a template shows it: a lobby's pushes
    (seats, rules, buttons) do not, and drawing one costs about a millisecond."""

    __slots__ = ("url",)

    def __init__(self, url: str):
        self.url = url

    def __html__(self) -> str:
        return qr_svg(self.url)

    __str__ = __html__


def render_push(
    code: str, conns: list[Connection], what: str, snapshot: Snapshot | None = None
) -> tuple[int, list[tuple[Connection, str]]]:
    """The hub's renderer: each connection's own partials as out-of-band swaps, from
    the `snapshot` a change just committed (or the table as stored now)."""
    if not conns:
        return -1, []
    app = current_app._get_current_object()
    context = app.app_context()
    # URLs (the invite link is absolute) as the sockets' page had them, without
    # building a request.
    context.url_adapter = url_adapter(app, conns[0].base_url)
    with context:
        snap = snapshot if snapshot is not None else _current(code)
        if snap is None:
            return -1, []
        table = snap.table
        lobby = table.status == Table.LOBBY
        template = None
        if lobby:  # with the context processors' values (the table itself: app.web.board)
            name = "partials/_lobby_push.html" if what == "lobby" else "partials/_table.html"
            template = app.jinja_env.get_template(name)
        present = services.presence().present(code)
        invite, urls = push_urls(app, table.code, conns[0].base_url)
        # Inside the mover's request: kept for their answer (pushed_answer).
        pushed = request.environ.setdefault(PUSHED, {}) if has_request_context() else None
        # The page whose own htmx request made this change gets the table as its answer.
        answered = answered_page() if what == "table" and not lobby else None
        out = []
        by_locale: dict[str, list[Connection]] = {}
        for conn in conns:
            by_locale.setdefault(conn.locale, []).append(conn)
        seats = {s.id: s for s in snap.seats}  # each socket's seat, looked up once
        # Each player reads their own language (two at one table may differ).
        for locale, group in by_locale.items():
            with i18n.speaking(locale):
                shared = shared_part(snap, present)  # once per language
                base: dict = {"oob": True}
                if lobby:
                    app.update_template_context(base)  # the context processors' values
                    base["url_for"] = path_for  # links as a request renders them
                for conn in group:
                    if pushed is None and answered is not None and answers(conn, answered):
                        # Another process answers that page: its HTML is not needed here.
                        conn.answered(table.version)
                        continue
                    me = seats.get(conn.seat_id) if conn.seat_id else None
                    ctx = table_context(snap, me, shared=shared, invite_url=invite, urls=urls)
                    ctx.update(base)
                    ctx["csrf"] = conn.csrf
                    ctx["join_name"] = conn.name
                    html = template.render(ctx) if lobby else table_html(ctx)
                    if pushed is not None and not lobby:
                        pushed[(table.version, conn.seat_id, conn.csrf, locale)] = html
                    if answered is not None and answers(conn, answered):
                        conn.answered(table.version)  # its answer is this HTML: no push
                        continue
                    out.append((conn, html))
        return table.version, out


PAGE_HEADER = "X-Skymo-Page"  # a table page's id, sent with its htmx requests


ANSWERED = "skymo.answered"  # (page id, token digest) of the page answered: see answered_page
# The request's pushed HTML by (version, seat, token, language), for its answer
# (pushed_answer); None where no answer is made (another process's change).
PUSHED = "skymo.pushed"


def answered_page() -> tuple[str, str] | None:
    """(page id, digest of its CSRF token) of the page whose htmx request is being
    answered, if it sent its id: that page's own socket needs no push of the table it
    gets back. In another process, pushing a change it heard of, the mover's page as
    the change's message named it (app.cluster.fanout): its socket may be held there."""
    if not has_request_context():
        return None
    environ = request.environ
    found = environ.get(ANSWERED, _UNKNOWN)
    if found is _UNKNOWN:  # asked twice per move with Redis: the push and the message
        headers = request.headers
        page = headers.get(PAGE_HEADER) if headers.get("HX-Request") else None
        found = environ[ANSWERED] = (page, token_digest(csrf_token())) if page else None
    return found


_UNKNOWN = object()


def answers(conn: Connection, answered: tuple[str, str]) -> bool:
    """Whether `conn` is the socket of the answered page (same page id and session)."""
    return conn.page == answered[0] and token_digest(conn.csrf) == answered[1]


def token_digest(token: str) -> str:
    """What another process is told of a CSRF token: enough to match a socket's, never
    the token itself."""
    return hashlib.sha256(token.encode()).hexdigest()[:32]


def pushed_answer(snap: Snapshot, seat: Seat | None, csrf: str, locale: str) -> str | None:
    """The mover's answer, when this request's push already rendered the same snapshot
    for the same person (their own socket): the same HTML, swapped in place."""
    if not has_request_context() or snap.table.status == Table.LOBBY:
        return None
    pushed = request.environ.get(PUSHED) or {}
    html = pushed.get((snap.version, seat.id if seat else None, csrf, locale))
    return html.replace(' hx-swap-oob="true"', "", 1) if html else None


def from_remote(answered) -> None:
    """In the request context of a push of another process's change (app.cluster.fanout):
    no answer is made here, and `answered` is the mover's page, as its message named it."""
    request.environ[PUSHED] = None
    if answered:
        request.environ[ANSWERED] = tuple(answered)


def init_app(app) -> None:
    app.jinja_env.globals.update(board_section=page_board_section)


def _current(code: str) -> Snapshot | None:
    if db.is_closed():
        with db.connection_context():
            return tables.store.current(code)
    return tables.store.current(code)

"""Stats, history, the leaderboard and a finished game's results page (app.features.stats)."""

from __future__ import annotations

from flask import Blueprint, abort, render_template, request
from flask_babel import format_date
from flask_babel import gettext as _

from app import tables
from app.engine import replay
from app.engine.record import RecordError
from app.features import rating, reliability, stats
from app.features.accounts import by_username
from app.storage.models import Table, User
from app.web import charts
from app.web.auth import login_manager, signed_in
from app.web.security import csrf_token

bp = Blueprint("stats", __name__)
PER_PAGE = 20


def page_number() -> int:
    try:
        return min(max(1, int(request.args.get("page", "1"))), 1_000_000)
    except ValueError:
        return 1


def render(template: str, **ctx):
    return render_template(template, csrf=csrf_token(), **ctx)


def stats_context(user) -> dict:
    s = stats.user_stats(user)
    first = len(s.recent) and s.games - len(s.recent) + 1
    points = [
        {
            "value": r.total,
            "label": _("Game %(number)s", number=first + i),
            "mark": stats.is_win(r),
            "note": _(
                "%(date)s, rank %(rank)s of %(players)s",
                date=format_date(r.finished_at, "medium"),
                rank=r.rank,
                players=r.players,
            ),
        }
        for i, r in enumerate(s.recent)
    ]
    bins = stats.histogram(s.round_scores)
    return {
        **rating_context(user),
        "finished_share": reliability.finished_share(user),
        "recent_games": reliability.RECENT,
        "provisional_games": rating.PROVISIONAL_GAMES,
        "owner": user,
        "s": s,
        "line": charts.line_chart(points) if points else None,
        # Under the bars, the low end of each range: "10–14" is too wide on a phone.
        "bars": charts.bar_chart(bins, [label.split("–")[0] for label, _ in bins])
        if s.round_scores
        else None,
        "bins": bins,
    }


RATING_POINTS = 30  # games in the rating chart


def rating_context(user) -> dict:
    """The account's rating now and a line of it over its last rated games."""
    steps = rating.history(user)
    if not steps:
        return {"skill": None, "rating_line": None, "rating_steps": []}
    first = max(0, len(steps) - RATING_POINTS)
    points = [
        {
            "value": rating.shown(r.mu, r.sigma),
            "label": _("Game %(number)s", number=r.games),
            "mark": False,
        }
        for r in steps[first:]
    ]
    if first == 0:  # where every account starts
        points.insert(0, {"value": rating.DEFAULT.shown, "label": _("Start"), "mark": False})
    last = steps[-1]
    return {
        "skill": rating.Skill(last.mu, last.sigma, last.games),
        "rating_line": charts.line_chart(points, from_zero=False),
        "rating_steps": points,
    }


@bp.get("/me/stats")
def mine():
    user = signed_in()
    if user is None:
        return login_manager.unauthorized()
    return render("pages/stats.html", mine=True, **stats_context(user))


@bp.get("/u/<username>")
def player(username: str):
    user = by_username(username)
    if user is None:
        abort(404)
    me = signed_in()
    mine = me is not None and me.id == user.id
    return render("pages/stats.html", mine=mine, **stats_context(user))


@bp.get("/me/history")
def history():
    user = signed_in()
    if user is None:
        return login_manager.unauthorized()
    page = page_number()
    entries, page, pages = stats.history(user, page, PER_PAGE)
    return render("pages/history.html", entries=entries, page=page, pages=pages)


@bp.get("/leaderboard")
def leaderboard():
    by = request.args.get("by", "rating")
    if by not in stats.BOARDS:
        by = "rating"
    rows = stats.leaderboard(by)
    me = signed_in()
    pages = max(1, -(-len(rows) // PER_PAGE))
    page = min(page_number(), pages)
    mine = next((i for i, r in enumerate(rows) if me is not None and r.user_id == me.id), None)
    return render(
        "pages/leaderboard.html",
        by=by,
        boards=stats.BOARDS,
        rows=rows[(page - 1) * PER_PAGE : page * PER_PAGE],
        page=page,
        pages=pages,
        me_id=me.id if me else None,
        my_row=rows[mine] if mine is not None else None,
        my_page=mine // PER_PAGE + 1 if mine is not None else None,
        min_games=stats.WIN_RATE_MIN_GAMES,
        provisional_games=rating.PROVISIONAL_GAMES,
    )


@bp.get("/t/<code>/games/<int(max=1000000):number>")  # max: SQLite's ints
def game(code: str, number: int):
    code = code.upper()
    record = tables.game_record(code, number)
    if record is None:
        abort(404)
    rows = [
        {
            "rank": r.rank,
            "name": r.name,
            "bot": r.bot,
            "total": r.total,
            "forfeited": r.forfeited,
            "rounds": r.round_scores,
            "user_id": r.user_id,
        }
        for r in stats.game_results(code, number)
    ]
    ids = [r["user_id"] for r in rows if r["user_id"] is not None]
    usernames = {u.id: u.username for u in User.select().where(User.id.in_(ids))} if ids else {}
    for r in rows:
        r["username"] = usernames.get(r["user_id"])
    if not rows:  # a game finished before results were kept: read its record
        try:
            played = replay(record.record)
        except RecordError:
            played = None
        if played is not None:
            numbers = stats.game_numbers(played)
            rows = [
                {
                    "rank": n["rank"],
                    "name": played.name(pid),
                    "bot": played.player(pid).bot,
                    "total": n["total"],
                    "forfeited": n["forfeited"],
                    "rounds": n["round_scores"],
                    "user_id": None,
                    "username": None,
                }
                for pid, n in sorted(numbers.items(), key=lambda kv: kv[1]["rank"])
            ]
    me = signed_in()
    table = Table.get_or_none(Table.code == code)
    return render(
        "pages/game.html",
        code=code,
        number=number,
        rows=rows,
        rounds=max((len(r["rounds"]) for r in rows), default=0),
        finished_at=record.finished_at,
        me_id=me.id if me else None,
        table_open=table is not None and table.status != Table.CLOSED,
    )

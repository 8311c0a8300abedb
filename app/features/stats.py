"""Results, personal stats, history and the leaderboard.

`record_results` runs inside the transaction that ends a game (app.tables.step.settle),
so a finished game has its results exactly when it has its record. Everything else
here only reads: the numbers of a player are sums over their Result rows."""

from __future__ import annotations

from dataclasses import dataclass, field

import peewee as pw
from flask_babel import lazy_gettext as _l

from app.engine import Game
from app.features import marks, rating, reliability
from app.storage.models import Result, Seat, Table, User, utcnow

RECENT_GAMES = 20  # games in the chart of final totals
WIN_RATE_MIN_GAMES = 10  # to be ranked by win rate
# Round-score histogram: (label, lowest, highest) with None for an open end.
SCORE_BINS = [
    ("< 0", None, -1),
    ("0–4", 0, 4),
    ("5–9", 5, 9),
    ("10–14", 10, 14),
    ("15–19", 15, 19),
    ("20–24", 20, 24),
    ("25–29", 25, 29),
    ("30–39", 30, 39),
    ("40+", 40, None),
]


# ----- recording -----------------------------------------------------------------------
def game_numbers(game: Game) -> dict[str, dict]:
    """Each player's numbers in a game (pure: no database)."""
    ranking = {r["player"]: r for r in game.ranking()}
    numbers = {
        p.id: {
            "rank": ranking[p.id]["rank"],
            "total": ranking[p.id]["total"],
            "forfeited": p.id in game.forfeited,
            "rounds_played": 0,
            "rounds_ended": 0,
            "rounds_penalised": 0,
            "columns_cleared": 0,
            "rows_cleared": 0,
            "score_sum": 0,
            "round_scores": [],
        }
        for p in game.players
    }
    for rnd in game.rounds:
        for event in rnd.log:
            if event.get("type") == "clear" and event.get("player") in numbers:
                key = "rows_cleared" if event.get("line") == "row" else "columns_cleared"
                numbers[event["player"]][key] += 1
        result = rnd.result
        if not result:
            continue  # a round cut short by forfeits is not scored
        for pid, score in result["scores"].items():
            mine = numbers[pid]
            mine["rounds_played"] += 1
            mine["score_sum"] += score
            mine["round_scores"].append(score)
        ender = result["ender"]
        if ender in result["scores"]:
            numbers[ender]["rounds_ended"] += 1
            if result["scores"][ender] != result["raw"][ender]:
                numbers[ender]["rounds_penalised"] += 1
    return numbers


def seat_id_of(player_id: str) -> int | None:
    """Table players are named after their seat: "s<seat id>"."""
    if player_id.startswith("s") and player_id[1:].isdigit():
        return int(player_id[1:])
    return None


def record_results(table: Table, game: Game) -> None:
    """One Result per player of a finished game, in the caller's transaction, and the
    accounts' new ratings and outcomes from them. A second call for the same game
    changes nothing."""
    numbers = game_numbers(game)
    seat_ids = {pid: seat_id_of(pid) for pid in numbers}
    seats = {s.id: s for s in Seat.select().where(Seat.id.in_(list(seat_ids.values())))}
    rating.lock(s.user_id for s in seats.values() if s.user_id is not None)
    now = utcnow()
    rows = []
    for player in game.players:
        seat = seats.get(seat_ids[player.id])
        if seat is None:
            continue
        rows.append(
            {
                "table": table.code,
                "number": table.game_number,
                "seat": seat.id,
                "user": seat.user_id,
                "name": player.name,
                "bot": player.bot,
                "players": len(game.players),
                "finished_at": now,
                "rated": seat.user_id is not None,
                **numbers[player.id],
            }
        )
    if not rows:
        return
    mine = (Result.table == table.code) & (Result.number == table.game_number)
    if Result.select().where(mine).exists():
        return  # recorded before: rated before too
    Result.insert_many(rows).execute()
    rating.record(list(Result.select().where(mine).order_by(Result.id)))
    outcomes = {r["user"]: r["forfeited"] for r in rows if r["user"] is not None}
    reliability.settled(table.code, table.game_number, outcomes)
    marks.forget(outcomes)  # the game's end shows its players' new marks


# ----- a player's numbers --------------------------------------------------------------
@dataclass
class Stats:
    games: int = 0
    wins: int = 0
    forfeits: int = 0
    rounds: int = 0
    score_sum: int = 0
    rounds_ended: int = 0
    rounds_penalised: int = 0
    columns_cleared: int = 0
    rows_cleared: int = 0
    best: Result | None = None  # lowest final total of a game played to the end
    worst: Result | None = None
    recent: list[Result] = field(default_factory=list)  # oldest first
    round_scores: list[int] = field(default_factory=list)

    @property
    def win_rate(self) -> float | None:
        return self.wins / self.games if self.games else None

    @property
    def avg_round(self) -> float | None:
        return self.score_sum / self.rounds if self.rounds else None

    @property
    def penalised_rate(self) -> float | None:
        return self.rounds_penalised / self.rounds_ended if self.rounds_ended else None


def is_win(result: Result) -> bool:
    return result.rank == 1 and not result.forfeited


def user_stats(user: User) -> Stats:
    results = list(
        Result.select().where(Result.user == user).order_by(Result.finished_at, Result.id)
    )
    stats = Stats()
    for r in results:
        stats.games += 1
        stats.wins += is_win(r)
        stats.forfeits += r.forfeited
        stats.rounds += r.rounds_played
        stats.score_sum += r.score_sum
        stats.rounds_ended += r.rounds_ended
        stats.rounds_penalised += r.rounds_penalised
        stats.columns_cleared += r.columns_cleared
        stats.rows_cleared += r.rows_cleared
        stats.round_scores.extend(r.round_scores or [])
        if not r.forfeited:
            # Ties: the earlier game counts.
            if stats.best is None or r.total < stats.best.total:
                stats.best = r
            if stats.worst is None or r.total > stats.worst.total:
                stats.worst = r
    stats.recent = results[-RECENT_GAMES:]
    return stats


def histogram(scores: list[int]) -> list[tuple[str, int]]:
    counts = []
    for label, low, high in SCORE_BINS:
        n = sum(1 for s in scores if (low is None or s >= low) and (high is None or s <= high))
        counts.append((label, n))
    return counts


# ----- history -------------------------------------------------------------------------
def history(user: User, page: int = 1, per_page: int = 20) -> tuple[list[dict], int, int]:
    """The user's finished games, newest first: (entries of the page, the page shown,
    number of pages). A page beyond the last shows the last."""
    query = Result.select().where(Result.user == user)
    count = query.count()
    pages = max(1, -(-count // per_page))
    page = min(max(1, page), pages)
    mine = list(
        query.order_by(Result.finished_at.desc(), Result.id.desc()).paginate(page, per_page)
    )
    codes = {r.table_id for r in mine}
    others: dict[tuple[str, int], list[Result]] = {}
    if codes:
        for r in (
            Result.select()
            .where(Result.table.in_(list(codes)))
            .order_by(Result.rank, Result.total, Result.id)
        ):
            others.setdefault((r.table_id, r.number), []).append(r)
    entries = [
        {
            "result": r,
            "code": r.table_id,
            "number": r.number,
            "players": others.get((r.table_id, r.number), [r]),
            "won": is_win(r),
        }
        for r in mine
    ]
    return entries, page, pages


def game_results(code: str, number: int) -> list[Result]:
    return list(
        Result.select()
        .where((Result.table == code) & (Result.number == number))
        .order_by(Result.rank, Result.forfeited, Result.total, Result.id)
    )


# ----- leaderboard ---------------------------------------------------------------------
BOARDS = {
    "rating": _l("Rating"),
    "wins": _l("Most wins"),
    "win_rate": _l("Best win rate (at least %(num)s games)", num=WIN_RATE_MIN_GAMES),
    "avg_round": _l("Lowest average round score"),
}


@dataclass
class Row:
    user_id: int
    username: str
    games: int
    wins: int
    rounds: int
    score_sum: int
    rank: int = 0
    rating: int | None = None  # the shown rating (app.features.rating)
    provisional: bool = False

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    @property
    def avg_round(self) -> float | None:
        return self.score_sum / self.rounds if self.rounds else None


def _key(by: str):
    if by == "rating":
        return lambda r: (-r.rating, -r.games)
    if by == "win_rate":
        return lambda r: (-r.win_rate, -r.games)
    if by == "avg_round":
        return lambda r: (r.avg_round, -r.rounds)
    return lambda r: (-r.wins, r.games)


def leaderboard(by: str = "rating") -> list[Row]:
    """Every ranked account holder, best first; equal values share a rank."""
    if by not in BOARDS:
        by = "rating"
    won = pw.Case(None, [((Result.rank == 1) & (Result.forfeited == False), 1)], 0)  # noqa: E712
    query = (
        User.select(
            User.id,
            User.username,
            pw.fn.COUNT(Result.id).alias("games"),
            pw.fn.SUM(won).alias("wins"),
            pw.fn.SUM(Result.rounds_played).alias("rounds"),
            pw.fn.SUM(Result.score_sum).alias("score_sum"),
        )
        .join(Result)
        .group_by(User.id, User.username)
        .dicts()
    )
    rows = [
        Row(
            user_id=d["id"],
            username=d["username"],
            games=d["games"],
            wins=int(d["wins"] or 0),
            rounds=int(d["rounds"] or 0),
            score_sum=int(d["score_sum"] or 0),
        )
        for d in query
    ]
    skills = rating.current()  # every rated account: one query, not thousands of ids
    for row in rows:
        skill = skills.get(row.user_id)
        if skill is not None:
            row.rating, row.provisional = skill.shown, skill.provisional
    if by == "rating":
        rows = [r for r in rows if r.rating is not None]
    elif by == "win_rate":
        rows = [r for r in rows if r.games >= WIN_RATE_MIN_GAMES]
    elif by == "avg_round":
        rows = [r for r in rows if r.rounds > 0]
    key = _key(by)
    # Rank on the measured value only; the rest of the key just orders equal rows.
    value = {
        "rating": lambda r: r.rating,
        "wins": lambda r: r.wins,
        "win_rate": lambda r: r.win_rate,
        "avg_round": lambda r: r.avg_round,
    }[by]
    rows.sort(key=lambda r: (*key(r), r.username.lower()))
    for i, row in enumerate(rows):
        same = i > 0 and value(rows[i - 1]) == value(row)
        row.rank = rows[i - 1].rank if same else i + 1
    return rows

"""Skill ratings: OpenSkill's Plackett-Luce model, which rates a free-for-all of 2 to 8
players from its final ranking (equal ranks are ties).

Each finished game updates its accounts' ratings once, in the transaction that records
its results (app.features.stats.record_results), from those Result rows: `recompute`
replays every stored result in order through the same function and arrives at the same
numbers. Guests and bots play with the default rating and are never rated. A rating is
shown as one number, 1000 + 40 × (mu − 3 sigma): 1000 for a newcomer, rising as the
player wins and as the model grows sure of them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import groupby

import peewee as pw
from openskill.models import PlackettLuce

from app.storage.models import Rating, Result, User, db, on_postgres

MODEL = PlackettLuce()  # mu 25, sigma 25/3: an ordinal of 0 at the start
BASE, SCALE = 1000, 40
PROVISIONAL_GAMES = 5  # fewer rated games than this: the number is provisional


@dataclass(frozen=True)
class Skill:
    mu: float = MODEL.mu
    sigma: float = MODEL.sigma
    games: int = 0

    @property
    def shown(self) -> int:
        """The one number a person sees."""
        return shown(self.mu, self.sigma)

    @property
    def provisional(self) -> bool:
        return self.games < PROVISIONAL_GAMES


def shown(mu: float, sigma: float) -> int:
    return round(BASE + SCALE * (mu - 3 * sigma))


DEFAULT = Skill()


# ----- the model (pure) ----------------------------------------------------------------
def rate(players: list[tuple[Skill, int]]) -> list[Skill]:
    """New skills after one game: `players` are (skill now, final rank) pairs, rank 1
    best; the answer is in the same order, each with one more game."""
    teams = [[MODEL.create_rating([s.mu, s.sigma])] for s, _rank in players]
    rated = MODEL.rate(teams, ranks=[rank for _s, rank in players])
    return [
        Skill(team[0].mu, team[0].sigma, s.games + 1)
        for team, (s, _rank) in zip(rated, players, strict=True)
    ]


def rate_game(results: list[Result], known: dict[int, Skill]) -> dict[int, Skill]:
    """The accounts' new skills after a game, from its results; `known`: the accounts'
    skills before it (a missing one: the default). Guests and bots take part at the
    default skill and get no new one, and so does a guest's seat whose results moved
    to an account later (`rated` False); an account seated twice is rated once."""
    rated: set[int] = set()
    players, owners = [], []
    for r in results:
        owner = r.user_id if r.user_id is not None and r.rated is not False else None
        owner = owner if owner not in rated else None
        if owner is not None:
            rated.add(owner)
        players.append((known.get(owner, DEFAULT) if owner is not None else DEFAULT, r.rank))
        owners.append(owner)
    if len(players) < 2 or not rated:
        return {}
    after = rate(players)
    return {owner: s for owner, s in zip(owners, after, strict=True) if owner is not None}


# ----- storage -------------------------------------------------------------------------
def current(user_ids: Iterable[int] | None = None) -> dict[int, Skill]:
    """The accounts' skills now (their latest Rating rows), or every rated account's
    (None); unrated ones are left out."""
    latest = Rating.select(pw.fn.MAX(Rating.id)).group_by(Rating.user)
    if user_ids is not None:
        ids = list(set(user_ids))
        if not ids:
            return {}
        latest = latest.where(Rating.user.in_(ids))
    return {
        r.user_id: Skill(r.mu, r.sigma, r.games)
        for r in Rating.select().where(Rating.id.in_(latest))
    }


def lock(user_ids: Iterable[int]) -> None:
    """Before a game's results are timed and written: on PostgreSQL the accounts' rows
    are locked until the transaction ends, so two games ending together rate each
    account one after the other, in the order of their finishing times (the order a
    recompute follows). SQLite writes one transaction at a time anyway."""
    ids = sorted(set(user_ids))
    if ids and on_postgres():
        list(User.select(User.id).where(User.id.in_(ids)).order_by(User.id).for_update())


def record(results: list[Result]) -> None:
    """Rate one finished game from its just-written results (after `lock`), in the
    caller's transaction."""
    ids = {r.user_id for r in results if r.user_id is not None}
    if ids:
        _write(results, rate_game(results, current(ids)))


def _write(results: list[Result], skills: dict[int, Skill]) -> None:
    first = results[0]
    rows = [
        {
            "user": user_id,
            "table": first.table_id,
            "number": first.number,
            "mu": s.mu,
            "sigma": s.sigma,
            "games": s.games,
            "finished_at": first.finished_at,
        }
        for user_id, s in skills.items()
    ]
    if rows:
        Rating.insert_many(rows).on_conflict_ignore().execute()


def recompute(batch: int = 500) -> int:
    """Every rating again, from the stored results in the order the games finished:
    returns how many games were rated. One transaction: readers see the old ratings or
    the new ones."""
    query = Result.select().order_by(Result.finished_at, Result.table, Result.number, Result.id)
    skills: dict[int, Skill] = {}
    games = 0
    with db.atomic():
        Rating.delete().execute()
        for _key, rows in groupby(query.iterator(), key=lambda r: (r.table_id, r.number)):
            results = list(rows)
            after = rate_game(results, skills)
            if after:
                _write(results, after)
                skills.update(after)
                games += 1
    return games


def history(user: User) -> list[Rating]:
    """The account's rating after each rated game, oldest first."""
    return list(Rating.select().where(Rating.user == user).order_by(Rating.id))

"""The rating model on its own: OpenSkill's Plackett-Luce over a free-for-all's final
ranking, and bots of known strength rated over many simulated games."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from app.cli.sim import play_game
from app.engine import RuleSet
from app.features import rating
from app.features.rating import DEFAULT, Skill, rate, rate_game, shown


def result(user_id, rank):
    return SimpleNamespace(user_id=user_id, rank=rank, rated=user_id is not None)


def test_a_newcomer_shows_1000_and_is_provisional():
    assert DEFAULT.shown == 1000 and shown(25.0, 25 / 3) == 1000
    assert DEFAULT.provisional and not Skill(games=rating.PROVISIONAL_GAMES).provisional
    assert shown(30.0, 2.0) == 1000 + 40 * 24


def test_the_winner_rises_the_last_falls_and_ties_share():
    first, second, third = rate([(DEFAULT, 1), (DEFAULT, 2), (DEFAULT, 2)])
    assert first.mu > DEFAULT.mu > second.mu
    assert (second.mu, second.sigma) == pytest.approx((third.mu, third.sigma))
    assert all(s.sigma < DEFAULT.sigma and s.games == 1 for s in (first, second, third))


def test_eight_players_in_their_order():
    after = rate([(DEFAULT, rank) for rank in range(1, 9)])
    mus = [s.mu for s in after]
    assert mus == sorted(mus, reverse=True) and len(set(mus)) == 8


def test_guests_and_bots_play_at_the_default_and_are_not_rated():
    strong = Skill(40.0, 2.0, 30)
    after = rate_game([result(None, 1), result(7, 2), result(None, 3)], {7: strong})
    assert set(after) == {7}
    # Losing to a newcomer costs a strong player rating.
    assert after[7].mu < strong.mu and after[7].games == 31
    assert rate_game([result(None, 1), result(None, 2)], {}) == {}
    assert rate_game([result(7, 1)], {}) == {}  # alone: nothing to learn


def test_an_account_seated_twice_is_rated_once():
    after = rate_game([result(7, 1), result(7, 2), result(8, 3)], {})
    assert set(after) == {7, 8} and after[7].games == 1


@pytest.mark.parametrize("players", [2, 4])
def test_the_stronger_bot_rises_above_the_weaker(players):
    """Expert bots against random bots, each seat rated as if it were an account: after
    a few dozen games every expert is rated above every random bot, and the randoms
    below the newcomer's 1000."""
    bots = (["expert", "random"] * 4)[:players]
    skills: dict[int, Skill] = {}
    rules = RuleSet(end_score=50)
    for seed in range(30):
        # Seats turn each game, so the first player's edge goes to each kind alike.
        turn = seed % players
        seated = bots[turn:] + bots[:turn]
        ids = list(range(turn, players)) + list(range(turn))
        game = play_game(rules, seated, seed=seed)
        ranks = {r["player"]: r["rank"] for r in game.ranking()}
        results = [result(ids[k], ranks[f"p{k + 1}"]) for k in range(players)]
        skills.update(rate_game(results, skills))
    expert = [skills[i].shown for i in range(players) if bots[i] == "expert"]
    random_ = [skills[i].shown for i in range(players) if bots[i] == "random"]
    assert min(expert) > max(random_)
    assert max(random_) < 1000 < min(expert)

"""Scoring a round and ranking totals (RULES.md, "Scoring"): the one statement of how
the ender's penalty applies, used by the game and by the score sheet for real cards."""

from __future__ import annotations

from collections.abc import Mapping

from app.engine.rules import Penalty


def ender_penalised(raw: Mapping[str, int], ender: str | None) -> bool:
    """The ender is penalised when their score is above 0 and someone else scored the
    same or less (they were not strictly lowest)."""
    if ender is None or ender not in raw or raw[ender] <= 0:
        return False
    return any(score <= raw[ender] for p, score in raw.items() if p != ender)


def round_scores(
    raw: Mapping[str, int], ender: str | None, penalty: Penalty | None
) -> dict[str, int]:
    """Each player's score for the round: the card totals, with the ender's penalty.
    `penalty` None is the "no penalty" variant."""
    scores = dict(raw)
    if penalty is not None and ender_penalised(raw, ender):
        scores[ender] = penalty.apply(raw[ender])
    return scores


def shared_ranks(totals: Mapping[str, int], order: list[str]) -> list[dict]:
    """Best (lowest) first; equal totals share a rank (1, 1, 3). Within a rank, players
    keep their place in `order`."""
    ranked = sorted(order, key=lambda p: totals[p])  # stable
    return [
        {
            "player": p,
            "rank": 1 + sum(1 for q in order if totals[q] < totals[p]),
            "total": totals[p],
        }
        for p in ranked
    ]

"""How a game is told: its cards' colours, a move log line, a round's results and the
final ranking, as data and translated text (no HTML). The board (app.web.presenter) and
the replays (app.features.replays) both show them."""

from __future__ import annotations

from app import i18n
from app.i18n import gettext as _


def card_tone(value: int) -> str:
    """Colour families of the physical cards."""
    if value < 0:
        return "neg"
    if value == 0:
        return "zero"
    if value <= 4:
        return "low"
    if value <= 8:
        return "mid"
    return "high"


def a(value) -> str:
    """'a 7', 'an 8', 'an 11': the article a card value takes when read aloud (in the
    current language: 'un 7', 'eine 7')."""
    return i18n.card(value)


def log_line(event: dict, names: dict) -> str | None:
    who = names.get(event.get("player"), "")
    kind = event["type"]
    if kind == "take_discard":
        return _("%(name)s took the %(card)s from the discard pile", name=who, card=event["value"])
    if kind == "keep_drawn":
        return _("%(name)s drew and kept %(card)s", name=who, card=a(event["value"]))
    if kind == "discard_drawn":
        flip = event["flip"]
        if flip:
            return _(
                "%(name)s discarded %(card)s and turned over %(other)s",
                name=who,
                card=a(event["value"]),
                other=a(flip["value"]),
            )
        return _("%(name)s discarded %(card)s", name=who, card=a(event["value"]))
    if kind == "clear":
        if event["line"] == "row":
            return _("%(name)s: Row of %(card)ss cleared", name=who, card=event["value"])
        return _("%(name)s: Column of %(card)ss cleared", name=who, card=event["value"])
    if kind == "ended":
        return _("%(name)s ended the round", name=who)
    if kind == "reshuffle":
        return _("The discard pile was shuffled into a new draw pile")
    if kind == "forfeit":
        return _("%(name)s left the game", name=who)
    if kind == "reveal":
        return _("%(name)s turned over %(card)s", name=who, card=a(event["value"]))
    return None


def round_result(game, result: dict, names: dict, my_id) -> dict:
    rows = []
    ender = result["ender"]
    for pid in result["raw"]:
        rows.append(
            {
                "name": names[pid],
                "is_me": pid == my_id,
                "raw": result["raw"][pid],
                "score": result["scores"][pid],
                "total": result["totals"][pid] if result["totals"] else None,
                "ender": pid == ender,
                "penalised": result["scores"][pid] != result["raw"][pid],
            }
        )
    rows.sort(key=lambda r: r["score"])
    penalty_note = None
    if ender in result["raw"] and result["scores"][ender] != result["raw"][ender]:
        penalty_note = _(
            "%(name)s ended the round without the strictly lowest score: "
            "%(raw)s became %(score)s (%(penalty)s).",
            name=names[ender],
            raw=result["raw"][ender],
            score=result["scores"][ender],
            penalty=i18n.describe_penalty(game.rules.penalty),
        )
    return {"rows": rows, "penalty_note": penalty_note, "ender": names.get(ender)}


def ranking(v, names, my_id) -> list[dict]:
    forfeited = {p["id"] for p in v["players"] if p["forfeited"]}
    return [
        {
            "rank": r["rank"],
            "name": names[r["player"]],
            "total": r["total"],
            "is_me": r["player"] == my_id,
            "forfeited": r["player"] in forfeited,
        }
        for r in v["ranking"]
    ]

"""Score sheets for games played with real cards: the tally (pure) and its storage.

The tally scores each round with the engine's own function (app.engine.scoring), so
the sheet applies the ender's penalty exactly as an online table does. Every change
goes through `add_round`, `correct_round` or `undo_round`, bumps the sheet's version
and recomputes the winners kept for the list of sheets."""

from __future__ import annotations

import re
import secrets
from dataclasses import asdict, dataclass

from flask_babel import gettext as _

from app.engine import DECK
from app.engine.rules import BOUNDS, MAX_PLAYERS, MIN_PLAYERS, Penalty, RuleError
from app.engine.scoring import ender_penalised, round_scores, shared_ranks
from app.storage.models import ScoreSheet, SheetRound, db, utcnow
from app.tables.validation import rule_message, unshowable

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # read aloud: no 0/O, 1/I
NAME_MAX = 20
# A 3×4 grid's card total: from the 12 lowest cards of the deck to the 12 highest.
GRID_CARDS = 12
ROUND_MIN = sum(sorted(DECK)[:GRID_CARDS])
ROUND_MAX = sum(sorted(DECK)[-GRID_CARDS:])
CLIENT_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
PENALTY_CHOICES = ("multiplier", "flat", "both", "none")


class SheetError(ValueError):
    """Bad input: `errors` maps each form field to its message; nothing was changed."""

    def __init__(self, errors: dict[str, str], status: int = 400):
        super().__init__("; ".join(errors.values()))
        self.errors = errors
        self.status = status


# ----- the tally (pure) ---------------------------------------------------------------
@dataclass
class Tally:
    rounds: list[dict]  # number, raw, scores, ender, penalised, totals (lists by player)
    totals: list[int]
    ranking: list[dict]  # player (index), rank, total: best first, shared ranks
    over: bool
    winners: list[int]  # player indexes, once over
    ended_at: int | None  # the first round after which someone reached the end score


def tally(players: list[str], rounds: list[dict], end_score: int, penalty: Penalty | None) -> Tally:
    """`rounds`: dicts with `raw` (card totals by player index) and `ender` (index or
    None), in order."""
    ids = [str(i) for i in range(len(players))]
    totals = dict.fromkeys(ids, 0)
    out = []
    ended_at = None
    for number, rnd in enumerate(rounds, start=1):
        raw = dict(zip(ids, rnd["raw"], strict=True))
        ender = None if rnd["ender"] is None else str(rnd["ender"])
        scores = round_scores(raw, ender, penalty)
        for p in ids:
            totals[p] += scores[p]
        out.append(
            {
                "number": number,
                "raw": list(rnd["raw"]),
                "scores": [scores[p] for p in ids],
                "ender": rnd["ender"],
                "penalised": penalty is not None and ender_penalised(raw, ender),
                "totals": [totals[p] for p in ids],
            }
        )
        if ended_at is None and any(t >= end_score for t in totals.values()):
            ended_at = number
    ranking = [
        {"player": int(r["player"]), "rank": r["rank"], "total": r["total"]}
        for r in shared_ranks(totals, ids)
    ]
    over = bool(out) and any(t >= end_score for t in totals.values())
    winners = [r["player"] for r in ranking if r["rank"] == 1] if over else []
    return Tally(out, [totals[p] for p in ids], ranking, over, winners, ended_at)


def penalty_of(sheet: ScoreSheet) -> Penalty | None:
    return Penalty(**sheet.penalty) if sheet.penalty else None


def sheet_tally(sheet: ScoreSheet, rounds: list[SheetRound] | None = None) -> Tally:
    rounds = live_rounds(sheet) if rounds is None else rounds
    data = [{"raw": r.raw, "ender": r.ender} for r in rounds]
    return tally(sheet.players, data, sheet.end_score, penalty_of(sheet))


# ----- reading forms ------------------------------------------------------------------
PLAYER_FIELD = re.compile(r"player-(\d+)", re.ASCII)
ENDER_FIELD = re.compile(r"\d{1,2}", re.ASCII)


def sent_names(form) -> list[tuple[str, str]]:
    """(field, name) for every name a form sends, in the order of its fields: the page's
    player-1 … player-8 and whatever a hand-made request adds (player-9, a field sent
    twice). None is left out: a name too many refuses the sheet, it is not dropped."""
    fields = []
    for key in form:
        if not key.startswith("player-"):
            continue
        number = PLAYER_FIELD.fullmatch(key)
        order = (0, len(number.group(1)), number.group(1)) if number else (1, 0, "")
        values = form.getlist(key) if hasattr(form, "getlist") else [form[key]]
        fields.append((order, key, values))
    fields.sort(key=lambda f: f[0])  # stable: other names stay in the order sent
    out = []
    for _order, key, values in fields:
        for value in values:
            name = " ".join(str(value).split())
            if name:
                out.append((key, name))
    return out


def parse_players(form) -> list[str]:
    names, errors, seen = [], {}, set()
    shown = {f"player-{i}" for i in range(1, MAX_PLAYERS + 1)}  # the page's fields
    for field, name in sent_names(form):
        if field not in shown:
            field = "player-1"  # where a hand-made field's message can be read
        if len(name) > NAME_MAX:
            errors.setdefault(field, _("A name has at most %(n)d characters.", n=NAME_MAX))
        elif unshowable(name):
            errors.setdefault(field, _("That name has characters we cannot show."))
        elif name.casefold() in seen:
            errors.setdefault(field, _("Two players cannot have the same name."))
        seen.add(name.casefold())
        names.append(name)
    # Too many names is said first (whatever else is wrong), too few once names are right.
    if len(names) > MAX_PLAYERS or (not errors and len(names) < MIN_PLAYERS):
        errors = {
            "player-1": _(
                "Write the names of %(low)d to %(high)d players.",
                low=MIN_PLAYERS,
                high=MAX_PLAYERS,
            )
        }
    if errors:
        raise SheetError(errors)
    return names


def parse_whole(form, field: str, low: int, high: int, errors: dict, label: str) -> int | None:
    text = form.get(field, "").strip().replace("\u2212", "-")  # a typographic minus
    try:
        value = int(text)
    except ValueError:
        errors[field] = _("%(what)s: write a whole number.", what=label)
        return None
    if not low <= value <= high:
        errors[field] = _("%(what)s: from %(low)d to %(high)d.", what=label, low=low, high=high)
        return None
    return value


def parse_settings(form) -> tuple[int, dict | None]:
    """The end score and the ender's penalty (as the table options offer it)."""
    errors: dict[str, str] = {}
    end = parse_whole(form, "end_score", *BOUNDS["end_score"], errors, _("End score"))
    mode = form.get("penalty_mode", "multiplier")
    penalty = None
    if mode not in PENALTY_CHOICES:
        errors["penalty_mode"] = _("Choose one of the penalties offered.")
    elif mode != "none":
        mul = parse_whole(
            form, "penalty_multiplier", *BOUNDS["penalty.multiplier"], errors, _("Multiplier")
        )
        flat = parse_whole(form, "penalty_flat", *BOUNDS["penalty.flat"], errors, _("Points added"))
        if mul is not None and flat is not None:
            try:
                penalty = asdict(Penalty(mode, mul, flat))
            except RuleError as exc:  # the engine's own check of the penalty as a whole
                errors["penalty_mode"] = rule_message(exc)
    if errors:
        raise SheetError(errors)
    return end, penalty


def parse_round(form, players: list[str]) -> tuple[list[int], int | None]:
    errors: dict[str, str] = {}
    raw = []
    for i, name in enumerate(players, start=1):
        raw.append(parse_whole(form, f"score-{i}", ROUND_MIN, ROUND_MAX, errors, name))
    ender_text = form.get("ender", "")
    ender = None
    if ender_text == "none":
        ender = None
    elif ENDER_FIELD.fullmatch(ender_text) and 1 <= int(ender_text) <= len(players):
        ender = int(ender_text) - 1
    else:
        errors["ender"] = _("Choose who ended the round, or nobody.")
    if errors:
        raise SheetError(errors)
    return raw, ender


# ----- storage ------------------------------------------------------------------------
def new_code() -> str:
    while True:
        code = "".join(secrets.choice(CODE_ALPHABET) for _n in range(8))
        if ScoreSheet.get_or_none(ScoreSheet.code == code) is None:
            return code


def create_sheet(form, device: str, user_id: int | None) -> ScoreSheet:
    errors = {}
    try:
        players = parse_players(form)
    except SheetError as exc:
        errors.update(exc.errors)
    try:
        end, penalty = parse_settings(form)
    except SheetError as exc:
        errors.update(exc.errors)
    if errors:
        raise SheetError(errors)
    return ScoreSheet.create(
        code=new_code(),
        device=device,
        user=user_id,
        players=players,
        end_score=end,
        penalty=penalty,
    )


def get_sheet(code: str) -> ScoreSheet | None:
    code = (code or "").strip().upper()
    if not code.isalnum():
        return None
    return ScoreSheet.get_or_none(ScoreSheet.code == code)


def can_edit(sheet: ScoreSheet, device: str | None, user_id: int | None) -> bool:
    return (device is not None and sheet.device == device) or (
        user_id is not None and sheet.user_id == user_id
    )


def live_rounds(sheet: ScoreSheet) -> list[SheetRound]:
    return list(
        SheetRound.select()
        .where((SheetRound.sheet == sheet) & (SheetRound.undone == False))  # noqa: E712
        .order_by(SheetRound.number)
    )


def _changed(sheet: ScoreSheet) -> None:
    """Bump the version and keep the winners for the list (inside the transaction)."""
    result = sheet_tally(sheet)
    sheet.version += 1
    sheet.updated_at = utcnow()
    sheet.winners = [sheet.players[i] for i in result.winners]
    sheet.save()


def add_round(sheet: ScoreSheet, form) -> bool:
    """Add a round once per client id. Returns False when that id was already
    accepted (a round sent again after a lost answer): nothing changes then."""
    client_id = form.get("round_id", "")
    if not CLIENT_ID.match(client_id):
        raise SheetError({"round_id": _("This form is missing its round id: reload the page.")})
    raw, ender = parse_round(form, sheet.players)
    with db.atomic():
        sheet = ScoreSheet.get_by_id(sheet.code)  # the version another change may have moved
        if SheetRound.get_or_none(
            (SheetRound.sheet == sheet) & (SheetRound.client_id == client_id)
        ):
            return False
        if sheet_tally(sheet).over:
            raise SheetError(
                {"round": _("The game is over: correct or undo a round to go on.")}, 409
            )
        number = len(live_rounds(sheet)) + 1
        SheetRound.create(sheet=sheet, number=number, client_id=client_id, raw=raw, ender=ender)
        _changed(sheet)
    return True


def _round(sheet: ScoreSheet, number: int) -> SheetRound:
    found = SheetRound.get_or_none(
        (SheetRound.sheet == sheet) & (SheetRound.number == number) & (SheetRound.undone == False)  # noqa: E712
    )
    if found is None:
        raise SheetError({"round": _("There is no round %(n)d on this sheet.", n=number)}, 404)
    return found


def correct_round(sheet: ScoreSheet, number: int, form) -> None:
    raw, ender = parse_round(form, sheet.players)
    with db.atomic():
        sheet = ScoreSheet.get_by_id(sheet.code)
        rnd = _round(sheet, number)
        rnd.raw, rnd.ender = raw, ender
        rnd.save()
        _changed(sheet)


def undo_round(sheet: ScoreSheet, number: int) -> None:
    """Undo the last round; `number` is the round the person saw as last, so pressing
    'undo' twice (or on a stale page) never undoes a second round."""
    with db.atomic():
        sheet = ScoreSheet.get_by_id(sheet.code)
        rounds = live_rounds(sheet)
        if not rounds or rounds[-1].number != number:
            raise SheetError({"round": _("That is no longer the last round: nothing undone.")}, 409)
        rounds[-1].undone = True
        rounds[-1].save()
        _changed(sheet)


def sheets_for(device: str | None, user_id: int | None, limit: int = 50) -> list[ScoreSheet]:
    """The sheets of this device and of the signed-in account, newest first. Signed in,
    the device's sheets without an account become the account's."""
    if user_id is not None and device:
        ScoreSheet.update(user=user_id).where(
            (ScoreSheet.device == device) & (ScoreSheet.user.is_null())
        ).execute()
    where = ScoreSheet.device == (device or "")
    if user_id is not None:
        where |= ScoreSheet.user == user_id
    return list(
        ScoreSheet.select().where(where).order_by(ScoreSheet.updated_at.desc()).limit(limit)
    )


def recent_names(sheets: list[ScoreSheet], limit: int = 16) -> list[str]:
    names, seen = [], set()
    for sheet in sheets:
        for name in sheet.players:
            if name.casefold() not in seen:
                seen.add(name.casefold())
                names.append(name)
    return names[:limit]

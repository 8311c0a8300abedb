"""What is wrong with a game record, in its reader's words (app.features.replays, uploads).

The engine (app.engine.record) stays free of the web: its RecordError says what is wrong
as data (the round, the move, the field, the rules' reason) and this module phrases it:
"Round 1, move 7: Greedy 2 drew a card and placed it at row 1, column 3, but it is
Greedy 1's turn." Nothing here shows Python's own text of a value or of an exception."""

from __future__ import annotations

import re

from flask_babel import gettext as _

from app.engine import RecordError, RuleError
from app.engine.record import FORMAT
from app.engine.rules import MAX_PLAYERS, MIN_PLAYERS
from app.tables.validation import rule_message

SHORT = 40  # a value of the file quoted in a message (an id, a move's type) is cut here


def short(text: str) -> str:
    """A value of the file as a message quotes it: cut, and nothing it cannot show."""
    text = "".join(ch if ch.isprintable() else "\ufffd" for ch in text)
    return text if len(text) <= SHORT else text[: SHORT - 1] + "…"


def explain(exc: RecordError, game=None) -> str:
    """The message for a record that does not replay; `game`: the game replayed so far
    (its players' names and rules), None when the record failed before it existed."""
    names = {p.id: p.name for p in game.players} if game is not None else {}
    if exc.problem == "format":
        return _("This is not a %(format)s record.", format=FORMAT)
    if exc.round_number is None:
        return header_message(exc)
    if exc.move_number is None:
        return round_message(exc, names, game)
    return move_message(exc, names)


def name_of(names: dict, player) -> str:
    if isinstance(player, str) and player in names:
        return names[player]
    return _("“%(id)s”", id=short(str(player)))  # an id no player of the record has


# ----- the header: rules, players, the list of rounds ------------------------------------
PLAYER_FIELD = re.compile(r"players\.(\d+)(?:\.(\w+))?")


def header_message(exc: RecordError) -> str:
    field, problem = exc.field, exc.problem
    if problem == "rules" and isinstance(exc.__cause__, RuleError):
        rule = exc.__cause__
        if rule.message.startswith("is not a"):
            return _(
                "The record's rules have an option this game does not know: %(option)s.",
                option=short(rule.field),
            )
        return _("The record's rules: %(problem)s", problem=rule_message(rule))
    if problem == "players":
        return _(
            "A game has %(low)d to %(high)d players; the record lists %(num)d.",
            low=MIN_PLAYERS,
            high=MAX_PLAYERS,
            num=exc.found,
        )
    if problem == "duplicate":
        return _("Two players of the record have the same id, “%(id)s”.", id=short(exc.found))
    missing = problem == "missing"
    if field == "rules":
        if missing:
            return _("The record gives no rules.")
        return _("The record's rules must be a set of options (rows, cols, end_score…).")
    if field == "players":
        if missing:
            return _("The record lists no players.")
        return _("The record's players must be a list.")
    if field == "rounds":
        if missing:
            return _("The record lists no rounds.")
        return _("The record's rounds must be a list.")
    if field == "id":
        return _("The record's id must be text.")
    player = PLAYER_FIELD.fullmatch(field)
    if player:
        n, part = int(player.group(1)), player.group(2)
        if part == "id":
            if missing:
                return _("Player %(n)d of the record has no id.", n=n)
            return _("Player %(n)d of the record: the id must be text.", n=n)
        if part == "name":
            if missing:
                return _("Player %(n)d of the record has no name.", n=n)
            return _("Player %(n)d of the record: the name must be text, not empty.", n=n)
        if part == "bot":
            return _("Player %(n)d of the record: the bot must be a bot's name, or null.", n=n)
        return _("Player %(n)d of the record is not written as a player (an id and a name).", n=n)
    return _("This game record cannot be replayed as written.")


# ----- a round: its deal, its starter, its result ---------------------------------------
def round_message(exc: RecordError, names: dict, game) -> str:
    n, field, problem = exc.round_number, exc.field, exc.problem
    missing = problem == "missing"
    if problem == "numbered":
        return _(
            "Round %(round)d of the record is not numbered %(round)d: rounds are numbered "
            "1, 2, 3… in order.",
            round=n,
        )
    if problem == "deck":
        return _("Round %(round)d: the cards dealt are not the 150 cards of the deck.", round=n)
    if problem == "over":
        return _("Round %(round)d comes after the end of the game.", round=n)
    if problem == "unfinished":
        return _(
            "Round %(round)d begins before round %(previous)d is over.", round=n, previous=n - 1
        )
    if problem == "starter":
        return starter_message(n, exc.found, exc.expected, names)
    if problem == "result":
        return result_message(n, exc.found, exc.expected, names)
    if field == "round":
        return _("Round %(round)d of the record is not written as a round.", round=n)
    if field == "number":
        return _("Round %(round)d of the record has no number.", round=n)
    if field == "seating":
        if missing:
            return _("Round %(round)d has no seating.", round=n)
        return _(
            "Round %(round)d: the seating must list the players still in the game, each once.",
            round=n,
        )
    if field == "grids":
        if exc.found is None:
            if missing:
                return _("Round %(round)d has no dealt grids.", round=n)
            return _(
                "Round %(round)d: the dealt grids must give each seated player's cards.", round=n
            )
        who = name_of(names, exc.found)
        if missing:
            return _("Round %(round)d: no grid is dealt to %(name)s.", round=n, name=who)
        rules = game.rules if game is not None else None
        if rules is not None:
            return _(
                "Round %(round)d: the grid dealt to %(name)s must be %(rows)d rows of "
                "%(cols)d cards.",
                round=n,
                name=who,
                rows=rules.rows,
                cols=rules.cols,
            )
    if field == "discard":
        if missing:
            return _("Round %(round)d has no discard pile.", round=n)
        return _("Round %(round)d: the discard pile must be a list of cards.", round=n)
    if field == "draw_pile":
        if missing:
            return _("Round %(round)d has no draw pile.", round=n)
        return _("Round %(round)d: the draw pile must be a list of cards.", round=n)
    if field == "moves":
        if missing:
            return _("Round %(round)d has no list of moves.", round=n)
        return _("Round %(round)d: the moves must be a list.", round=n)
    if field == "starter":
        return _(
            "Round %(round)d: the starter must be one of the seated players, or null.", round=n
        )
    return _("Round %(round)d of the record cannot be replayed as written.", round=n)


def starter_message(n: int, recorded, first, names: dict) -> str:
    if recorded is None:
        return _(
            "Round %(round)d: the record names no starter, but %(first)s played the first turn.",
            round=n,
            first=name_of(names, first),
        )
    if first is None:
        return _(
            "Round %(round)d: the record names %(name)s as the starter, but nobody played a turn.",
            round=n,
            name=name_of(names, recorded),
        )
    return _(
        "Round %(round)d: the record names %(name)s as the starter, but %(first)s played the "
        "first turn.",
        round=n,
        name=name_of(names, recorded),
        first=name_of(names, first),
    )


def result_message(n: int, recorded, expected: dict, names: dict) -> str:
    """The first thing the recorded result gets wrong: who ended the round, then each
    player's card points, round score and total."""
    if not isinstance(recorded, dict) or not isinstance(expected, dict):
        return _("Round %(round)d: the recorded result is not the one the rules give.", round=n)
    if recorded.get("ender") != expected.get("ender"):
        ender = expected.get("ender")
        if ender is None:
            return _(
                "Round %(round)d: by the rules nobody ended the round, not as recorded.", round=n
            )
        return _(
            "Round %(round)d: by the rules %(name)s ended the round, not as recorded.",
            round=n,
            name=name_of(names, ender),
        )
    sentences = {
        "raw": lambda **v: _(
            "Round %(round)d: by the rules %(name)s has %(expected)d card points, "
            "not %(found)d as recorded.",
            **v,
        ),
        "scores": lambda **v: _(
            "Round %(round)d: by the rules %(name)s scores %(expected)d in the round, "
            "not %(found)d as recorded.",
            **v,
        ),
        "totals": lambda **v: _(
            "Round %(round)d: by the rules %(name)s has a total of %(expected)d, "
            "not %(found)d as recorded.",
            **v,
        ),
    }
    for key, sentence in sentences.items():
        mine, theirs = expected.get(key) or {}, recorded.get(key)
        if theirs == mine:
            continue
        for pid, value in mine.items():
            found = theirs.get(pid) if isinstance(theirs, dict) else None
            if found != value and isinstance(found, int) and not isinstance(found, bool):
                return sentence(round=n, name=name_of(names, pid), expected=value, found=found)
        break
    return _("Round %(round)d: the recorded result is not the one the rules give.", round=n)


# ----- a move ---------------------------------------------------------------------------
def move_message(exc: RecordError, names: dict) -> str:
    n, m, field, problem = exc.round_number, exc.move_number, exc.field, exc.problem
    if problem == "illegal":
        return _(
            "Round %(round)d, move %(move)d: %(what)s, but %(why)s.",
            round=n,
            move=m,
            what=move_words(exc.move, names),
            why=refusal(exc.reason, exc.move, names),
        )
    if problem == "kind" and isinstance(exc.found, str) and exc.found.strip():
        return _(
            "Round %(round)d, move %(move)d is a kind of move this game does not know: “%(type)s”.",
            round=n,
            move=m,
            type=short(exc.found),
        )
    if field == "type":
        return _(
            "Round %(round)d, move %(move)d does not say what kind of move it is.", round=n, move=m
        )
    if field == "move":
        return _("Round %(round)d, move %(move)d is not written as a move.", round=n, move=m)
    if field == "player":
        return _(
            "Round %(round)d, move %(move)d does not name the player who made it.", round=n, move=m
        )
    if field in ("row", "col"):
        return _(
            "Round %(round)d, move %(move)d: the row and column must be whole numbers.",
            round=n,
            move=m,
        )
    if field == "keep":
        return _(
            "Round %(round)d, move %(move)d: a draw must say whether the card was kept "
            "(true or false).",
            round=n,
            move=m,
        )
    if field == "flip":
        return _(
            "Round %(round)d, move %(move)d: the card turned over must be a row and a column, "
            "or null.",
            round=n,
            move=m,
        )
    if field == "draw_pile":
        return _(
            "Round %(round)d, move %(move)d: a reshuffle must list the new draw pile's cards.",
            round=n,
            move=m,
        )
    return _("Round %(round)d, move %(move)d cannot be replayed as written.", round=n, move=m)


def move_words(move: dict, names: dict) -> str:
    """A recorded move as a clause: "Ann drew a card and placed it at row 1, column 3".
    Rows and columns count from 1, as the board's labels do (the record's from 0)."""
    kind = move.get("type")
    if kind == "reshuffle":
        return _("the discard pile was shuffled into a new draw pile")
    name = name_of(names, move.get("player"))
    if kind == "forfeit":
        return _("%(name)s left the game", name=name)
    # (A move the rules refused was checked first: its row and column are whole numbers.)
    cell = {"row": move.get("row", 0) + 1, "col": move.get("col", 0) + 1}
    if kind == "reveal":
        return _("%(name)s turned over the card at row %(row)d, column %(col)d", name=name, **cell)
    if kind == "take_discard":
        return _(
            "%(name)s took the discard and placed it at row %(row)d, column %(col)d",
            name=name,
            **cell,
        )
    if move.get("keep"):
        return _(
            "%(name)s drew a card and placed it at row %(row)d, column %(col)d", name=name, **cell
        )
    flip = move.get("flip")
    if flip is None:
        return _("%(name)s drew a card and discarded it", name=name)
    return _(
        "%(name)s drew a card, discarded it and turned over the card at row %(row)d, "
        "column %(col)d",
        name=name,
        row=flip[0] + 1,
        col=flip[1] + 1,
    )


TURN = re.compile(r"It is (.+)'s turn")


def refusal(reason: str, move: dict, names: dict) -> str:
    """The rules' reason (IllegalMove's words, English) as a clause after "but"."""
    turn = TURN.fullmatch(reason)
    if turn:
        return _("it is %(name)s's turn", name=turn.group(1))
    name = name_of(names, move.get("player"))
    clauses = {
        "There is no card at that position": lambda: _("the grid has no card there"),
        "That card was cleared from the grid": lambda: _("that card was cleared from the grid"),
        "That card is already face up": lambda: _("that card is already face up"),
        "Choose a face-down card to turn over": lambda: _(
            "a card still face down must then be turned over"
        ),
        "Play has started: draw a card or take the discard": lambda: _(
            "play has started: a turn draws a card or takes the discard"
        ),
        "The game is over": lambda: _("the game is over"),
        "You are not playing in this game": lambda: _("no player of this game has that id"),
        "You have left this game": lambda: _("%(name)s has already left the game", name=name),
        "The round is over; the next one has not started yet": lambda: _("the round is over"),
        "Turn your first cards face up before play starts": lambda: _(
            "the first cards are still being turned over"
        ),
        "You have already turned your first cards; wait for the others": lambda: _(
            "%(name)s has already turned over all of their first cards", name=name
        ),
        "A reshuffle must use exactly the discard pile under its top card": lambda: _(
            "the new draw pile is not the discard pile under its top card"
        ),
        "a reshuffle while the draw pile still has cards": lambda: _(
            "the draw pile still has cards"
        ),
    }
    found = clauses.get(reason)
    return found() if found else _("the rules do not allow it")

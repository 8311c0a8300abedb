"""The table (#table) as HTML: for a table with a board, partials/_board.html's
board_section for one viewer, with the pieces every viewer of one push sees alike
rendered once per push and language (kept in the push's `memo`,
app.web.render.table_context's), each other player's box once per state of the box and
language, and each card once per position, state and language; partials/_table.html for
a lobby or a closed table. Jinja escapes every value.

A push renders the board once per viewer: one macro call that only joins the shared
pieces with the viewer's own (their banner, total, grid and buttons, the piles when it
is their turn, their forms with their CSRF token, kept per token)."""

from __future__ import annotations

from operator import itemgetter

from flask import current_app, has_request_context, request, url_for
from jinja2 import pass_context
from markupsafe import Markup

from app import i18n
from app.tables import clock

__all__ = [
    "board_section",
    "grid_cards",
    "opponent_box",
    "own_section",
    "page_board_section",
    "parts",
    "path_for",
    "reaction_slot",
    "shared_piles",
    "shared_pieces",
    "table_html",
    "viewer_forms",
]


def parts():
    """partials/_board.html's macros (the template's module: made once, with nothing of
    a rendering's context, so a call ties no request or session into it)."""
    return current_app.jinja_env.get_template("partials/_board.html").module


def table_html(ctx: dict) -> str:
    """The #table section as `ctx` (app.web.render.table_context, with the viewer's
    `csrf`) shows it: a push's and an htmx answer's (no context processor is run)."""
    if ctx["board"] is not None and ctx["status"] != "lobby":
        return str(board_section(ctx))
    return current_app.jinja_env.get_template("partials/_table.html").render(ctx)


def board_section(ctx) -> Markup:
    """The #table section of a table with a board (partials/_board.html's macro of the
    name) as `ctx` shows it: a push renders one per viewer."""
    b = ctx["board"]
    urls, version, csrf, memo = ctx["urls"], ctx["version"], ctx["csrf"], ctx["memo"]
    piles = mine = forms = None
    results = ""
    if b["phase"] in ("setup", "play"):
        piles = shared_piles(b, urls, csrf, version, memo)
    if b["me"] and b["me"]["grid"]:
        mine = own_section(b, memo["slots"][b["me"]["id"]], urls["move"], version, csrf)
        if b["phase"] in ("setup", "play") and clock.absent_since(ctx["table"], b["me"]["id"]):
            mine = parts().back_form(urls, csrf) + mine
    if b["playing"]:
        leaving = b["phase"] != "game_over"
        forms = viewer_forms(urls, csrf, ctx["pieces"]["reactions"], leaving)
    variants = ""
    swapped = ctx.get("oob") or (has_request_context() and request.htmx)
    # In answers and pushes only: a whole page keeps within its weight budget (the
    # choice is then one request, as without JavaScript).
    if ctx.get("variants") and swapped:
        variants = Markup("").join(
            variant(mode, v, ctx, memo["slots"][b["me"]["id"]])
            for mode, v in ctx["variants"].items()
        )
    if b["ranking"] or b["result"]:  # as the page has them (a few renderings per round)
        template = current_app.jinja_env.get_template("partials/_results.html")
        results = Markup(template.render(ctx))  # a template's rendering, escaped there
    pieces = ctx["pieces"]
    away, me = ctx["away"], ctx["me"]
    if away and me is not None and away.get("seat") == me.id:  # said to them: "you"
        pieces = dict(pieces, away=parts().away_countdown(away, True))
    section = parts().board_section(
        ctx["status"],
        ctx.get("oob"),
        version,
        pieces,
        ctx["error"],
        ctx["error_field"],
        ctx["me"] is None,
        urls,
        b,
        ctx["boxes"],
        piles,
        mine,
        forms,
        results,
        variants,
    )
    if swapped and ctx["table"].lesson:  # the page has its #hint above the board
        return section + parts().hint_box(b["hint"], True)
    return section


def variant(mode: str, b: dict, ctx: dict, slot):
    """The banner, buttons and grid of another way to play this turn (`b`, the board in
    that mode), for the page to swap in when the player chooses it."""
    urls, version, csrf = ctx["urls"], ctx["version"], ctx["csrf"]
    actions = parts().actions(b, urls, csrf, version)
    mine = own_section(b, slot, urls["move"], version, csrf)
    return parts().variant(mode, b["banner"], actions, mine)


@pass_context
def page_board_section(context) -> Markup:
    """partials/_table.html's board_section: its context as a push's `ctx`."""
    return board_section(context.get_all())


def path_for(endpoint: str, **values) -> str:
    """url_for as inside a request: a path unless `_external` is asked for. A push made
    by a timer has no request, where url_for makes every link absolute, with this
    process's own host (which a reverse proxy's visitors cannot reach)."""
    values.setdefault("_external", False)
    return url_for(endpoint, **values)


def shared_pieces(ctx: dict) -> dict:
    """What every viewer of this push sees alike (the same snapshot, phase and language):
    the page's heading, and on a board its opening tag, the away countdown, the round
    line's parts, the log and the reactions offered. All but the log and the countdown
    are kept per table, round, phase and language (they change a few times a round)."""
    memo = ctx["memo"]
    found = memo.get("pieces")
    if found is None:
        b = ctx["board"]
        game_number = ctx["table"].game_number
        if b is None:
            key = (ctx["code"], ctx["status"], game_number)
        else:
            key = (ctx["code"], ctx["status"], game_number, b["phase"], b["round_number"])
            key += (b["rules"].end_score,)
        kept = i18n.per_catalog(_PIECES, key, lambda: lasting_pieces(ctx, game_number), 1024)
        found = memo["pieces"] = dict(kept)
        if b is not None:
            m = parts()
            found["away"] = m.away_countdown(ctx["away"]) if ctx["away"] else ""
            found["log"] = m.log(b["log"])
    return found


def lasting_pieces(ctx: dict, game_number: int) -> dict:
    b = ctx["board"]
    m = parts()
    found = {"heading": m.heading(ctx["code"], ctx["status"], b, game_number)}
    if b is not None:
        found |= {
            "head": m.board_head(game_number, b["phase"], b["round_number"]),
            "round": m.round_said(game_number, b["round_number"]),
            "to_score": m.to_score(b["rules"].end_score),
            "others": m.others(),
            "reactions": m.reaction_buttons(),
        }
    return found


_PIECES: dict[int, tuple] = {}


# What the piles show (the piles macro reads nothing else of the board).
PILES = (
    "can_draw",
    "draw_count",
    "discard_top",
    "discard_tone",
    "mode",
    "drawn",
    "drawn_tone",
    "someone_drew",
    "face_down_left",
)
PILES_OF = itemgetter(*PILES)


def shared_piles(b: dict, urls: dict, csrf, version, memo: dict):
    """The piles and the turn's buttons, rendered from their own inputs only: every
    viewer whose turn it is not (no form: no token) shares one per push."""
    csrf = csrf if b["my_turn"] else None
    key = ("piles", PILES_OF(b), csrf, version)
    found = memo.get(key)
    if found is None:
        found = memo[key] = parts().piles(b, urls, csrf, version)
    return found


def own_section(b: dict, slot, move_url: str, version, csrf):
    """The viewer's own grid in its section: with buttons while they can press a card,
    else plain cards, rendered once per state and language (it does not change while
    the others play)."""
    m = parts()
    mine = b["me"]
    if mine["pressing"] is not None:
        return m.own_section(b, grid_cards(mine["grid"]), slot, move_url, version, csrf)
    rows = mine["grid"]
    active = b["my_turn"] or b["setup_left"]
    shows = b["show_totals"] and b["phase"] in ("setup", "play")
    key = (len(rows[0]), cards_of(rows), str(slot), active, shows, mine["face_up"])
    return i18n.per_catalog(
        _OWN, key, lambda: m.own_section(b, grid_cards(rows), slot, None, None, None), 4096
    )


_OWN: dict[int, tuple] = {}


def grid_cards(rows) -> Markup:
    """A grid's cards, each rendered once per position, state, value, button and
    language (its markup follows from them): a grid that changed renders only the
    cards no grid showed before."""
    known = i18n.catalog_cache(_CARDS)
    out = []
    m = None
    for row in rows:
        for c in row:
            action = c["action"]
            key = (c["row"], c["col"], c["state"], c.get("value"), action and action["verb"])
            found = known.get(key)
            if found is None:
                if len(known) >= 8192:
                    known.clear()
                m = m or parts()
                found = known[key] = m.button(c) if action else m.card(c)
            out.append(found)
    # Each piece is a macro's rendering (Markup): joined as it is, not escaped again.
    return Markup("".join(out))


_CARDS: dict[int, tuple] = {}


def cards_of(rows) -> tuple:
    """What a grid shows (each card's state and value: its labels follow from them)."""
    return tuple([(c["state"], c.get("value")) for row in rows for c in row])


# What another player's box shows (opponent_box reads nothing else of it).
BOX = ("name", "mark", "total", "bot", "forfeited", "present", "is_turn", "is_ender", "face_up")


def opponent_box(o: dict, cells, slot, show_totals: bool, phase: str):
    """Another player's box as everyone else sees it, with their grid's `cells`, rendered
    once per state of the box and language (most boxes do not change from one push to
    the next); `slot`: their reaction slot."""
    # Keys of strings (a Markup is walked by the garbage collector, and so its tuple).
    key = (*(o[k] for k in BOX), len(cells[0]), cards_of(cells), str(slot), show_totals, phase)
    return i18n.per_catalog(
        _BOXES,
        key,
        lambda: parts().opponent(o, grid_cards(cells), len(cells[0]), slot, show_totals, phase),
        4096,
    )


_BOXES: dict[int, tuple] = {}


def viewer_forms(urls: dict, csrf, reactions, leaving: bool):
    """A player's reactions form and, while `leaving` is offered, their leave form:
    rendered once per token, table and language (only the token is theirs, and it lasts
    as long as their session)."""
    key = (csrf, urls["react"], urls["leave"], leaving)
    return i18n.per_catalog(
        _FORMS, key, lambda: parts().viewer_forms(urls, csrf, reactions, leaving), 4096
    )


_FORMS: dict[int, tuple] = {}


def reaction_slot(player_id: str, reaction: dict | None = None, oob: bool = False):
    """A player's reaction slot (app.web.reactions says what it shows)."""
    return parts().reaction_slot(player_id, reaction, oob)

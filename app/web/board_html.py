"""The table (#table) as HTML, built in Python: a page, an htmx answer and every push of
every viewer show it from here (partials/_table.html calls `table_section`; a push calls
`table_html` without a template). The lobby stays a template, and so do the results at
the end of a round or game (a few renderings per round).

Rendering a board through Jinja cost about 0.6 ms per viewer and push, mostly template
glue, for markup that is largely the same for every viewer. Here the phrases that do
not change are translated once per language (`words`), what every viewer of one push
sees alike is built once per push and language (kept in the push's `memo`), and each
viewer's own board only joins those with their own parts: their banner, total, grid
and buttons, the piles when it is their turn, their forms' CSRF token. Values are
escaped and translations are trusted markup, as in the templates."""

from __future__ import annotations

from operator import itemgetter

from flask import current_app, url_for
from jinja2 import pass_context
from markupsafe import Markup

from app import i18n, tables
from app.i18n import gettext as _
from app.i18n import ngettext
from app.web.fragments import esc, my_grid_html, showing_html

__all__ = ["hidden", "path_for", "table_html", "table_section", "words"]


def words() -> dict[str, str]:
    """The board's fixed phrases (and formats) in the current language, translated once
    per catalog: every viewer of every push shows them. Trusted markup as plain strings:
    a format is filled with numbers, or with values escaped where it is used (Markup's
    `%` wraps and escapes each value in Python, seven times a move)."""
    return i18n.per_catalog(_words, (), _phrases)


_words: dict[tuple, tuple] = {}  # one entry per language


def _phrases() -> dict[str, str]:
    # A format's placeholders are filled with escaped values where it is used.
    return {
        "your_turn": _("Your turn"),
        # The page's one heading (hidden: the header and the round line show the same).
        "h_lobby": _("Table %(code)s, waiting to start"),
        "h_round": _("Table %(code)s, round %(round)s"),
        "h_game_round": _("Table %(code)s, game %(game)s, round %(round)s"),
        "h_round_over": _("Table %(code)s, round %(round)s results"),
        "h_over": _("Table %(code)s, final results"),
        "h_closed": _("Table %(code)s, closed"),
        "watching": _("This game has already started: you are watching."),
        "over": _("This game is over."),
        "start_own": _("Start your own table"),
        "closed": _("This table is closed."),
        "away_setup": _(
            "%(name)s is not connected: their cards are turned for them in %(seconds)s s"
        ),
        "away_play": _("%(name)s is not connected: their turn is played for them in %(seconds)s s"),
        "game_round": _("Game %(game)s · Round %(round)s"),
        "round": _("Round %(number)s"),
        "your_total": _("Your total: <strong>%(total)s</strong>"),
        "to_score": _("To %(score)s"),
        "others": _("Other players"),
        "your_grid": _("Your grid"),
        "face_up": _("Face up: %(points)s"),
        "face_up_said": _("Points of the face-up cards: %(points)s"),
        "recent": _("Recent moves"),
        "reactions": _("Reactions"),
        "leave_confirm": _("Leave this game for good? You will rank last."),
        "leave": _("Leave the game"),
        "piles": _("Piles"),
        "draw_count": _("Draw · %(count)s"),
        "take_top": _("Take the %(card)s from the discard pile"),
        "discard_top": _("Discard pile, top card %(card)s"),
        "discard": _("Discard"),
        "your_drawn": _("Your drawn card: %(card)s"),
        "you_drew": _("You drew"),
        "hidden_drawn": _("A drawn card, hidden from you"),
        "drawn": _("Drawn"),
        "draw": _("Draw a card"),
        "take": _("Take the %(card)s"),
        "keep": _("Keep it instead"),
        "cancel": _("Cancel"),
        "discard_flip": _("Discard the %(card)s and turn a card over"),
        "discard_it": _("Discard the %(card)s"),
    }


def hidden(csrf, version) -> Markup:
    """A form's CSRF token and the table version it acts on (a stale form is refused)."""
    return Markup(_hidden(csrf, version))


def _hidden(csrf, version) -> str:
    return (
        f'<input type="hidden" name="csrf_token" value="{esc(csrf)}">'
        f'<input type="hidden" name="version" value="{esc(version)}">'
    )


def path_for(endpoint: str, **values) -> str:
    """url_for as inside a request: a path unless `_external` is asked for. A push made
    by a timer has no request, where url_for makes every link absolute, with this
    process's own host (which a reverse proxy's visitors cannot reach)."""
    values.setdefault("_external", False)
    return url_for(endpoint, **values)


@pass_context
def table_section(context, inner: str = "") -> Markup:
    """partials/_table.html's section: `inner` is the lobby the template rendered."""
    return Markup(table_html(context, inner))


def table_html(ctx, inner: str = "") -> str:
    """The #table section as `ctx` (app.web.render.table_context, with the viewer's
    `csrf`) shows it; `inner`: the lobby's markup, for a table in its lobby. A string
    (a push's HTML is not a template's input)."""
    w = words()
    b = ctx.get("board")
    status = ctx.get("status")
    turn = 1 if b and (b["my_turn"] or b["setup_left"]) else 0
    oob = ' hx-swap-oob="true"' if ctx.get("oob") else ""
    error = ctx.get("error")
    parts = [
        f'<section id="table" class="table is-{esc(status)}"{oob} '
        f'data-version="{esc(ctx.get("version"))}" data-status="{esc(status)}" '
        f'data-turn="{turn}" data-turn-title="{w["your_turn"]}">'
    ]
    parts.append(f'<h1 class="sr-only">{heading(ctx, b, w)}</h1>')
    if error and not ctx.get("error_field"):
        parts.append(f'<p class="error" role="alert">{esc(error)}</p>')
    if status == "lobby":
        parts.append(inner)
    elif b:
        if ctx.get("me") is None:
            said = w["watching"] if status == "playing" else w["over"]
            home = esc(ctx["urls"]["home"])
            parts.append(
                f'<p class="panel muted">{said} '
                f'<a class="button quiet" href="{home}">{w["start_own"]}</a></p>'
            )
        parts.append(board_html(ctx, b, w))
    else:
        parts.append(f'<p class="panel">{w["closed"]}</p>')
    parts.append("</section>")
    return "\n".join(parts)


def heading(ctx, b: dict | None, w: dict) -> str:
    """The page's <h1>: the table's code and where it stands (inside #table, so that
    every push that swaps the section keeps it, and up to date)."""
    code = esc(ctx.get("code"))
    if ctx.get("status") == "lobby":
        return w["h_lobby"] % {"code": code}
    if not b:
        return w["h_closed"] % {"code": code}
    phase, number = b["phase"], b["round_number"]
    if phase == "game_over":
        return w["h_over"] % {"code": code}
    if phase == "round_over":
        return w["h_round_over"] % {"code": code, "round": number}
    game = ctx["table"].game_number
    if game > 1:
        return w["h_game_round"] % {"code": code, "game": game, "round": number}
    return w["h_round"] % {"code": code, "round": number}


def board_html(ctx, b: dict, w: dict) -> str:
    """One viewer's board: the push's shared pieces joined with the viewer's own."""
    memo = ctx.get("memo")
    if memo is None:
        memo = {}
    common = memo.get("board")
    if common is None:
        common = memo["board"] = _common(ctx, b, w)
    csrf = ctx.get("csrf")
    version = ctx.get("version")
    mine = b["me"]
    roundline = common["roundline"]
    if mine and b["show_totals"]:
        roundline = roundline.replace(
            "\0", f"<span>{w['your_total'] % {'total': mine['total']}}</span>"
        )
    else:
        roundline = roundline.replace("\0", "")
    opponents = b["opponents"]
    many = " many" if len(opponents) > 3 else ""
    boxes = "\n".join(map(HTML, opponents))
    out = [
        common["head"],
        f'<p class="banner tone-{b["banner"]["tone"]}" role="status">'
        f"{esc(b['banner']['text'])}</p>",
        common["away"],
        roundline,
        f'<div class="cols">\n<section class="opponents{many}" aria-label="{w["others"]}">'
        f'<h2 class="sr-only">{w["others"]}</h2>{boxes}\n</section>\n<div class="center">',
    ]
    if b["phase"] in ("setup", "play"):
        out.append(piles_html(b, ctx["urls"], csrf, version, memo, w))
    if mine and mine["grid"]:
        out.append(_mine_html(ctx, b, w, memo, csrf, version))
    if b["ranking"]:
        out.append(_results("partials/_game_results.html", ctx, b))
    if b["result"]:
        out.append(_results("partials/_round_results.html", ctx, b))
    out.append('</div>\n<div class="side-bottom">')
    out.append(common["log"])
    if b["playing"]:
        token = esc(csrf)
        out.append(common["reactions"].replace("\0", token))
        if b["phase"] != "game_over":
            out.append(common["leave"].replace("\0", token))
    out.append("</div>\n</div>\n</div>")
    return "\n".join(filter(None, out))  # C loops, not generators: per viewer, per push


def _common(ctx, b: dict, w: dict) -> dict[str, str]:
    """What every viewer of this push sees alike (the same snapshot, phase and language);
    "\0" marks where a viewer's own value goes."""
    table = ctx["table"]
    urls = ctx["urls"]
    game_number = table.game_number
    if game_number > 1:
        said = w["game_round"] % {"game": game_number, "round": b["round_number"]}
    else:
        said = w["round"] % {"number": b["round_number"]}
    to = w["to_score"] % {"score": b["rules"].end_score}
    away = ctx.get("away")
    countdown = ""
    if away:
        phrase = w["away_setup"] if away["setup"] else w["away_play"]
        said_away = phrase % {"name": esc(away["name"]), "seconds": away["html"]}
        countdown = f'<p class="countdown">{said_away}</p>'
    log = ""
    if b["log"]:
        lines = "".join(f"<li>{esc(line)}</li>" for line in b["log"])
        log = (
            f'<section class="log" aria-label="{w["recent"]}"><h2 class="sr-only">'
            f"{w['recent']}</h2>\n<ol>{lines}</ol>\n</section>"
        )
    return {
        "head": f'<div class="board phase-{b["phase"]}" '
        f'data-round="{game_number}-{b["round_number"]}">',
        "away": countdown,
        "roundline": f'<p class="roundline"><span>{said}</span>\0<span>{to}</span></p>',
        "log": log,
        **_forms(urls, w),
    }


def _forms(urls: dict, w: dict) -> dict[str, str]:
    """The reactions and leave forms of a table in one language (the same for every
    push of it: built once)."""
    key = (urls["react"], urls["leave"])
    return i18n.per_catalog(_FORMS, key, lambda: _build_forms(urls, w))


def _build_forms(urls: dict, w: dict) -> dict[str, str]:
    from app.web.reactions import choices  # reactions' views import the table's

    react = esc(urls["react"])
    # The emoji as character references: one character beyond U+FFFF makes Python keep
    # the whole board it is joined into at 4 bytes a character (every join, copy and the
    # UTF-8 encoding of each push then works on 4 times the bytes); the page shows the same.
    buttons = "".join(
        f'<button name="reaction" value="{key}" aria-label="{esc(label)}">'
        f"{emoji.encode('ascii', 'xmlcharrefreplace').decode()}</button>"
        for key, emoji, label in choices()
    )
    leave = esc(urls["leave"])
    return {
        # A named form is a form landmark (a <form> may not be a group).
        "reactions": f'<form method="post" action="{react}" hx-post="{react}" hx-swap="none" '
        f'class="reactions" aria-label="{w["reactions"]}">\n'
        f'<input type="hidden" name="csrf_token" value="\0">{buttons}</form>',
        "leave": f'<form method="post" action="{leave}" hx-post="{leave}" '
        f'hx-confirm="{w["leave_confirm"]}" class="leave">\n'
        f'<input type="hidden" name="csrf_token" value="\0">'
        f'<button class="small quiet">{w["leave"]}</button></form>',
    }


_FORMS: dict[tuple, tuple] = {}


def _mine_html(ctx, b: dict, w: dict, memo: dict, csrf, version) -> str:
    mine = b["me"]
    active = " active" if b["my_turn"] or b["setup_left"] else ""
    slot = memo.get("slots", {}).get(mine["id"], "")
    grid = my_grid_html(mine["grid"], w["your_grid"], ctx["urls"]["move"], version, csrf)
    showing = ""
    if b["show_totals"] and b["phase"] in ("setup", "play"):
        showing = "\n" + showing_html(w["face_up"], w["face_up_said"], mine["face_up"])
    return (
        f'<section class="mine-wrap{active}" aria-label="{w["your_grid"]}">\n'
        f'<h2 class="sr-only">{w["your_grid"]}</h2>\n{slot}\n{grid}{showing}\n</section>'
    )


def _results(name: str, ctx, b: dict) -> str:
    """The end of a round or game (a template: a few renderings per round)."""
    template = current_app.jinja_env.get_template(name)
    return template.render(
        b=b,
        code=ctx.get("code"),
        table=ctx.get("table"),
        me=ctx.get("me"),
        csrf=ctx.get("csrf"),
        version=ctx.get("version"),
        next_round_seconds=f"{tables.current().timing.next_round_seconds:g}",
        url_for=path_for,
    )


# What the piles show (piles_html reads nothing else of the board).
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
HTML = itemgetter("html")


def piles_html(b: dict, urls: dict, csrf, version, memo: dict, w: dict) -> str:
    """The piles and the turn's buttons. Built from their own inputs only, so every
    viewer whose turn it is not (no form: no token) shares one per push."""
    csrf = csrf if b["my_turn"] else None
    key = ("piles", PILES_OF(b), csrf, version)
    html = memo.get(key)
    if html is None:
        html = memo[key] = _piles(b, urls, csrf, version, w)
    return html


def _piles(p: dict, urls: dict, csrf, version, w: dict) -> str:
    move, show = esc(urls["move"]), esc(urls["show"])
    count, top, drawn = p["draw_count"], p["discard_top"], p["drawn"]

    token = _hidden(csrf, version)

    def form(kind: str, button: str) -> str:
        return (
            f'<form method="post" action="{move}" hx-post="{move}">{token}'
            f'<input type="hidden" name="type" value="{kind}">{button}</form>'
        )

    if p["can_draw"]:
        said = ngettext(
            "Draw a card from the draw pile (%(num)d left)",
            "Draw a card from the draw pile (%(num)d left)",
            count,
        )
        draw = form("draw", f'<button class="card back big" aria-label="{said}"></button>')
    else:
        said = ngettext("Draw pile, %(num)d card", "Draw pile, %(num)d cards", count)
        draw = f'<span class="card back big" role="img" aria-label="{said}"></span>'
    out = [
        f'<section class="piles" aria-label="{w["piles"]}">\n<div class="pile">',
        draw,
        f'<span class="cap">{w["draw_count"] % {"count": count}}</span>\n</div>',
        '<div class="pile">',
    ]
    if top is not None:
        tone = p["discard_tone"]
        if p["can_draw"]:
            out.append(
                f'<a class="card big v-{tone}" href="?mode=take" hx-get="{show}?mode=take" '
                f'aria-label="{w["take_top"] % {"card": top}}">{esc(top)}</a>'
            )
        else:
            lifted = " lifted" if p["mode"] == "take" else ""
            out.append(
                f'<span class="card big v-{tone}{lifted}" role="img" '
                f'aria-label="{w["discard_top"] % {"card": top}}">{esc(top)}</span>'
            )
    out.append(f'<span class="cap">{w["discard"]}</span>\n</div>')
    if drawn is not None:
        out.append(
            f'<div class="pile drawn">\n<span class="card big v-{p["drawn_tone"]} lifted" '
            f'role="img" aria-label="{w["your_drawn"] % {"card": drawn}}">{esc(drawn)}</span>'
            f'\n<span class="cap">{w["you_drew"]}</span>\n</div>'
        )
    elif p["someone_drew"]:
        out.append(
            '<div class="pile drawn"><span class="card big back lifted" role="img" '
            f'aria-label="{w["hidden_drawn"]}"></span><span class="cap">{w["drawn"]}</span></div>'
        )
    out.append('</section>\n<div class="actions">')
    if p["can_draw"]:
        out.append(form("draw", f'<button class="primary">{w["draw"]}</button>'))
        out.append(
            f'<a class="button" href="?mode=take" hx-get="{show}?mode=take">'
            f"{w['take'] % {'card': top}}</a>"
        )
    elif p["mode"]:
        said = w["keep"] if p["mode"] == "flip" else w["cancel"]
        out.append(f'<a class="button" href="{show}" hx-get="{show}">{said}</a>')
    elif drawn is not None:
        if p["face_down_left"]:
            out.append(
                f'<a class="button" href="?mode=flip" hx-get="{show}?mode=flip">'
                f"{w['discard_flip'] % {'card': drawn}}</a>"
            )
        else:
            said = w["discard_it"] % {"card": drawn}
            out.append(form("discard_drawn", f"<button>{said}</button>"))
    out.append("</div>")
    return "\n".join(out)

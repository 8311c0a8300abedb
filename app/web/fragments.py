"""The table's hottest HTML, built in Python rather than by templates: every card of
every grid, another player's box and the viewer's own grid are rendered for every push
(app.web.presenter decides what they show; nothing here reads a game). Values are
escaped and translations are trusted markup, as in the templates."""

from __future__ import annotations

from markupsafe import Markup, escape

from .. import i18n
from ..i18n import gettext as _


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


def card_html(cell: dict) -> Markup:
    """A card that is not a button, as the grids show it (the hottest bit of a push:
    built here rather than by a template macro)."""
    label = escape(cell["label"])
    if cell["state"] == "up":
        return Markup(
            f'<span class="card v-{cell["tone"]}" role="img" aria-label="{label}">'
            f"{int(cell['value'])}</span>"
        )
    kind = "back" if cell["state"] == "down" else "gone"
    return Markup(f'<span class="card {kind}" role="img" aria-label="{label}"></span>')


def grid_html(rows: list[list[dict]], label: str) -> Markup:
    """Another player's grid, without buttons: built once per grid state and label
    (`rows` are kept while the grid is unchanged, see `cells`), shown to all."""
    key = (id(rows), label)
    found = _GRIDS.get(key)
    if found is not None and found[0] is rows:
        return found[1]
    cards = "".join(cell["html"] for row in rows for cell in row)
    html = Markup(
        f'<div class="grid small" role="group" aria-label="{escape(label)}" '
        f'style="--cols:{len(rows[0])}">{cards}</div>'
    )
    if len(_GRIDS) >= _CELLS_MAX:
        _GRIDS.clear()
    _GRIDS[key] = (rows, html)  # keeps `rows` alive, so its id is not reused
    return html


_GRIDS: dict[tuple[int, str], tuple] = {}
_MINE: dict[tuple[int, str], tuple] = {}

# What another player's box shows (opponent_html reads nothing else of it).
BOX = ("name", "total", "bot", "forfeited", "present", "is_turn", "is_ender", "face_up")


def opponent_html(o: dict, slot: str, show_totals: bool, phase: str) -> Markup:
    """Another player's box as everyone else sees it, built once per state of the box
    and language (most boxes do not change from one push to the next); `slot` is their
    reaction slot."""
    key = (*(o[k] for k in BOX), o["grid_html"], slot, show_totals, phase)
    return i18n.per_catalog(_BOXES, key, lambda: _box(o, slot, show_totals, phase), _CELLS_MAX)


_BOXES: dict[tuple, tuple] = {}


def _box(o: dict, slot: str, show_totals: bool, phase: str) -> Markup:
    """Translations are trusted markup, values escaped, as in the templates."""
    classes = (" turn" if o["is_turn"] else "") + (" out" if o["forfeited"] else "")
    dot = " on" if o["present"] else ""
    total = ""
    if show_totals:
        said = Markup(_("total %(total)s")) % {"total": o["total"]}
        total = f' <span class="total" aria-label="{said}">{escape(o["total"])}</span>'
    tags = ""
    if o["bot"] or o["forfeited"] or o["is_ender"] or not o["present"]:
        tags = (
            '<p class="otags">'
            + (f'<span class="tag">{Markup(_("bot"))}</span> ' if o["bot"] else "")
            + (
                f'<span class="tag away">{Markup(_("away"))}</span> '
                if not o["present"] and not o["bot"]
                else ""
            )
            + (f'<span class="tag">{Markup(_("left"))}</span> ' if o["forfeited"] else "")
            + (f'<span class="tag ender">{Markup(_("ended"))}</span>' if o["is_ender"] else "")
            + "</p>"
        )
    showing = ""
    if show_totals and phase in ("setup", "play"):
        showing = Markup('<p class="showing">%s</p>') % (
            Markup(_("Face up: %(points)s")) % {"points": o["face_up"]}
        )
    return Markup(
        f'\n<article class="opponent{classes}">\n'
        f'<h3><span class="dot{dot}"></span><span class="oname">{escape(o["name"])}</span>'
        f"{total}</h3>\n{tags}\n{slot}\n{o['grid_html']}\n{showing}\n</article>"
    )


def cells(grid) -> list[list[dict]]:
    """A view's grid as cards to show: state, value, colour, spoken label and HTML.
    The view keeps a grid's rows while that grid is unchanged, so they are built once
    per grid state and language (the entries are shared: copy one to change it)."""
    t = i18n.catalog()
    key = (id(grid), id(t))
    found = _CELLS.get(key)
    if found is not None and found[0] is grid and found[1] is t:
        return found[2]
    rows = _cells(grid, t)
    if len(_CELLS) >= _CELLS_MAX:
        _CELLS.clear()
    _CELLS[key] = (grid, t, rows)  # keeps `grid` alive, so its id is not reused
    return rows


_CELLS: dict[tuple[int, int], tuple] = {}
_CELLS_MAX = 4096


def _cells(grid, t) -> list[list[dict]]:
    where_of = t.ugettext("Row %(row)s, column %(col)s")
    up, down, gone = (
        t.ugettext("%(where)s: %(card)s"),
        t.ugettext("%(where)s: face down"),
        t.ugettext("%(where)s: cleared"),
    )
    rows = []
    for r, row in enumerate(grid):
        out = []
        for c, cell in enumerate(row):
            where = where_of % {"row": r + 1, "col": c + 1}
            entry = {"row": r, "col": c, "state": cell["state"], "action": None}
            if cell["state"] == "up":
                entry["value"] = cell["value"]
                entry["tone"] = card_tone(cell["value"])
                entry["label"] = up % {"where": where, "card": cell["value"]}
            elif cell["state"] == "down":
                entry["label"] = down % {"where": where}
            else:
                entry["label"] = gone % {"where": where}
            entry["html"] = card_html(entry)
            out.append(entry)
        rows.append(out)
    return rows


def my_grid_html(rows: list[list[dict]], label: str, move_url: str, version, csrf: str) -> Markup:
    """The viewer's own grid: one form whose pressable cards are its buttons (the
    pressed card says its position), or plain cards when none can be pressed."""
    key = (id(rows), label)
    found = _MINE.get(key)
    if found is not None and found[0] is rows:
        return found[1]  # the same grid as the last push's, and no card to press
    kind = next((c["action"]["type"] for row in rows for c in row if c["action"]), None)
    cols = len(rows[0])
    if kind is None:
        cards = "".join(c["html"] for row in rows for c in row)
        html = Markup(
            f'<div class="grid mine" role="group" aria-label="{escape(label)}" '
            f'style="--cols:{cols}">{cards}</div>'
        )
        # Kept per grid state (`cells`), as another player's grid (`grid_html`).
        if len(_MINE) >= _CELLS_MAX:
            _MINE.clear()
        _MINE[key] = (rows, html)
        return html
    parts = []
    for row in rows:
        for c in row:
            if not c["action"]:
                parts.append(c["html"])
                continue
            up = c["state"] == "up"
            look = f"v-{c['tone']}" if up else "back"
            parts.append(
                f'<button class="card {look}" name="pos" value="{c["row"]}-{c["col"]}" '
                f'aria-label="{escape(c["action"]["verb"])}">{c["value"] if up else ""}</button>'
            )
    url = escape(move_url)
    return Markup(
        f'<form method="post" action="{url}" hx-post="{url}" class="grid mine act-{kind}" '
        f'role="group" aria-label="{escape(label)}" style="--cols:{cols}">\n'
        f'<input type="hidden" name="csrf_token" value="{escape(csrf)}">'
        f'<input type="hidden" name="version" value="{escape(version)}">'
        f'<input type="hidden" name="type" value="{kind}">{"".join(parts)}</form>'
    )

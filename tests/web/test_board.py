"""The board's templates (partials/_board.html, partials/_table.html through
app.web.board): its pieces kept by state, the viewer's own grid, and every value escaped
in a page, an htmx answer and a push."""

from __future__ import annotations

import random

from babel.support import NullTranslations

from app import i18n
from app.engine import PLAY, Draw, KeepDrawn
from app.web import board as board_html
from app.web.presenter import Shared, board
from tests.web.test_presenter import my_actions, new_game, play_to_turn, snapshot
from tests.web.web_helpers import Player, form_posting_to, parse, play_until, seat_of, seat_table
from tests.web.web_helpers import start as start_game


def box(shared: Shared, pid: str):
    return board_html.opponent_box(shared.opponent[pid], shared.cells[pid], "", True, PLAY)


def test_a_box_is_rendered_once_per_state_and_says_the_new_state(app):
    """Boxes are kept between pushes by their state: one move later the mover's box and
    grid, whose turn it is and the log say the new state."""
    with app.app_context(), i18n.bound(NullTranslations()):  # one catalog, as in a push
        game = new_game()
        turn = play_to_turn(game)
        first = Shared(snapshot(game), present={1, 2, 3})
        again = Shared(snapshot(game), present={1, 2, 3})
        for pid in first.opponent:  # the same state: the same markup, kept
            assert box(first, pid) is box(again, pid)
        game.apply(turn, Draw())
        game.apply(turn, KeepDrawn(0, 0))
        after = Shared(snapshot(game), present={1, 2, 3})
        html = box(after, turn)
        assert html != box(first, turn)
        value = after.cells[turn][0][0]["value"]
        assert f'aria-label="Row 1, column 1: {value}">{value}</span>' in html
        assert '<article class="opponent">' in html  # no longer their turn
        assert '<article class="opponent turn">' in box(after, game.round.turn)


def test_my_grid_makes_the_pressable_cards_buttons_of_one_form(app):
    game = new_game()
    turn = play_to_turn(game)
    game.apply(turn, Draw())
    snap = snapshot(game)
    me = next(s for s in snap.seats if s.player_id == turn)
    with app.app_context(), i18n.bound(NullTranslations()):
        parts = board_html.parts()
        b = board(Shared(snap, present=set()), me, "flip")
        mine = b["me"]
        cards = board_html.grid_cards(mine["grid"])
        cols = len(mine["grid"][0])
        html = str(parts.my_grid(cards, cols, mine["pressing"], "/t/T/move", 7, "t"))
        assert html.startswith('<form method="post" action="/t/T/move"')
        assert 'class="grid mine act-discard_drawn"' in html
        assert '<input type="hidden" name="version" value="7">' in html
        pressed = {f'value="{r}-{c}"' for _t, r, c in my_actions(b)}
        assert html.count("<button") == len(pressed) and all(p in html for p in pressed)
        # A face-down card, pressable or not, never shows its value.
        grid = game.round.grids[turn]
        for i, state in enumerate(grid.state):
            if state == "down":
                r, c = divmod(i, grid.cols)
                label = f"Turn this card over. Row {r + 1}, column {c + 1}: face down"
                assert f'value="{r}-{c}" aria-label="{label}"></button>' in html
        # Nothing to press: plain cards, no form.
        other = next(s for s in snap.seats if s.player_id != turn)
        theirs = board(Shared(snap, set()), other)["me"]
        assert theirs["pressing"] is None
        plain = parts.my_grid(board_html.grid_cards(theirs["grid"]), cols)
        assert plain.startswith('<div class="grid mine"') and "<button" not in plain


def test_a_players_forms_are_kept_per_token_and_carry_only_theirs(app):
    urls = {"react": "/t/T/react", "leave": "/t/T/leave"}
    with app.app_context(), i18n.bound(NullTranslations()):
        mine = board_html.viewer_forms(urls, "token-a", "", True)
        theirs = board_html.viewer_forms(urls, "token-b", "", True)
        assert mine.count('name="csrf_token" value="token-a"') == 2 and "token-b" not in mine
        assert theirs.count('name="csrf_token" value="token-b"') == 2 and "token-a" not in theirs
        assert board_html.viewer_forms(urls, "token-a", "", True) is mine  # kept
        over = board_html.viewer_forms(urls, "token-a", "", False)  # the game is over
        assert 'class="reactions"' in over and 'class="leave"' not in over


# Names a person may type (20 characters at most) that are markup.
NAMES = ("<img src onerror=a>", '"><script>b()')


def markup_of_names(html: str) -> list[str]:
    """Elements or attributes the names would make if they were not escaped."""
    doc = parse(html)
    found = [n.tag for n in doc.iter(templates=True) if "onerror" in n.attrs or n.tag == "img"]
    found += ["script: " + n.text() for n in doc.find_all("script") if "b()" in n.text()]
    return found


def test_names_that_are_markup_are_text_in_pages_answers_and_pushes(browser, sockets):
    people = seat_table(browser, NAMES, bots=("greedy",), rows=2, cols=2, end_score=10)
    code = people[0].code
    rng = random.Random(5)
    players = [Player(b, b.name, rng, htmx=i == 0) for i, b in enumerate(people)]
    seen = {"page": [], "answer": [], "push": []}
    for i, p in enumerate(players):
        p.on_html = lambda html, doc, i=i: seen["answer" if i == 0 else "page"].append(html)
        p.get()  # the session's CSRF token, as the socket carries it
        seat = seat_of(code, p.name)
        sockets(code, seat.id, p.b.csrf, seen["push"].append)
    sockets(code, None, "", seen["push"].append)  # a spectator
    start_game(people[0])
    while play_until(players) != "game_over":
        for p in players:
            form = form_posting_to(p.get(), "/next-round")
            if form is not None:
                p.submit(form)
    for p in players:
        p.get()
    for kind, htmls in seen.items():
        assert len(htmls) > 5, kind
        for html in htmls:
            assert markup_of_names(html) == [], (kind, html)
        # The names are shown, as text: in the boxes, the log and the results.
        shown = " ".join(parse(html).text() for html in htmls)
        assert all(name in shown for name in NAMES), kind
    # Each other player's box says their name (a push to each socket, the spectator's).
    boxes = {n.text() for html in seen["push"] for n in parse(html).find_all(cls="oname")}
    assert boxes >= set(NAMES)
    final = parse(players[1].b.page())
    ranked = [n.text() for n in final.find_all("span", cls="name")]
    assert set(NAMES) <= {r.removesuffix(" left").strip() for r in ranked}

"""The lesson in the web app (app.web.learn, the lesson's table at /t/<code>): starting,
the hints above the board in pages, answers and pushes, playing it through without
JavaScript by what the hints point at, skipping it, what follows it, and the offer on
the home page and to a newcomer at a table (once per device)."""

from __future__ import annotations

from app.storage.models import Entry, Rating, Result, Seat, Table
from app.tables.lesson import LEARNER_GRID, RULES
from tests.web.account_helpers import signup
from tests.web.web_helpers import form_data, game_of, move_form, parse, seat_table, start

OFFER = "New to Skymo?"


def start_lesson(b, name="Ann"):
    response = b.post("/learn", {"name": name})
    assert response.status_code == 303, response.data
    b.code = response.headers["Location"].rsplit("/", 1)[1]
    return response


def hint_of(doc) -> dict:
    box = doc.by_id("hint")
    assert box is not None and box.attrs.get("aria-live") == "polite"
    p = box.find("p")
    label = p.find("span", cls="sr-only").text()  # "Hint: ", for screen readers
    assert label == "Hint: " or not p.text().startswith("Hint")
    text = p.text()[len(label) :]
    return {"text": text, "point": p.attrs["data-point"], "cell": p.attrs["data-cell"]}


def seats_at(code) -> list[Seat]:
    return list(Seat.select().where((Seat.table == code) & (Seat.left == False)))  # noqa: E712


def test_the_lesson_page_asks_a_name_and_starts_a_lesson_table(browser):
    ann = browser()
    page = parse(ann.get("/learn").data)
    form = page.find("form", action="/learn")
    assert form.find("input", name="name") is not None
    assert form.find("button").text() == "Start the lesson"
    response = start_lesson(ann)
    assert "skymo-learned=1" in response.headers["Set-Cookie"]
    table = Table.get_by_id(ann.code)
    assert table.lesson and not table.public and table.chat is False
    assert table.status == Table.PLAYING and table.rules == RULES.to_dict()
    people = seats_at(ann.code)
    assert [(s.name, s.bot) for s in people] == [("Ann", None), ("Gobbler", "greedy")]
    game = game_of(ann.code)
    mine = game.round.grids[people[0].player_id]
    assert tuple(mine.values) == LEARNER_GRID  # the fixed deal
    assert game.round.setup_left[people[1].player_id] == 0  # the bot has turned its cards


def test_a_name_is_needed_and_nothing_is_created_without_one(browser):
    ann = browser()
    response = ann.post("/learn", {"name": "   "})
    assert response.status_code == 400
    doc = parse(response.data)
    assert doc.by_id("learn-name-error").text() == "Type a name."
    assert "skymo-learned" not in response.headers.get("Set-Cookie", "")
    assert Table.select().count() == 0


def test_the_name_is_prefilled_from_the_account(browser):
    ann = browser()
    signup(ann, "annie")
    page = parse(ann.get("/learn").data)
    assert page.by_id("learn-name").attrs["value"] == "annie"


def test_the_table_page_shows_the_hint_above_the_board_and_its_styles(browser):
    ann = browser()
    start_lesson(ann)
    html = ann.page()
    doc = parse(html)
    hint = hint_of(doc)
    assert hint["point"] == "grid" and hint["cell"] == "0-0"
    assert hint["text"].startswith("Welcome!")
    assert html.index('id="hint"') < html.index('id="live"')  # above the board
    assert "learn-1" in html and 'action="/learn/skip"' in html
    assert doc.find("span", cls="code") is None  # no table code to share at a lesson


def test_a_table_that_is_not_a_lesson_has_no_hint_and_no_lesson_styles(browser):
    ann = seat_table(browser, ["Ann"], bots=["greedy"])[0]
    start(ann)
    html = ann.page()
    assert parse(html).by_id("table").find("div", cls="board") is not None
    assert 'id="hint"' not in html and "learn-1" not in html and "/learn/skip" not in html


def test_an_answer_carries_the_new_hint_out_of_band_after_the_table(browser):
    ann = browser()
    start_lesson(ann)
    version = ann.version()
    response = ann.post(
        f"/t/{ann.code}/move", {"type": "reveal", "pos": "0-0", "version": version}, htmx=True
    )
    html = response.data.decode()
    assert response.status_code == 200
    doc = parse(html)
    box = doc.by_id("hint")
    assert box.attrs["hx-swap-oob"] == "innerHTML"
    assert html.index('id="table"') < html.index('id="hint"')
    assert 'id="table" tabindex="-1" class="table is-playing" data-version' in html  # swapped
    assert hint_of(doc) == {"text": "Turn over 1 more card.", "point": "grid", "cell": "2-0"}


def test_a_push_carries_the_hint_to_the_learners_socket(app, browser, sockets):
    ann = browser()
    start_lesson(ann)
    seat = seats_at(ann.code)[0]
    got = []
    sockets(ann.code, seat.id, "token", got.append)
    ann.move("reveal", (0, 0))
    pushed = "".join(got)
    assert 'hx-swap-oob="innerHTML"' in pushed and "Turn over 1 more card." in pushed


def follow(b, doc) -> bool:
    """Do what the page's hint points at, as a browser without JavaScript does (forms,
    and the `?mode=` links); False once the hint points at the results."""
    hint = hint_of(doc)
    point, cell = hint["point"], hint["cell"]
    if point == "next":
        return False
    if point in ("take", "flip"):
        mode = parse(b.get(f"/t/{b.code}?mode={point}").data)
        assert hint_of(mode)["point"] == "grid"  # the mode's page says which card
        assert hint_of(mode)["cell"] == cell or not cell
        doc = mode
    if point == "draw":
        form = move_form(doc, "draw")
        data = form_data(form)
    elif point == "discard":
        form = move_form(doc, "discard_drawn")
        data = form_data(form)
    else:
        form = doc.find("form", cls="mine")
        buttons = form.find_all("button")
        pressed = [x for x in buttons if x.attrs["value"] == cell] if cell else buttons
        assert pressed, f"no card {cell} to press for {hint}"
        data = form_data(form, pressed[0])
    response = b.post(form.attrs["action"], data)
    assert response.status_code == 303, response.data
    return True


def test_the_whole_lesson_plays_without_javascript_by_following_the_hints(browser):
    ann = browser()
    start_lesson(ann)
    said = []
    for _ in range(80):
        doc = parse(ann.page())
        said.append(hint_of(doc)["text"])
        if not follow(ann, doc):
            break
    game = game_of(ann.code)
    assert game.is_over and Table.get_by_id(ann.code).status == Table.FINISHED
    text = " ".join(said)
    assert "three equal cards in a column are cleared" in text  # the take that clears
    assert "Cleared! Three equal cards in a column leave the grid" in text  # and after it
    assert "You ended the round with the lowest score" in said[-1]
    assert game.ranking()[0]["player"] == seats_at(ann.code)[0].player_id
    results = parse(ann.page())
    forms = {f.attrs["action"] for f in results.find_all("form", cls="lesson-next")}
    buttons = [b.text() for b in results.find("form", cls="lesson-next").find_all("button")]
    assert forms == {"/learn/real-game"} and buttons == ["Play a real game", "Invite friends"]
    assert results.find("form", action=f"/t/{ann.code}/rematch") is None  # no rematch
    assert Result.select().count() == 0  # a lesson counts in no stats


def test_a_lesson_counts_in_no_stats_rating_or_reliability(browser):
    ann = browser()
    signup(ann, "annie")
    start_lesson(ann)
    for _ in range(80):
        if not follow(ann, parse(ann.page())):
            break
    assert game_of(ann.code).is_over
    assert (Result.select().count(), Rating.select().count(), Entry.select().count()) == (0, 0, 0)


def test_skipping_a_lesson_being_played_ends_it_and_goes_home(browser):
    ann = browser()
    start_lesson(ann)
    response = ann.post("/learn/skip", {"code": ann.code})
    assert response.status_code == 303 and response.headers["Location"] == "/"
    assert "skymo-learned=1" in response.headers["Set-Cookie"]
    table = Table.get_by_id(ann.code)
    assert table.status == Table.FINISHED
    assert game_of(ann.code).forfeited == [seats_at(ann.code)[0].player_id]


def test_skipping_names_no_table_of_anyone_else(browser):
    ann, bob = browser(), browser()
    start_lesson(ann)
    response = bob.post("/learn/skip", {"code": ann.code})  # not Bob's seat
    assert response.status_code == 303
    assert Table.get_by_id(ann.code).status == Table.PLAYING
    bob.post("/learn/skip", {"code": "../../x"})  # junk: ignored
    assert Table.get_by_id(ann.code).status == Table.PLAYING


def test_a_real_game_follows_the_lesson_with_bots_under_the_learners_name(browser):
    ann = browser()
    start_lesson(ann)
    lesson = ann.code
    response = ann.post("/learn/real-game", {"code": lesson})
    assert response.status_code == 303
    code = response.headers["Location"].rsplit("/", 1)[1]
    assert code != lesson
    table = Table.get_by_id(code)
    assert table.status == Table.PLAYING and not table.lesson
    assert [(s.name, s.bot is not None) for s in seats_at(code)] == [
        ("Ann", False),
        ("Gobbler", True),
        ("Grabby", True),
    ]
    ann.code = code
    assert parse(ann.page()).find("div", cls="board") is not None  # seated and playing


def test_invite_friends_opens_a_lobby_with_the_learner_as_host(browser):
    ann = browser()
    start_lesson(ann)
    response = ann.post("/learn/invite", {"code": ann.code})
    code = response.headers["Location"].rsplit("/", 1)[1]
    table = Table.get_by_id(code)
    assert table.status == Table.LOBBY and not table.lesson
    host = Seat.get_by_id(table.host_seat)
    assert host.name == "Ann" and [s.name for s in seats_at(code)] == ["Ann"]


def test_after_the_lesson_without_a_name_the_home_page_asks_for_one(browser):
    ann = browser()
    response = ann.post("/learn/invite", {"code": ""})
    assert response.status_code == 303 and response.headers["Location"] == "/"
    assert Table.select().count() == 0


def test_the_home_page_offers_the_lesson_until_the_device_starts_or_skips_it(browser):
    ann = browser()
    home = parse(ann.get("/").data)
    offer = home.find(cls="learn-offer")
    assert offer is not None and OFFER in offer.text()
    assert offer.find("a", href="/learn").text() == "Learn to play"
    ann.post("/learn/skip")
    later = parse(ann.get("/").data)
    assert later.find(cls="learn-offer") is None
    assert later.find("a", href="/learn") is not None  # still there when asked for

    bob = browser()
    start_lesson(bob, "Bob")
    assert parse(bob.get("/").data).find(cls="learn-offer") is None


def test_a_newcomer_at_a_table_is_offered_the_lesson_in_a_new_tab(browser):
    ann, bob = browser(), browser()
    ann.create("Ann")
    page = parse(bob.get(f"/t/{ann.code}").data)
    link = page.find("a", href="/learn")
    assert link is not None and link.attrs["target"] == "_blank"
    bob.post("/learn/skip")
    assert parse(bob.get(f"/t/{ann.code}").data).find("a", href="/learn") is None
    assert parse(ann.get(f"/t/{ann.code}").data).find("a", href="/learn") is None  # seated


def test_the_lesson_speaks_the_players_language(browser):
    ann = browser()
    ann.get("/?lang=fr")
    start_lesson(ann)
    hint = hint_of(parse(ann.page()))
    assert hint["text"].startswith("Bienvenue")

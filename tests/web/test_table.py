"""The table blueprint, a table's page and its lobby: GET /t/<code>, joining, the rules.

Every route at /t/<code>, with good and bad input, with and without htmx. Bad input must
change nothing: the Table row (status, version, rules, state, votes) and the seats are
compared before and after."""

from __future__ import annotations

from app.storage.models import Seat
from tests.web.table_helpers import GOOD_RULES, NOT_FOUND, error_text, is_partial, playing
from tests.web.web_helpers import (
    data_version,
    each,
    grid_form,
    parse,
    seat_of,
    seat_table,
    snapshot,
    start,
    table_row,
    whose_turn,
)


# ----- GET /t/<code> -----------------------------------------------------------------------
@each("htmx", [False, True])
def test_unknown_table_is_a_clear_404(client, htmx):
    headers = {"HX-Request": "true"} if htmx else {}
    response = client.get("/t/NOSUCH", headers=headers)
    assert response.status_code == 404
    doc = parse(response.data)
    assert doc.find("h1").text() == "Not found"
    assert doc.find("p", cls="error").text() == NOT_FOUND
    assert doc.find("a", href="/") is not None


def test_table_page_for_a_visitor(browser):
    (ann,) = seat_table(browser, ("Ann",))
    visitor = browser()
    response = visitor.get(f"/t/{ann.code.lower()}")
    assert response.status_code == 200
    doc = parse(response.data)
    assert f"Table {ann.code}" in doc.find("span", cls="code").text()
    live = doc.by_id("live")
    # Pushes in its language; the page's version (the table is sent on connect if newer).
    socket, page = live.attrs["ws-connect"].split("&p=")
    assert socket == f"/t/{ann.code}/ws?lang=en&v=0"
    # The page's id: its own htmx requests carry it, so their push skips its socket.
    assert live.attrs["hx-headers"] == '{"X-Skymo-Page": "' + page + '"}'
    assert doc.find("input", id="invite").attrs["value"] == f"http://localhost/t/{ann.code}"
    assert doc.find("svg") is not None  # the QR code of the invite link
    assert doc.find("form", action=f"/t/{ann.code}/join") is not None
    assert doc.by_id("rules-form") is None and doc.by_id("rules-summary") is not None
    assert doc.find("form", action=f"/t/{ann.code}/start") is None
    assert "Join to play" in doc.text()


def test_table_partial_for_htmx(browser):
    (ann,) = seat_table(browser, ("Ann",))
    response = ann.get(f"/t/{ann.code}", headers={"HX-Request": "true"})
    assert response.status_code == 200 and is_partial(response)
    doc = parse(response.data)
    assert data_version(doc) == table_row(ann.code).version


def test_mode_links_only_work_on_your_turn(browser):
    ann, bob = playing(browser)
    current, (other,) = whose_turn(ann.code, [ann, bob])
    take = parse(current.get(f"/t/{ann.code}?mode=take").data)
    assert grid_form(take).find("input", name="type").attrs["value"] == "take_discard"
    # The other player, or a mode that does not exist, gets the plain table.
    for b, query in ((other, "?mode=take"), (current, "?mode=flip"), (current, "?mode=x")):
        doc = parse(b.get(f"/t/{ann.code}{query}").data)
        assert grid_form(doc) is None


# ----- POST /t/<code>/join -------------------------------------------------------------------
def test_join_takes_a_seat_and_remembers_it(browser):
    (ann,) = seat_table(browser, ("Ann",))
    bob = browser()
    before = table_row(ann.code).version
    response = bob.join(ann.code, "Bob")
    assert response.status_code == 303
    assert response.headers["Location"].endswith(f"/t/{ann.code}")
    seat = seat_of(ann.code, "Bob")
    assert seat.position == 1 and seat.bot is None
    assert table_row(ann.code).version == before + 1
    doc = parse(bob.page())
    me = doc.by_id("seats").find("li", cls="me")
    assert "Bob" in me.text() and "you" in me.text()
    assert doc.by_id("join") is None
    assert "Waiting for the host" in doc.text()
    # The invite link opened again on the same device returns to the seat.
    again = bob.join(ann.code, "Robert")
    assert again.status_code == 303
    assert Seat.select().where(Seat.table == ann.code).count() == 2


def test_join_with_htmx_reloads_the_page(browser):
    (ann,) = seat_table(browser, ("Ann",))
    bob = browser()
    bob.get(f"/t/{ann.code}")
    response = bob.post(f"/t/{ann.code}/join", {"name": "Bob"}, htmx=True)
    assert response.status_code == 204
    assert response.headers["HX-Refresh"] == "true"
    assert seat_of(ann.code, "Bob").position == 1
    # Seated already: htmx gets the table back.
    again = bob.post(f"/t/{ann.code}/join", {"name": "Bob"}, htmx=True)
    assert again.status_code == 200 and is_partial(again)


@each(
    "name, message, status",
    [
        ("", "Type a name.", 400),
        ("    ", "Type a name.", 400),
        ("z" * 21, "A name has at most 20 characters.", 400),
        ("aNN", "aNN is already at this table: pick another name.", 400),
        (" ann ", "ann is already at this table: pick another name.", 400),
        ("tab\there\x07", "That name has characters we cannot show.", 400),
    ],
)
@each("htmx", [False, True])
def test_join_refuses_a_bad_name(browser, name, message, status, htmx):
    (ann,) = seat_table(browser, ("Ann",))
    bob = browser()
    bob.get(f"/t/{ann.code}")
    before = snapshot(ann.code)
    response = bob.post(f"/t/{ann.code}/join", {"name": name}, htmx=htmx)
    assert response.status_code == status
    assert is_partial(response) == htmx
    doc = parse(response.data)
    field = doc.find("input", id="join-name")
    assert field.attrs.get("aria-invalid") == "true"
    assert doc.by_id(field.attrs["aria-describedby"]).text() == message
    assert snapshot(ann.code) == before


def test_join_shows_a_html_name_escaped_to_everyone(browser):
    (ann,) = seat_table(browser, ("Ann",))
    eve = browser()
    assert eve.join(ann.code, "<script>x").status_code == 303
    assert seat_of(ann.code, "<script>x").position == 1
    for page in (ann.page(), eve.page()):
        assert "&lt;script&gt;x" in page
        assert "<script>x" not in page
        doc = parse(page)
        assert all(s.attrs.get("src") for s in doc.find_all("script"))


def test_join_a_full_table(browser):
    people = seat_table(browser, ("P1", "P2", "P3", "P4"), bots=("random",) * 4)
    code = people[0].code
    late = browser()
    doc = parse(late.get(f"/t/{code}").data)
    assert "This table is full." in doc.by_id("join").text()
    assert doc.find("form", action=f"/t/{code}/join") is None
    before = snapshot(code)
    for htmx in (False, True):
        response = late.post(f"/t/{code}/join", {"name": "Late"}, htmx=htmx)
        assert response.status_code == 409
        assert "This table is full." in error_text(response)
        assert is_partial(response) == htmx
    assert snapshot(code) == before


def test_join_a_started_table(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    start(ann)
    cat = browser()
    before = snapshot(ann.code)
    response = cat.join(ann.code, "Cat")
    assert response.status_code == 409
    assert "This game has already started: you can watch it." in error_text(response)
    assert snapshot(ann.code) == before
    # A spectator sees the game, without a seat.
    doc = parse(cat.page())
    assert doc.find("div", cls="board") is not None
    assert doc.find("section", cls="mine-wrap") is None


def test_join_an_unknown_table(browser):
    bob = browser()
    response = bob.join("NOSUCH", "Bob")
    assert response.status_code == 404
    assert NOT_FOUND in error_text(response)


# ----- POST /t/<code>/rules ------------------------------------------------------------------
@each("htmx", [False, True])
def test_host_sets_the_rules(browser, htmx):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    before = table_row(ann.code).version
    response = ann.post(f"/t/{ann.code}/rules", GOOD_RULES, htmx=htmx)
    if htmx:
        assert response.status_code == 200 and is_partial(response)
        assert data_version(parse(response.data)) == before + 1
    else:
        assert response.status_code == 303
        assert response.headers["Location"].endswith(f"/t/{ann.code}")
    table = table_row(ann.code)
    assert table.version == before + 1 and table.public is True
    assert table.rules == {
        "rows": 2,
        "cols": 3,
        "initial_flips": 1,
        "end_score": 50,
        "clear_rows": True,
        "penalty": {"mode": "both", "multiplier": 3, "flat": 20},
        "show_running_score": False,
        "reseat": "round",
    }
    # The guest sees a summary; the host's form shows the stored values.
    summary = parse(bob.page()).by_id("rules-summary").text()
    for shown in ("50", "2 rows × 3 columns", "×3 then +20", "hidden until the end"):
        assert shown in summary
    assert "shuffled every round" in summary
    form = parse(ann.page()).by_id("rules-form")
    assert form.find("input", name="end_score").attrs["value"] == "50"
    assert "checked" in form.find("input", name="clear_rows").attrs
    assert "checked" not in form.find("input", name="show_running_score").attrs


BAD_RULES = {
    "end_score": ["9", "1001", "fifty", "12.5"],
    "rows": ["1", "4", "x"],
    "cols": ["1", "5", "2c"],
    "initial_flips": ["-1", "5", "two"],
    "penalty_multiplier": ["1", "6", "x2"],
    "penalty_flat": ["0", "51", "ten"],
    "penalty_mode": ["triple"],
    "reseat": ["always"],
}


@each("field", BAD_RULES)
def test_bad_rule_values_change_nothing(browser, field):
    (ann,) = seat_table(browser, ("Ann",))
    before = snapshot(ann.code)
    for value in BAD_RULES[field]:
        for htmx in (False, True):
            case = f"{field}={value!r} htmx={htmx}"
            response = ann.post(f"/t/{ann.code}/rules", {**GOOD_RULES, field: value}, htmx=htmx)
            assert 400 <= response.status_code < 500, case
            assert is_partial(response) == htmx, case
            doc = parse(response.data)
            control = doc.find(name=field)
            box = control.ancestor("field")
            errors = box.find_all(cls="error")
            assert len(errors) == 1 and errors[0].text().strip(), case
            assert doc.find_all(cls="error") == errors, case  # one message, by its field
            if control.tag == "input":
                assert control.attrs.get("aria-invalid") == "true", case
                assert control.attrs["value"] == value, case  # kept, to be corrected
            assert snapshot(ann.code) == before, case


def test_initial_flips_must_be_fewer_than_the_cards(browser):
    (ann,) = seat_table(browser, ("Ann",))
    before = snapshot(ann.code)
    form = {**GOOD_RULES, "rows": "2", "cols": "2", "initial_flips": "4"}
    response = ann.post(f"/t/{ann.code}/rules", form)
    assert response.status_code == 400
    doc = parse(response.data)
    box = doc.find("input", name="initial_flips").ancestor("field")
    assert "Cards turned at the start must be from 0 to 3" in box.find(cls="error").text()
    assert snapshot(ann.code) == before


def test_rules_by_a_guest_or_a_spectator_are_refused(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    watcher = browser()
    watcher.get(f"/t/{ann.code}")
    before = snapshot(ann.code)
    for who in (bob, watcher):
        for htmx in (False, True):
            response = who.post(f"/t/{ann.code}/rules", GOOD_RULES, htmx=htmx)
            assert response.status_code == 403
            assert "Only the host can do that." in error_text(response)
            assert is_partial(response) == htmx
    assert snapshot(ann.code) == before


def test_rules_after_the_start_are_refused(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    start(ann)
    before = snapshot(ann.code)
    response = ann.post(f"/t/{ann.code}/rules", GOOD_RULES)
    assert response.status_code == 409
    assert "The game has already started." in error_text(response)
    assert snapshot(ann.code) == before

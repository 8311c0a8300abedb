"""The lobby blueprint: home, public tables, rules page, creating and finding a table."""

from __future__ import annotations

from pathlib import Path

from app import tables
from app.engine.rules import BOUNDS
from app.storage.models import Seat, Table
from tests.web.web_helpers import each, parse, seat_table, start

ROOT = Path(__file__).resolve().parents[2]


def count_tables() -> int:
    return Table.select().count()


# ----- GET / -----------------------------------------------------------------------------
def test_home_offers_create_and_join_forms(browser):
    ann = browser()
    response = ann.get("/")
    assert response.status_code == 200
    doc = parse(response.data)
    create = doc.find("form", action="/tables")
    assert create is not None and create.attrs["method"] == "post"
    assert create.find("input", name="csrf_token").attrs["value"] == ann.csrf
    assert create.find("input", name="name") is not None
    join = doc.find("form", action="/join")
    assert join.attrs["method"] == "get" and join.find("input", name="code") is not None
    assert "No public table is waiting" in doc.text()


def test_home_prefills_the_name_used_before(browser):
    ann = browser()
    ann.create("Ann")
    doc = parse(ann.get("/").data)
    assert doc.find("input", name="name").attrs["value"] == "Ann"


def test_security_headers_on_pages(client):
    response = client.get("/")
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Referrer-Policy"] == "same-origin"


def test_the_rules_form_states_the_ranges_the_rules_enforce(browser):
    host = browser()
    code = host.create("Ann")
    form = parse(host.get(f"/t/{code}").data).by_id("rules-form")
    for name, (low, high) in {
        **BOUNDS,
        "grace_seconds": tables.GRACE_RANGE,
        "rejoin_seconds": tables.REJOIN_RANGE,
    }.items():
        field = form.find("input", name=name.replace(".", "_"))
        assert (field.attrs["min"], field.attrs["max"]) == (str(low), str(high)), name
        assert f"{low}–" in field.parent.text()


# ----- GET /public -------------------------------------------------------------------------
def test_public_list_shows_only_open_public_lobbies(browser, client):
    listed = browser()
    listed_code = listed.create("Lisa", public="on")
    hidden = browser()
    hidden_code = hidden.create("Henry")
    started = seat_table(browser, ("Stan", "Sue"))
    started[0].post(
        f"/t/{started[0].code}/rules",
        {"end_score": "100", "show_running_score": "on", "public": "on"},
    )
    start(started[0])

    response = client.get("/public")
    assert response.status_code == 200
    body = response.data.decode()
    doc = parse(body)
    box = doc.by_id("public-tables")
    assert box is not None and box.attrs["hx-get"] == "/public"
    assert "<html" not in body  # a partial, for htmx polling
    links = [a.attrs["href"] for a in box.find_all("a")]
    assert links == [f"/t/{listed_code}"]
    assert "Lisa's table" in box.text() and "1/8 seats" in box.text()
    assert hidden_code not in body and started[0].code not in body
    # The home page shows the same list.
    assert f"/t/{listed_code}" in client.get("/").data.decode()


def test_public_list_drops_a_full_table(browser, client):
    host = browser()
    code = host.create("Hope", public="on")
    assert code in client.get("/public").data.decode()
    for _ in range(7):
        assert host.post(f"/t/{code}/bots", {"bot": "random"}).status_code == 303
    assert code not in client.get("/public").data.decode()


def test_public_list_escapes_the_host_name(browser, client):
    host = browser()
    host.create("<b>Bo</b>", public="on")
    body = client.get("/public").data.decode()
    assert "&lt;b&gt;Bo&lt;/b&gt;'s table" in body
    assert "<b>Bo</b>" not in body


# ----- GET /rules --------------------------------------------------------------------------
def test_rules_page(client):
    response = client.get("/rules")
    assert response.status_code == 200
    text = parse(response.data).text()
    assert "How to play Skymo" in text
    assert "Take the discard" in text and "Draw" in text


def test_rules_page_shows_the_rules_written_in_docs(client):
    """The page is docs/rules.md rendered: every heading, the options table, no raw
    Markdown left over."""
    source = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    doc = parse(client.get("/rules").data)
    headings = [line.lstrip("# ").strip() for line in source.splitlines() if line[:2] == "##"]
    assert len(headings) >= 6
    assert [h.text().strip() for h in doc.find_all("h2")] == headings
    table = doc.find("table")
    assert table is not None and "row clears" in table.text()
    assert "**" not in doc.text() and "|---" not in doc.text()


# ----- POST /tables ------------------------------------------------------------------------
def test_create_redirects_to_the_new_table_with_a_seat(browser):
    ann = browser()
    response = ann.post("/tables", {"name": "  Ann   Lee "})
    assert response.status_code == 303
    code = response.headers["Location"].rsplit("/", 1)[1]
    assert response.headers["Location"].endswith(f"/t/{code}")
    table = Table.get(Table.code == code)
    assert table.status == Table.LOBBY and table.public is False and table.version == 0
    (seat,) = Seat.select().where(Seat.table == table)
    assert seat.name == "Ann Lee"  # trimmed, runs of spaces folded
    assert table.host_seat == seat.id
    ann.code = code
    doc = parse(ann.page())
    me = doc.by_id("seats").find("li", cls="me")
    assert "Ann Lee" in me.text() and "host" in me.text() and "you" in me.text()
    assert doc.by_id("rules-form") is not None  # the host edits the rules


def test_create_public_table(browser):
    ann = browser()
    code = ann.create("Ann", public="on")
    assert Table.get(Table.code == code).public is True


@each(
    "name, message",
    [
        ("", "Type a name."),
        ("   \t ", "Type a name."),
        ("x" * 21, "A name has at most 20 characters."),
        ("bad\x01name", "That name has characters we cannot show."),
        ("bad\x7fname", "That name has characters we cannot show."),  # DEL
        ("bad\x9bname", "That name has characters we cannot show."),  # a C1 control
    ],
)
def test_create_refuses_a_bad_name(browser, name, message):
    ann = browser()
    before = count_tables()
    response = ann.post("/tables", {"name": name})
    assert response.status_code == 400
    doc = parse(response.data)
    field = doc.find("input", name="name")
    assert field.attrs.get("aria-invalid") == "true"
    error = doc.by_id(field.attrs["aria-describedby"])
    assert error.text() == message
    assert count_tables() == before


def test_create_accepts_twenty_characters(browser):
    ann = browser()
    code = ann.create("y" * 20)
    assert Seat.get(Seat.table == code).name == "y" * 20


FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # one character seen


def test_names_are_counted_as_a_person_sees_characters(browser):
    """An emoji family is 7 code points (11 UTF-16 units) but one character: 20 of them
    are a name, 21 are not, as the page counts them (Intl.Segmenter)."""
    ann = browser()
    code = ann.create(FAMILY * 20)
    assert Seat.get(Seat.table == code).name == FAMILY * 20
    response = browser().post("/tables", {"name": FAMILY * 21})
    assert response.status_code == 400
    assert "A name has at most 20 characters." in response.data.decode()
    # What one such character can hide is bounded too (200 code points in all).
    response = browser().post("/tables", {"name": "e" + "\u0301" * 250})
    assert response.status_code == 400
    # The page checks with the same limit.
    field = parse(ann.get("/").data).find("input", name="name")
    assert field.attrs["data-graphemes"] == "20" and "maxlength" not in field.attrs


def test_create_without_a_name_field(browser):
    ann = browser()
    ann.get("/")
    response = ann.client.post("/tables", data={"csrf_token": ann.csrf})
    assert response.status_code == 400
    assert "Type a name." in response.data.decode()


def test_create_shows_a_html_name_escaped(browser):
    ann = browser()
    ann.create("<i>Eve</i>")
    page = ann.page()
    assert "&lt;i&gt;Eve&lt;/i&gt;" in page
    assert "<i>Eve</i>" not in page


@each("token", [None, "forged"])
def test_create_needs_the_csrf_token(browser, token):
    ann = browser()
    ann.get("/")
    before = count_tables()
    data = {"name": "Ann"}
    if token:
        data["csrf_token"] = token
    response = ann.client.post("/tables", data=data)
    assert response.status_code == 400
    assert "This form has expired" in response.data.decode()
    assert count_tables() == before


def test_create_with_a_fresh_browser_and_no_session_is_refused(client):
    response = client.post("/tables", data={"name": "Ann", "csrf_token": "anything"})
    assert response.status_code == 400
    assert count_tables() == 0


# ----- GET /join?code= --------------------------------------------------------------------------
def test_join_by_code_redirects_to_the_table(browser, client):
    ann = browser()
    code = ann.create("Ann")
    messy = f" {code[:3].lower()}-{code[3:].lower()} "
    response = client.get("/join", query_string={"code": messy})
    assert response.status_code == 303
    assert response.headers["Location"].endswith(f"/t/{code}")


def test_join_by_code_without_a_code_goes_home(client):
    response = client.get("/join", query_string={"code": "  -- "})
    assert response.status_code == 303
    assert response.headers["Location"].endswith("/")
    assert client.get("/join").status_code == 303


def test_join_by_unknown_code_says_so(client):
    response = client.get("/join", query_string={"code": "ZZZZZZ"})
    assert response.status_code == 404
    doc = parse(response.data)
    field = doc.find("input", id="code")
    assert field.attrs.get("aria-invalid") == "true"
    assert doc.by_id("code-error").text() == "There is no table with that code."


def test_join_by_code_of_a_closed_table(browser, client):
    ann = browser()
    code = ann.create("Ann")
    seat = Seat.get(Seat.table == code)
    # The only person leaves the lobby: the table closes.
    assert ann.post(f"/t/{code}/seats/{seat.id}/remove").status_code == 303
    assert Table.get(Table.code == code).status == Table.CLOSED
    response = client.get("/join", query_string={"code": code})
    assert response.status_code == 404
    assert "There is no table with that code." in response.data.decode()

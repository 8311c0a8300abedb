"""The table chat on the page (app/web/chat.py): seated players write, spectators read,
messages are pushed out of band to every socket (never the whole #table), each viewer
may mute a player, anyone may report a message, the host may turn the chat off; every
refusal says why and stores nothing; names and words are never markup."""

from __future__ import annotations

import pytest

from app.features import chat as chat_feature
from app.live.hub import Connection
from app.storage.models import ChatMessage, ChatReport
from tests.web.web_helpers import form_data, parse, seat_of, seat_table, start

XSS = ["<img src=x onerror=alert(1)>", '"><script>alert(1)</script>']


@pytest.fixture(autouse=True)
def fresh_limits():
    chat_feature._sent.clear()
    yield
    chat_feature._sent.clear()


@pytest.fixture
def table(browser, sockets):
    """Ann (host) and Bob seated, a spectator, and a socket for each."""
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    watcher = browser()
    watcher.code = ann.code
    watcher.page()
    got = {"Ann": [], "Bob": [], "watcher": []}
    for name, b in (("Ann", ann), ("Bob", bob)):
        b.page()
        sockets(ann.code, seat_of(ann.code, name).id, b.csrf, got[name].append)
    sockets(ann.code, None, watcher.csrf, got["watcher"].append)
    return ann, bob, watcher, got


def say(who, text=None, htmx=True, **extra):
    data = {"text": text} if text is not None else {}
    return who.post(f"/t/{who.code}/chat", {**data, **extra}, htmx=htmx)


def line_text(li) -> str:
    """A line as read: the sender and the words (not the report button's flag)."""
    return f"{li.find(cls='chat-who').text()} {li.find(cls='chat-words').text()}"


def log_lines(html) -> list[str]:
    log = parse(html).by_id("chat-log")
    return [line_text(li) for li in log.find_all("li")] if log else []


def stored() -> list[tuple]:
    return [(m.text, m.phrase) for m in ChatMessage.select().order_by(ChatMessage.id)]


def test_a_message_is_stored_and_pushed_out_of_band_to_every_socket(table):
    ann, bob, watcher, got = table
    response = say(ann, "  hello\tthere  ")
    assert response.status_code == 200
    compose = parse(response.data).by_id("chat-compose")
    assert compose is not None and compose.find("input", id="chat-text").attrs["value"] == ""
    assert stored() == [("hello there", None)]
    for name in got:
        (push,) = got[name]  # one fragment, not the table
        doc = parse(push)
        assert doc.by_id("table") is None
        ol = doc.find("ol")
        assert ol.attrs["hx-swap-oob"] == "beforeend:#chat-log"
        (li,) = ol.find_all("li")
        assert line_text(li) == "Ann: hello there"
        assert "seat-c0" in li.classes
        said = doc.by_id("chat-said")
        assert said.attrs["hx-swap-oob"] == "innerHTML" and said.text() == "Ann: hello there"
        # Everyone but the sender may report it.
        assert (li.find("form", cls="chat-report") is None) == (name == "Ann")
    # Pages show it too, with Bob's colour for Bob.
    say(bob, "hi Ann")
    assert log_lines(watcher.page()) == ["Ann: hello there", "Bob: hi Ann"]
    assert "seat-c1" in parse(ann.page()).by_id("chat-log").find_all("li")[1].classes


def test_the_chat_sits_outside_the_table_and_inside_the_live_region(table):
    ann, *_ = table
    doc = parse(ann.page())
    live = doc.by_id("live")
    chat = doc.by_id("chat")
    assert chat.ancestor("chat") is None and chat in live.iter()
    assert chat not in doc.by_id("table").iter()
    region = doc.by_id("chat-said")
    assert region.attrs["aria-live"] == "polite"
    assert region.ancestor("chat-fold") is None  # heard while the chat is folded
    assert doc.find("details", cls="chat-fold").find("summary").text().startswith("Chat")


def test_without_javascript_a_message_posts_and_comes_back_to_the_open_chat(table):
    ann, bob, watcher, got = table
    response = say(ann, "no script here", htmx=False)
    assert response.status_code == 303
    assert response.headers["Location"].endswith(f"/t/{ann.code}?chat=1#chat")
    page = ann.get(f"/t/{ann.code}?chat=1").data
    assert "open" in parse(page).find("details", cls="chat-fold").attrs
    assert log_lines(page) == ["Ann: no script here"]
    assert "open" not in parse(ann.page()).find("details", cls="chat-fold").attrs
    # A form built from the page works as a browser would send it.
    form = parse(bob.page()).find("form", cls="chat-phrases")
    button = form.find("button", value="good_game")
    assert bob.post(form.attrs["action"], form_data(form, button)).status_code == 303
    assert log_lines(watcher.page())[-1] == "Bob: Good game!"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Type a message: it was empty."),
        ("   \n\t ", "Type a message: it was empty."),
        ("\u202e\u2066\u0007\u200f\u0000", "Type a message: it was empty."),
        ("x" * 201, "A message has at most 200 characters."),
    ],
)
def test_a_refused_message_says_why_and_stores_nothing(table, text, message):
    ann, bob, watcher, got = table
    response = say(ann, text)
    assert response.status_code == 400
    doc = parse(response.data)
    assert doc.by_id("chat-error").text() == message
    assert doc.by_id("chat-text").attrs["aria-invalid"] == "true"
    assert stored() == [] and got == {"Ann": [], "Bob": [], "watcher": []}
    # Without JavaScript: the whole page, the chat open, the error beside the field.
    page = say(ann, text, htmx=False)
    assert page.status_code == 400
    doc = parse(page.data)
    assert doc.by_id("chat-error").text() == message
    assert "open" in doc.find("details", cls="chat-fold").attrs
    assert stored() == []


def test_controls_and_direction_overrides_are_stripped_before_storing(table):
    ann, *_ = table
    emoji = "\N{WOMAN}\N{ZERO WIDTH JOINER}\N{GIRL}"  # one character as a person sees it
    assert say(ann, "a\u202eb\u2067c\u0008d\u200ee\x7ff " + emoji * 190).status_code == 200
    assert stored() == [("abcdef " + emoji * 190, None)]
    assert say(ann, emoji * 201).status_code == 400


def test_spectators_read_but_cannot_write(table):
    ann, bob, watcher, got = table
    say(ann, "hello")
    doc = parse(watcher.page())
    assert log_lines(watcher.page()) == ["Ann: hello"]
    assert doc.by_id("chat-compose") is None
    assert "you can read along" in doc.by_id("chat").text()
    response = say(watcher, "let me in")
    assert response.status_code == 403
    assert "Only the players at this table can write in its chat." in response.data.decode()
    assert say(watcher, phrase="good_game").status_code == 403
    assert stored() == [("hello", None)]


def test_quick_phrases_are_sent_as_keys_and_read_in_each_language(app, hub, table):
    ann, bob, watcher, got = table
    heard = {"fr": [], "de": []}
    conns = [
        Connection(ann.code, None, watcher.csrf, got.append, locale=lang)
        for lang, got in heard.items()
    ]
    with app.app_context():
        for conn in conns:
            hub.add(conn)
    try:
        assert say(bob, phrase="one_more").status_code == 200
    finally:
        with app.app_context():
            for conn in conns:
                hub.remove(conn)
    assert stored() == [(None, "one_more")]
    words = {
        lang: parse(push).find("span", cls="chat-words").text()
        for lang, (push,) in [*heard.items(), ("en", got["Ann"])]
    }
    assert words == {"fr": "On en refait une\u00a0?", "de": "Noch eine?", "en": "One more?"}
    french = parse(watcher.get(f"/t/{ann.code}?lang=fr").data)
    assert french.find("span", cls="chat-words").text() == "On en refait une\u00a0?"
    response = say(bob, phrase="<b>free</b>")
    assert response.status_code == 400
    assert "Choose one of the quick phrases." in response.data.decode()


def test_five_messages_in_ten_seconds_then_slow_down(table):
    ann, bob, watcher, got = table
    for n in range(5):
        assert say(ann, f"m{n}").status_code == 200
    response = say(ann, "one too many")
    assert response.status_code == 429
    assert "Slow down: at most 5 messages in 10 seconds." in response.data.decode()
    assert len(stored()) == 5 and len(got["Bob"]) == 5
    assert say(bob, "my own allowance").status_code == 200
    page = say(ann, "again", htmx=False)
    assert page.status_code == 429 and "Slow down" in page.data.decode()


def test_a_viewer_mutes_a_player_on_pages_and_pushes_then_unmutes(table):
    ann, bob, watcher, got = table
    say(ann, "before")
    ann_seat = seat_of(ann.code, "Ann").id
    form = next(
        f for f in parse(bob.page()).find_all("form") if f.attrs.get("action", "").endswith("/mute")
    )
    button = form.find("button")
    assert button.text() == "Mute Ann" and button.attrs["value"] == str(ann_seat)
    response = bob.post(form.attrs["action"], form_data(form, button), htmx=True)
    assert response.status_code == 200
    doc = parse(response.data)
    assert doc.by_id("chat") is not None and log_lines(response.data) == []
    assert doc.find("div", cls="chat-mutes").find("button").text() == "Unmute Ann"
    say(ann, "muted now")
    assert len(got["Bob"]) == 1 and len(got["watcher"]) == 2  # only Bob muted her
    assert log_lines(bob.page()) == [] and len(log_lines(watcher.page())) == 2
    # Without JavaScript: unmute, back to the open chat, her messages shown again.
    unmute = bob.post(form.attrs["action"], {"unmute": ann_seat})
    assert unmute.status_code == 303
    assert log_lines(bob.page()) == ["Ann: before", "Ann: muted now"]
    say(ann, "heard again")
    assert len(got["Bob"]) == 2 and "heard again" in got["Bob"][-1]
    # Nobody else's sockets were touched; a seat not at the table is refused.
    bad = bob.post(form.attrs["action"], {"mute": "999"}, htmx=True)
    assert bad.status_code == 404 and "That player is not at this table." in bad.data.decode()


def test_the_host_turns_the_chat_off_in_the_rules(table):
    ann, bob, watcher, got = table
    say(bob, "hello")
    rules = parse(ann.page()).find("select", id="r-chat")
    assert [o.attrs["value"] for o in rules.find_all("option")] == ["on", "off"]
    bad = ann.post(f"/t/{ann.code}/rules", {"chat": "maybe"}, htmx=True)
    assert bad.status_code == 400
    assert "Chat: that value is not one of the choices." in bad.data.decode()
    assert ann.post(f"/t/{ann.code}/rules", {"chat": "off"}).status_code == 303
    response = say(bob, "still there?")
    assert response.status_code == 403
    assert "The host has turned the chat off at this table." in response.data.decode()
    doc = parse(bob.page())
    assert doc.by_id("chat-log") is None and doc.by_id("chat-compose") is None
    assert "turned the chat off" in doc.by_id("chat").text()
    assert stored() == [("hello", None)]
    # Starting with the rules form as it stands keeps the setting.
    form = parse(ann.page()).find("form", id="rules")
    data = form_data(form) | {"chat": "off", "version": ann.version()}
    assert ann.post(f"/t/{ann.code}/start", data).status_code == 303
    assert say(bob, "in game").status_code == 403
    assert ann.post(f"/t/{ann.code}/rules", {"chat": "on"}).status_code == 409  # started


def test_a_report_is_kept_once_per_reporter(table):
    ann, bob, watcher, got = table
    say(ann, "rude words")
    (line,) = ChatMessage.select()
    url = f"/t/{ann.code}/chat/{line.id}/report"
    for _ in range(2):
        response = watcher.post(url, htmx=True)
        assert response.status_code == 200 and "Reported" in response.data.decode()
    assert bob.post(url).status_code == 303  # without JavaScript
    reports = list(ChatReport.select().order_by(ChatReport.id))
    assert [(r.text, r.sender, r.table_code, r.message_id) for r in reports] == [
        ("rude words", "Ann", ann.code, line.id)
    ] * 2
    assert reports[1].reporter == f"s{seat_of(ann.code, 'Bob').id}"
    assert reports[0].reporter.startswith("v")
    # The page says it was reported, to that reporter only.
    assert parse(watcher.page()).find("span", cls="chat-reported") is not None
    assert parse(ann.page()).find("span", cls="chat-reported") is None
    missing = watcher.post(f"/t/{ann.code}/chat/99999/report", htmx=True)
    assert missing.status_code == 404
    assert watcher.post(f"/t/{ann.code}/chat/nope/report").status_code == 404


@pytest.mark.parametrize("payload", XSS)
def test_words_and_names_are_never_markup(browser, sockets, payload):
    name = '"><script>x' if payload.startswith('"') else "<img src=x>"
    ann, bob = seat_table(browser, (name, "Bob"))
    got = []
    bob.page()
    sockets(ann.code, seat_of(ann.code, "Bob").id, bob.csrf, got.append)
    assert say(ann, payload).status_code == 200
    refused = say(ann, payload + "x" * 200)  # the refused text comes back in the field
    assert refused.status_code == 400
    say(ann, phrase="oops")
    for html in (bob.page(), got[0], refused.data.decode()):
        for raw in ("<script>", "<img src=x", '"><script', "onerror=alert(1)>"):
            assert raw not in html
    doc = parse(got[0])
    assert doc.find("span", cls="chat-words").text() == payload
    assert doc.find("span", cls="chat-who").text() == f"{name}:"
    assert parse(refused.data).by_id("chat-text").attrs["value"] == payload + "x" * 200
    doc = parse(bob.page())
    assert [s.text() for s in doc.find_all("span", cls="chat-words")] == [payload, "Oops!"]
    assert doc.find("form", cls="chat-report").find("button").attrs["aria-label"] == (
        f"Report this message from {name}"
    )


def test_links_are_not_made_clickable(table):
    ann, bob, *_ = table
    say(ann, "see https://example.com/x?y=1")
    chat = parse(bob.page()).by_id("chat")
    assert chat.find("a") is None
    assert "https://example.com/x?y=1" in chat.text()


def test_in_a_game_a_message_leaves_the_table_alone(browser, sockets):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    start(ann)
    got = []
    bob.page()
    conn = sockets(ann.code, seat_of(ann.code, "Bob").id, bob.csrf, got.append)
    conn.sent_version = int(bob.version())  # the page shows the table now
    got.clear()
    assert say(ann, "good luck").status_code == 200
    (push,) = got
    assert parse(push).by_id("table") is None and "good luck" in push
    assert conn.sent_version == int(bob.version())  # the table is not sent again
    # The page of a finished or playing table shows the chat beside the board.
    doc = parse(bob.page())
    assert doc.by_id("table").find(cls="board") is not None
    assert log_lines(bob.page()) == ["Ann: good luck"]

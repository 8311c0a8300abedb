"""The chat's rules (app/features/chat.py, app.tables.validation.clean_message): what is
stripped, the rate limit, who may write, chat off, reports counted once."""

from __future__ import annotations

import pytest

from app import tables
from app.features import chat
from app.storage import chat as rows
from app.storage.models import ChatMessage, ChatReport, Table
from app.tables.validation import clean_message, parse_chat


@pytest.fixture
def ctx(app):
    with app.test_request_context():
        yield


@pytest.fixture
def seated(ctx):
    chat._sent.clear()
    table, ann = tables.create_table("Ann")
    bob = tables.join(table.code, "Bob")
    yield Table.get_by_id(table.code), ann, bob
    chat._sent.clear()


@pytest.mark.parametrize(
    ("typed", "kept"),
    [
        ("  hi  there ", "hi there"),
        ("line\none\r\ntwo\tthree", "line one two three"),
        ("\u202eevil\u202c name", "evil name"),
        ("\u2066iso\u2069late \u200e\u200fmarks\u061c", "isolate marks"),
        ("bell\x07 null\x00 del\x7f c1\x85\x9b", "bell null del c1"),
        ("<b>kept as text</b>", "<b>kept as text</b>"),
        ("caf\u00e9 \N{PARTY POPPER}", "caf\u00e9 \N{PARTY POPPER}"),
    ],
)
def test_controls_and_bidi_characters_are_stripped(ctx, typed, kept):
    assert clean_message(typed) == kept


@pytest.mark.parametrize("typed", ["", "   ", "\u202e\u202c", "\x00\x01\x1f", None, ["list"]])
def test_nothing_left_is_refused_with_a_clear_message(ctx, typed):
    with pytest.raises(tables.TableError) as refused:
        clean_message(typed)
    assert refused.value.message == "Type a message: it was empty."
    assert refused.value.field == "text"


def test_length_counts_characters_as_a_person_sees_them(ctx):
    family = "\N{MAN}\N{ZERO WIDTH JOINER}\N{WOMAN}\N{ZERO WIDTH JOINER}\N{GIRL}"
    assert clean_message(family * 200) == family * 200  # 200 characters seen, 1000 code points
    with pytest.raises(tables.TableError, match="at most 200 characters"):
        clean_message("a" * 201)
    with pytest.raises(tables.TableError):
        clean_message(family * 201)


def test_five_messages_per_ten_seconds_per_seat():
    chat._sent.clear()
    now = 1_000_000.0
    assert all(chat.allowed("T", 1, now + i) for i in range(5))
    assert not chat.allowed("T", 1, now + 5)
    assert chat.allowed("T", 2, now + 5)  # another seat
    assert chat.allowed("U", 1, now + 5)  # the same seat id at another table
    assert not chat.allowed("T", 1, now + 9.9)
    assert chat.allowed("T", 1, now + 10)  # the first left the window
    assert not chat.allowed("T", 1, now + 10.5)
    chat._sent.clear()


def test_a_refused_message_is_not_counted_nor_stored(seated):
    table, ann, bob = seated
    for n in range(5):
        chat.post(table, ann, f"m{n}", None, now=100.0)
    with pytest.raises(tables.TableError) as refused:
        chat.post(table, ann, "sixth", None, now=101.0)
    assert refused.value.status == 429 and refused.value.message.startswith("Slow down: ")
    with pytest.raises(tables.TableError):
        chat.post(table, bob, "   ", None, now=101.0)  # empty: not counted for Bob
    for n in range(5):
        chat.post(table, bob, f"b{n}", None, now=101.0)
    assert ChatMessage.select().count() == 10


def test_spectators_and_a_closed_chat_store_nothing(seated):
    table, ann, bob = seated
    with pytest.raises(tables.TableError) as refused:
        chat.post(table, None, "hello", None)
    assert refused.value.status == 403
    table.chat = False
    with pytest.raises(tables.TableError) as refused:
        chat.post(table, ann, "hello", None)
    assert refused.value.message == "The host has turned the chat off at this table."
    assert ChatMessage.select().count() == 0
    assert parse_chat({}, False) is False and parse_chat({"chat": "on"}, False) is True
    with pytest.raises(tables.TableError):
        parse_chat({"chat": "yes"}, True)


def test_a_phrase_is_stored_as_its_key_and_reported_in_english(seated):
    table, ann, bob = seated
    line = chat.post(table, ann, "ignored when a phrase is sent", "well_played")
    assert (line.text, line.phrase) == (None, "well_played")
    assert chat.report(table.code, line.id, "s2", None) is True
    assert chat.report(table.code, str(line.id), "s2", None) is False  # idempotent
    assert chat.report(table.code, line.id, "vabc", None) is True
    assert [r.text for r in ChatReport.select()] == ["Well played!"] * 2
    assert rows.reported_by(table.code, "s2") == {line.id}
    for bad in ("x", "-1", "0", str(2**70), line.id + 1):
        with pytest.raises(tables.TableError) as refused:
            chat.report(table.code, bad, "s2", None)
        assert refused.value.status == 404
    with pytest.raises(tables.TableError):
        chat.report("OTHER1", line.id, "s2", None)  # not that table's message

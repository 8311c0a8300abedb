"""The chat's rows (app/storage/chat.py, models ChatMessage and ChatReport): kept in the
database for the table's life (a new app on the same database shows them), gone with
the table or the account, reports kept for the operator; the schema migration that adds
the host's setting to a stored database alters no row."""

from __future__ import annotations

from app import create_app
from app.storage import chat
from app.storage.models import ChatMessage, ChatReport, Seat, Table, User, db
from tests.web.account_helpers import PASSWORD, cheap_hashing, make_user, signin  # noqa: F401
from tests.web.web_helpers import parse, seat_of, seat_table


def say(who, text):
    return who.post(f"/t/{who.code}/chat", {"text": text}, htmx=True)


def words(html) -> list[str]:
    return [s.text() for s in parse(html).find_all("span", cls="chat-words")]


def test_messages_survive_a_new_app_on_the_same_database(app, browser, database_url):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    assert say(ann, "first").status_code == 200
    assert say(bob, "second").status_code == 200
    db.close_all()
    again = create_app(
        {"TESTING": True, "SECRET_KEY": "test", "DATABASE_URL": database_url, "INLINE_BOTS": True}
    )
    client = again.test_client()
    html = client.get(f"/t/{ann.code}").data.decode()
    assert words(html) == ["first", "second"]
    with again.app_context():
        assert [(line.name, line.position) for line in chat.lines(ann.code)] == [
            ("Ann", 0),
            ("Bob", 1),
        ]


def test_a_closed_tables_messages_go_and_its_reports_stay(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    say(bob, "bye")
    (message,) = ChatMessage.select()
    ann.post(f"/t/{ann.code}/chat/{message.id}/report")
    # Everyone leaves the lobby: the table closes.
    for who in (bob, ann):
        seat = seat_of(ann.code, who.name)
        assert who.post(f"/t/{ann.code}/seats/{seat.id}/remove").status_code == 303
    assert Table.get_by_id(ann.code).status == Table.CLOSED
    assert ChatMessage.select().count() == 0
    (report,) = ChatReport.select()
    assert (report.text, report.sender, report.table_code) == ("bye", "Bob", ann.code)


def test_deleting_a_table_row_deletes_its_messages(browser):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    say(ann, "hello")
    assert ChatMessage.select().count() == 1
    Table.delete().where(Table.code == ann.code).execute()  # foreign keys cascade
    assert ChatMessage.select().count() == 0 and Seat.select().count() == 0


def test_deleting_an_account_deletes_its_messages_and_keeps_its_reports_nameless(browser):
    make_user("ann")
    ann, bob = browser(), browser()
    signin(ann, "ann")
    ann.code = ann.create("Ann")
    bob.join(ann.code, "Bob")
    say(bob, "from bob")
    say(ann, "from ann")
    bob_line = ChatMessage.get(ChatMessage.text == "from bob")
    ann.post(f"/t/{ann.code}/chat/{bob_line.id}/report")
    (report,) = ChatReport.select()
    assert report.reporter_user_id == User.get().id
    response = ann.post("/account/delete", {"delete_password": PASSWORD})
    assert response.status_code == 200
    assert [m.text for m in ChatMessage.select()] == ["from bob"]
    (report,) = ChatReport.select()
    assert report.reporter_user_id is None and not report.reporter.startswith(("u", "s"))
    assert report.text == "from bob"
    assert words(bob.page()) == ["from bob"]


def test_a_stored_database_gains_the_chat_setting_and_keeps_its_rows(app, browser, database_url):
    ann, bob = seat_table(browser, ("Ann", "Bob"))
    with db.connection_context():  # as the database was before the setting
        db.execute_sql('ALTER TABLE "table" DROP COLUMN chat')
    db.close_all()
    again = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": database_url})
    with again.app_context():
        row = Table.get_by_id(ann.code)
        assert row.chat is None and chat.chat_open(row)  # from before: open
        assert Seat.select().where(Seat.table == ann.code).count() == 2
    client = again.test_client()
    assert parse(client.get(f"/t/{ann.code}").data).by_id("chat-log") is not None

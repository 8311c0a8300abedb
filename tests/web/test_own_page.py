"""A move's own page is not pushed the table its answer carries: the page's socket and
its htmx requests carry the page's id, and the push of a change that page's request
made skips exactly that socket. Another tab of the same player, the other players and a
page without the id (no JavaScript) still get every push."""

from __future__ import annotations

import re

from flask import request

from app import tables
from app.live.hub import Connection
from app.web import render
from tests.web.web_helpers import seat_of, seat_table, start, whose_turn


def page_id(person) -> str:
    """The id a table page gives its socket (`?p=`) and its requests (a header)."""
    page = person.page()
    socket = re.search(r'ws-connect="[^"]*&amp;p=([\w-]+)"', page).group(1)
    header = re.search(r'"X-Skymo-Page": "([\w-]+)"', page).group(1)
    assert socket == header
    return socket


def sockets(hub, code: str, person, pages: list[str]) -> list[list[str]]:
    """One socket per page of `person`, each keeping the pushes it gets."""
    seat = seat_of(code, person.name).id
    got = [[] for _ in pages]
    for page, pushes in zip(pages, got, strict=True):
        hub.add(Connection(code, seat, person.csrf, pushes.append, page=page))
    return got


def htmx_move(person, page: str | None):
    headers = {"X-Skymo-Page": page} if page else {}
    data = {"type": "draw", "version": person.version(), "csrf_token": person.csrf}
    return person.post(f"/t/{person.code}/move", data, htmx=True, headers=headers)


def test_the_movers_page_gets_its_answer_and_no_push_their_other_tab_gets_the_push(hub, browser):
    people = seat_table(browser, initial_flips=0)
    start(people[0])
    code = people[0].code
    mover, (other,) = whose_turn(code, people)
    first, second = page_id(mover), page_id(mover)
    assert first != second  # every page load has its own
    (own, other_tab), (theirs,) = (
        sockets(hub, code, mover, [first, second]),
        sockets(hub, code, other, [""]),
    )
    try:
        answer = htmx_move(mover, first)
        assert answer.status_code == 200
        version = mover.version()
        assert f'data-version="{version}"' in answer.get_data(as_text=True)
        assert own == []  # its answer is the table: not sent twice
        assert len(other_tab) == 1 and f'data-version="{version}"' in other_tab[0]
        assert len(theirs) == 1 and f'data-version="{version}"' in theirs[0]
        # Nothing older reaches the page after its answer.
        conn = next(c for c in hub.connections(code) if c.page == first)
        assert conn.sent_version == int(version)
    finally:
        for conn in hub.connections(code):
            hub.remove(conn)


def test_a_page_is_pushed_the_change_of_a_request_without_its_id_or_of_someone_else(hub, browser):
    people = seat_table(browser, initial_flips=0)
    start(people[0])
    code = people[0].code
    mover, (other,) = whose_turn(code, people)
    (own,) = sockets(hub, code, mover, [page_id(mover)])
    other_page = page_id(other)
    (theirs,) = sockets(hub, code, other, [other_page])
    try:
        # Someone else's page id (another session) does not silence that page.
        assert htmx_move(mover, other_page).status_code == 200
        assert len(theirs) == 1
        # The mover's own page, whose id the request did not carry, is pushed as before.
        assert len(own) == 1
    finally:
        for conn in hub.connections(code):
            hub.remove(conn)


def test_another_process_skips_the_answered_page_without_drawing_it(app, browser, monkeypatch):
    """The process that did not make the change (app.cluster.fanout: no answer is made there)
    neither sends the answered page the table nor draws that page's HTML."""
    people = seat_table(browser, initial_flips=0)
    start(people[0])
    code = people[0].code
    mover, (other,) = whose_turn(code, people)
    page = page_id(mover)
    seat = seat_of(code, mover.name).id
    own, theirs = [], []
    conns = [
        Connection(code, seat, mover.csrf, own.append, page=page),
        Connection(code, seat_of(code, other.name).id, other.csrf, theirs.append),
    ]
    drawn = []
    real = render.table_html
    monkeypatch.setattr(render, "table_html", lambda ctx: drawn.append(ctx["me"]) or real(ctx))
    snap = tables.store.current(code)
    with app.test_request_context():
        request.environ[render.PUSHED] = None  # as app.cluster.fanout.Fanout._drain sets it
        request.environ[render.ANSWERED] = (page, render.token_digest(mover.csrf))
        version, out = render.render_push(code, conns, "table", snap)
    assert [conn for conn, _ in out] == [conns[1]]
    assert [me.id for me in drawn] == [conns[1].seat_id]
    assert conns[0].sent_version == version  # its page has this version as its answer

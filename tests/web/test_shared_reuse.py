"""What every viewer of a table version sees alike (app.web.render.shared_part) is built
once per table, version and language, then reused by the pages and htmx answers that
show that version (the `?mode=` links after a push): rebuilt whenever what it shows
changes (a move, someone's presence, a reaction, the language)."""

from __future__ import annotations

import pytest

from app import tables
from app.storage.models import Table
from app.web import reactions, render
from tests.web.web_helpers import parse, seat_of, seat_table, start, whose_turn

HX = {"HX-Request": "true"}


@pytest.fixture
def built(monkeypatch):
    """The shared parts built from scratch, counted."""
    made = []
    real = render.Shared

    def counted(snap, present, previous=None, marks=None):
        made.append(snap.version)
        return real(snap, present, previous, marks)

    monkeypatch.setattr(render, "Shared", counted)
    render._SHARED.clear()
    reactions._shown.clear()
    reactions._sent.clear()
    return made


def mode_page(person, mode):
    response = person.get(f"/t/{person.code}?mode={mode}", headers=HX)
    assert response.status_code == 200
    return parse(response.data.decode())


def test_mode_links_of_one_version_reuse_its_shared_part(browser, built):
    ann, bob = seat_table(browser, ("Ann", "Bob"), initial_flips=0)
    start(ann)
    mover, (other,) = whose_turn(ann.code, [ann, bob])
    built.clear()
    first = mode_page(mover, "take")
    assert len(built) == 1
    again = mode_page(mover, "take")
    watching = mode_page(other, "take")  # no take for them: their board as it is
    assert len(built) == 1  # the same version: built once
    assert first.by_id("table").text() == again.by_id("table").text()
    assert watching.by_id("table") is not None
    version = int(first.by_id("table").attrs["data-version"])
    response = mover.post(f"/t/{mover.code}/move", {"type": "draw", "version": version}, htmx=True)
    assert response.status_code == 200
    assert len(built) == 2  # a new version: built anew
    mode_page(mover, "flip")
    assert len(built) == 2


def test_a_reaction_after_a_page_shows_in_the_next_one(browser, built):
    ann, bob = seat_table(browser, ("Ann", "Bob"), initial_flips=0)
    start(ann)
    mode_page(ann, "take")
    built.clear()
    assert ann.post(f"/t/{ann.code}/react", {"reaction": "party"}, htmx=True).status_code == 204
    ann_id = seat_of(ann.code, "Ann").player_id
    doc = mode_page(bob, "take")
    assert doc.by_id(f"reaction-{ann_id}").find("span", cls="reaction") is not None
    assert len(built) == 1  # rebuilt: a reaction is shown now


def test_each_language_has_its_own_shared_part(browser, built):
    ann, bob = seat_table(browser, ("Ann", "Bob"), initial_flips=0)
    start(ann)
    built.clear()
    english = mode_page(ann, "take")
    french = parse(ann.get(f"/t/{ann.code}?mode=take&lang=fr", headers=HX).data.decode())
    assert len(built) == 2
    assert english.find("section", cls="opponents").attrs["aria-label"] == "Other players"
    assert french.find("section", cls="opponents").attrs["aria-label"] != "Other players"


def test_a_shared_part_goes_when_its_table_idles_or_closes(browser, built, monkeypatch):
    ann, bob = seat_table(browser, ("Ann", "Bob"), initial_flips=0)
    start(ann)
    mode_page(ann, "take")
    assert {code for code, _ in render._SHARED} == {ann.code}
    # Kept no longer than the store keeps the table's game: an idle table's goes at the
    # next sweep (a minute after the last one at most).
    later = render.time.monotonic() + tables.store.IDLE_SECONDS + 61
    monkeypatch.setattr(render.time, "monotonic", lambda: later)
    other, _ = seat_table(browser, ("Cat", "Dan"), initial_flips=0)
    start(other)
    mode_page(other, "take")
    assert {code for code, _ in render._SHARED} == {other.code}
    # A table that closes (a finished table nobody came back to) leaves nothing behind.
    monkeypatch.undo()
    snap = tables.store.current(other.code)
    snap.table.status = Table.CLOSED
    render._keep(snap, (object(), (), None))
    assert not render._SHARED

"""The push socket against a real server process: what one player does reaches the
others' sockets as an out-of-band #table, and a (re)connect gets the table at once."""

from __future__ import annotations

import json
import re
import sqlite3
import time

import pytest
import websocket

from app.engine import Game
from app.features.outcome import a
from tests.conftest import ROOT
from tests.web.web_helpers import LiveBrowser, parse


def receive(ws, until: float = 2.0) -> str:
    """The next text message within `until` seconds (fails the test otherwise)."""
    ws.settimeout(until)
    try:
        return ws.recv()
    except websocket.WebSocketTimeoutException:
        pytest.fail(f"no message within {until} s")


def receive_table(ws, version: int | None = None, until: float = 2.0):
    """The next pushed #table (at `version` if given), skipping other pushes."""
    deadline = time.monotonic() + until
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            pytest.fail(f"no #table at version {version} within {until} s")
        doc = parse(receive(ws, left))
        table = doc.by_id("table")
        if table is None:
            continue
        assert table.attrs.get("hx-swap-oob") == "true"
        if version is None or int(table.attrs["data-version"]) == version:
            return doc


def stored_game(server, code: str) -> tuple[Game, int]:
    with sqlite3.connect(server.tmp / "skymo.db") as db:
        state, version = db.execute(
            'select state, version from "table" where code = ?', (code,)
        ).fetchone()
    return Game.from_dict(json.loads(state)), version


def first_card(doc, label: str):
    grid = doc.find(cls="grid", aria_label=label)
    return [n for n in grid.iter() if "card" in n.classes][0]


def test_a_move_reaches_the_other_players_socket(live_server):
    ann, bob = LiveBrowser(live_server.url), LiveBrowser(live_server.url)
    code = ann.create("Ann")
    ann_ws = ann.socket()
    try:
        # On connect: the current table at once, as an out-of-band swap.
        doc = receive_table(ann_ws)
        assert doc.by_id("table").attrs["data-version"] == "0"
        assert "Ann" in doc.text()

        bob.join(code, "Bob")
        # Ann's lobby is told about Bob (the seats list, out of band).
        deadline = time.monotonic() + 2
        while True:
            doc = parse(receive(ann_ws, max(0.05, deadline - time.monotonic())))
            seats = doc.by_id("seats")
            if seats is not None and "Bob" in seats.text():
                assert seats.attrs["hx-swap-oob"] == "true"
                break

        bob_ws = bob.socket()
        try:
            doc = receive_table(bob_ws)
            assert "Waiting for the host" in doc.text()
            status, _ = ann.post(f"/t/{code}/start", {"version": ann.version()})
            assert status == 303
            game, version = stored_game(live_server, code)
            doc = receive_table(bob_ws, version)
            assert doc.find("div", cls="board") is not None
            assert first_card(doc, "Ann's grid").attrs["aria-label"].endswith("face down")

            # Ann turns her first card: Bob sees its value on Ann's grid within 2 s.
            status, _ = ann.post(
                f"/t/{code}/move", {"type": "reveal", "pos": "0-0", "version": str(version)}
            )
            assert status == 303
            game, version = stored_game(live_server, code)
            value = game.round.grids[game.players[0].id].values[0]
            started = time.monotonic()
            doc = receive_table(bob_ws, version)
            assert time.monotonic() - started < 2
            card = first_card(doc, "Ann's grid")
            assert card.text() == str(value)
            assert card.attrs["aria-label"] == f"Row 1, column 1: {value}"
            assert f"Ann turned over {a(value)}" in doc.text()
            # Ann's own socket got her own view of the same version.
            mine = receive_table(ann_ws, version)
            assert first_card(mine, "Your grid").text() == str(value)

            # Reconnecting gets the present table at once.
            bob_ws.close()
            bob_ws = bob.socket()
            doc = receive_table(bob_ws, version, until=1.0)
            assert first_card(doc, "Ann's grid").text() == str(value)
        finally:
            bob_ws.close()
    finally:
        ann_ws.close()


def test_a_page_that_shows_the_present_table_is_not_sent_it_again(live_server):
    """The page puts its version on the socket's URL (`?v=`): a socket that connects
    late does not reset the page (an unfolded form, a name being typed) with the same
    table; an older version gets the table at once; later changes are pushed."""
    ann = LiveBrowser(live_server.url)
    code = ann.create("Ann")
    page = ann.get(f"/t/{code}")
    version = int(parse(page).by_id("table").attrs["data-version"])
    assert f"/ws?lang=en&amp;v={version}" in page
    current = ann.socket(query=f"?lang=en&v={version}")
    older = ann.socket(query=f"?lang=en&v={version - 1}")
    try:
        receive_table(older, version)
        # Only small pushes may come (who is online), never the table.
        current.settimeout(0.5)
        with pytest.raises(websocket.WebSocketTimeoutException):
            while True:
                assert 'id="table"' not in current.recv()
        LiveBrowser(live_server.url).join(code, "Bob")
        deadline = time.monotonic() + 3
        while "Bob" not in receive(current, deadline - time.monotonic()):
            pass  # the change is pushed
    finally:
        current.close()
        older.close()


def test_a_socket_to_an_unknown_table_is_closed(live_server):
    visitor = LiveBrowser(live_server.url)
    visitor.get("/")
    visitor.code = "NOSUCH"
    ws = visitor.socket()
    try:
        opcode, data = ws.recv_data(control_frame=True)
        assert opcode == websocket.ABNF.OPCODE_CLOSE
        assert int.from_bytes(data[:2], "big") == 1008
    finally:
        ws.close()


def test_a_socket_offered_compression_agrees_none_and_its_pushes_read_plain(live_server):
    """Browsers offer permessage-deflate: the server agrees to no extension (a kept
    compressor was ~256 KB per socket), and the table it pushes is plain text."""
    ann = LiveBrowser(live_server.url)
    ann.create("Ann")
    url = live_server.url.replace("http://", "ws://") + f"/t/{ann.code}/ws"
    ws = websocket.create_connection(
        url,
        cookie=ann.cookie_header(),
        origin=live_server.url,
        header=["Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits"],
        timeout=2,
    )
    try:
        assert "sec-websocket-extensions" not in ws.getheaders()
        # websocket-client refuses a compressed frame (RSV1): this reads a plain one.
        doc = receive_table(ws)
        assert "Ann" in doc.text()
    finally:
        ws.close()


def test_pushes_made_by_timers_carry_relative_form_urls(live_server):
    """A bot's move is pushed by the scheduler, outside any request: its forms must
    still point at this site's paths (they once came out as http://hosthttp://host/)."""
    ann = LiveBrowser(live_server.url)
    code = ann.create("Ann")
    assert ann.post(f"/t/{code}/rules", {"initial_flips": "0"})[0] == 303
    assert ann.post(f"/t/{code}/bots", {"bot": "greedy"})[0] == 303
    ws = ann.socket()
    try:
        assert ann.post(f"/t/{code}/start", {"version": ann.version()})[0] == 303
        game, version = stored_game(live_server, code)
        if game.round.turn == game.players[0].id:  # Ann first: her turn, then the bot's
            for form in ({"type": "draw"}, {"type": "keep_drawn", "pos": "0-0"}):
                assert ann.post(f"/t/{code}/move", {**form, "version": str(version)})[0] == 303
                version += 1
        doc = receive_table(ws, version + 1, until=5.0)  # the bot's move, from the timer
    finally:
        ws.close()
    attrs = ("action", "formaction", "hx-post", "hx-get")
    urls = [n.attrs[a] for n in doc.iter() for a in attrs if a in n.attrs]
    assert urls and all(u.startswith("/t/") for u in urls), urls


def test_both_ends_notice_a_dead_socket_within_10_seconds(app):
    """The server closes a socket whose ping goes unanswered for one interval (so within
    two); the page counts its socket dead after QUIET ms without a message, and the
    server speaks at least every heartbeat (an empty message when nothing happens)."""
    ping = app.config["SOCK_SERVER_OPTIONS"]["ping_interval"]
    heartbeat = app.config["SOCKET_HEARTBEAT"]
    script = (ROOT / "static" / "skymo-1.js").read_text()
    quiet = int(re.search(r"const QUIET = (\d+);", script).group(1)) / 1000
    check = int(re.search(r"\}, (\d+)\);\n\n  function update", script).group(1)) / 1000
    assert 2 * ping <= 10
    assert heartbeat * 1.5 <= quiet  # a late heartbeat is not taken for a dead socket
    assert quiet + check <= 10

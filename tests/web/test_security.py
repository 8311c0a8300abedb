"""Cookies, the secret key, and who the push socket talks to."""

from __future__ import annotations

import re
import stat

import pytest
import websocket

from app import create_app
from tests.web.web_helpers import LiveBrowser, parse


def same_secret(token: str, other: str) -> bool:
    """Two CSRF tokens of the same session: Flask-WTF signs the session's secret with a
    timestamp, so the tokens differ from second to second but carry the same payload."""
    return token.split(".")[0] == other.split(".")[0]


def session_cookie(response) -> str:
    cookies = [c for c in response.headers.getlist("Set-Cookie") if c.startswith("session=")]
    assert len(cookies) == 1, response.headers.getlist("Set-Cookie")
    return cookies[0]


def test_session_cookie_is_httponly_and_lax(browser):
    ann = browser()
    ann.get("/")
    response = ann.post("/tables", {"name": "Ann"})
    assert response.status_code == 303
    cookie = session_cookie(response)
    assert "HttpOnly" in cookie
    assert re.search(r"SameSite=Lax", cookie)
    assert "Secure" not in cookie  # plain http on a local game
    assert "Expires=" in cookie  # kept across browser restarts: the seat comes back


def make_app(tmp_path, monkeypatch, *, env_key=None, secure=False, folder="instance"):
    instance = tmp_path / folder
    monkeypatch.setenv("SKYMO_INSTANCE_PATH", str(instance))
    if env_key is None:
        monkeypatch.delenv("SKYMO_SECRET_KEY", raising=False)
    else:
        monkeypatch.setenv("SKYMO_SECRET_KEY", env_key)
    if secure:
        monkeypatch.setenv("SKYMO_SECURE_COOKIES", "1")
    else:
        monkeypatch.delenv("SKYMO_SECURE_COOKIES", raising=False)
    app = create_app(
        {"TESTING": True, "DATABASE_URL": f"sqlite:///{tmp_path / 'keys.db'}", "INLINE_BOTS": True}
    )
    return app, instance


def test_secure_cookies_when_asked(tmp_path, monkeypatch):
    app, _ = make_app(tmp_path, monkeypatch, env_key="k", secure=True)
    client = app.test_client()
    client.get("/")
    token = re.search(rb'name="csrf_token" value="([^"]+)"', client.get("/").data).group(1)
    response = client.post("/tables", data={"name": "Ann", "csrf_token": token.decode()})
    cookie = session_cookie(response)
    assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie


def test_secret_key_from_the_environment(tmp_path, monkeypatch):
    app, instance = make_app(tmp_path, monkeypatch, env_key="from-the-env")
    assert app.secret_key == "from-the-env"
    assert not (instance / "secret_key").exists()


def test_secret_key_generated_once_and_reused(tmp_path, monkeypatch):
    app, instance = make_app(tmp_path, monkeypatch)
    path = instance / "secret_key"
    key = path.read_text().strip()
    assert re.fullmatch(r"[0-9a-f]{64}", key)
    assert app.secret_key == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # A session made before a restart still holds its seat after it.
    client = app.test_client()
    token = re.search(rb'name="csrf_token" value="([^"]+)"', client.get("/").data).group(1)
    response = client.post("/tables", data={"name": "Ann", "csrf_token": token.decode()})
    code = response.headers["Location"].rsplit("/", 1)[1]
    cookie = session_cookie(response).split(";")[0].split("=", 1)[1]

    again, _ = make_app(tmp_path, monkeypatch)
    assert again.secret_key == key
    client = again.test_client()
    client.set_cookie("session", cookie)
    me = parse(client.get(f"/t/{code}").data).by_id("seats").find("li", cls="me")
    assert me is not None and "Ann" in me.text()
    # Another instance folder: another key, and the old cookie means nothing there.
    other, _ = make_app(tmp_path, monkeypatch, folder="elsewhere")
    assert other.secret_key != key


# ----- the socket ---------------------------------------------------------------------
def closed_without_data(ws) -> int:
    """The close code of a socket that sends nothing else first."""
    opcode, data = ws.recv_data(control_frame=True)
    assert opcode == websocket.ABNF.OPCODE_CLOSE, (opcode, data[:200])
    return int.from_bytes(data[:2], "big")


@pytest.fixture
def live_table(live_server):
    """Ann (host) and Bob at a started table on the live server."""
    ann, bob = LiveBrowser(live_server.url), LiveBrowser(live_server.url)
    code = ann.create("Ann")
    bob.join(code, "Bob")
    assert ann.post(f"/t/{code}/start", {"version": ann.version()})[0] == 303
    return ann, bob


def test_socket_refuses_a_foreign_origin(live_table):
    ann, _ = live_table
    for origin in ("http://evil.example", "http://127.0.0.1.evil.example"):
        try:
            ws = ann.socket(origin=origin)
        except websocket.WebSocketBadStatusException as exc:
            assert exc.status_code in (400, 403)
            continue
        try:
            assert closed_without_data(ws) == 1008
        finally:
            ws.close()


def test_socket_sends_the_view_of_the_seat_in_the_cookie(live_table, live_server):
    ann, bob = live_table
    spectator = LiveBrowser(live_server.url)
    spectator.get("/")
    spectator.code = ann.code
    seen = {}
    for who, browser in (("Ann", ann), ("Bob", bob), ("spectator", spectator)):
        ws = browser.socket()
        try:
            seen[who] = parse(ws.recv())
        finally:
            ws.close()
    labels = {
        who: sorted(g.attrs["aria-label"] for g in doc.find_all(cls="grid"))
        for who, doc in seen.items()
    }
    assert labels == {
        "Ann": ["Bob's grid", "Your grid"],
        "Bob": ["Ann's grid", "Your grid"],
        "spectator": ["Ann's grid", "Bob's grid"],
    }
    # Only players get their own turn-over buttons, with their own CSRF token.
    for who, browser in (("Ann", ann), ("Bob", bob)):
        form = seen[who].find("form", cls="mine")
        pushed = form.find("input", name="csrf_token").attrs["value"]
        assert same_secret(pushed, browser.csrf)
    assert seen["spectator"].find("form", cls="mine") is None
    # A tampered session cookie is nobody's: the spectator's view.
    cookie = ann.cookie("session")
    ws = websocket.create_connection(
        live_server.url.replace("http", "ws") + f"/t/{ann.code}/ws",
        cookie=f"session={cookie.value[:-2]}xx",
        origin=live_server.url,
        timeout=2,
    )
    try:
        doc = parse(ws.recv())
        assert sorted(g.attrs["aria-label"] for g in doc.find_all(cls="grid")) == [
            "Ann's grid",
            "Bob's grid",
        ]
    finally:
        ws.close()


def test_live_session_cookie_flags(live_server):
    visitor = LiveBrowser(live_server.url)
    visitor.get("/")
    status, headers, _ = visitor.request(
        "POST", "/tables", {"name": "Ann", "csrf_token": visitor.csrf}
    )
    assert status == 303
    cookie = [c for c in headers.get_all("Set-Cookie") if c.startswith("session=")][0]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie


def test_security_headers_are_added_once_and_never_replace_an_answers_own(app):
    @app.get("/own-frame-policy")
    def own():
        return "framed by us", 200, {"x-frame-options": "SAMEORIGIN"}

    response = app.test_client().get("/own-frame-policy")
    assert response.headers.getlist("X-Frame-Options") == ["SAMEORIGIN"]
    assert response.headers.getlist("X-Content-Type-Options") == ["nosniff"]
    assert response.headers.getlist("Referrer-Policy") == ["same-origin"]

"""The session cookie (Flask's signed cookie) and the CSRF check (Flask-WTF's): a
session's own cookie and token are taken, anything else is refused."""

from __future__ import annotations

import time

from itsdangerous import URLSafeTimedSerializer

from tests.web.web_helpers import parse


def seated(ann, code) -> bool:
    """Whether this browser is seated at `code` (its own box in the seat list)."""
    return parse(ann.client.get(f"/t/{code}").data).by_id("seats").find("li", cls="me") is not None


def cookie_of(ann) -> str:
    return ann.client.get_cookie("session").value


def test_a_session_cookie_is_taken_only_as_signed_and_within_its_lifetime(
    app, browser, monkeypatch
):
    ann = browser()
    code = ann.create("Ann")
    cookie = cookie_of(ann)
    assert seated(ann, code) and seated(ann, code)
    # Other bytes are another cookie: a tampered one is nobody's.
    middle = len(cookie) // 2
    tampered = cookie[:middle] + ("x" if cookie[middle] != "x" else "y") + cookie[middle + 1 :]
    ann.client.set_cookie("session", tampered)
    assert not seated(ann, code)
    # Past the session's lifetime, the cookie is refused.
    ann.client.set_cookie("session", cookie)
    assert seated(ann, code)
    later = time.time() + app.permanent_session_lifetime.total_seconds() + 60
    monkeypatch.setattr(time, "time", lambda: later)
    assert not seated(ann, code)
    monkeypatch.undo()
    ann.client.set_cookie("session", cookie)  # the refused one was replaced
    assert seated(ann, code)
    # A new secret key: the cookie means nothing any more.
    app.secret_key = "another key"
    assert not seated(ann, code)


def test_each_request_gets_its_own_copy_of_the_session(app, browser):
    ann = browser()
    code = ann.create("Ann")
    cookie = cookie_of(ann)
    with app.test_request_context("/", headers={"Cookie": f"session={cookie}"}) as ctx:
        first = app.session_interface.open_session(app, ctx.request)
        first["seats"]["OTHER"] = "token"  # changed in place by a request
        second = app.session_interface.open_session(app, ctx.request)
    assert second["seats"] == {code: first["seats"][code]}


def test_the_csrf_check_takes_only_a_token_of_the_sessions_own_secret(app, browser, monkeypatch):
    ann, bob = browser(), browser()
    code = ann.create("Ann")
    bob.get("/")
    url = f"/t/{code}/rules"
    # The session's own token: accepted.
    assert ann.post(url, {"end_score": "90"}).status_code == 303
    # Another session's token, a forged one, a non-ASCII one: refused, with the message.
    # (A token's last base64 character carries padding bits: change its first one.)
    forged = ("x" if ann.csrf[0] != "x" else "y") + ann.csrf[1:]
    for token in (bob.csrf, forged, "jeton-é"):
        refused = ann.post(url, {"end_score": "80", "csrf_token": token})
        assert refused.status_code == 400
        assert "This form has expired" in refused.get_data(as_text=True)
    # Another signature of this session's secret (made at another second), not the
    # token the pages carry: accepted too.
    data = app.session_interface.get_signing_serializer(app).loads(cookie_of(ann))
    signer = URLSafeTimedSerializer(app.secret_key, salt="wtf-csrf-token")
    monkeypatch.setattr(time, "time", lambda: 1e9)
    other = signer.dumps(data["csrf_token"])
    monkeypatch.undo()
    assert other != data["csrf_signed"]
    assert ann.post(url, {"end_score": "70", "csrf_token": other}).status_code == 303


def test_an_unchanged_session_sends_no_cookie_but_varies_on_it(app, browser):
    ann = browser()
    code = ann.create("Ann")
    htmx = ann.client.get(f"/t/{code}", headers={"HX-Request": "true"})
    assert "Set-Cookie" not in htmx.headers  # nothing changed: the cookie stays as it is
    vary = [v.strip() for v in htmx.headers["Vary"].split(",")]
    assert "Cookie" in vary and vary.count("Cookie") == 1
    # A changed session is sent (Flask's own path): a second table's seat.
    other = ann.post("/tables", {"name": "Ann"})
    assert other.status_code == 303 and "session=" in other.headers["Set-Cookie"]


def test_a_late_answer_to_an_earlier_request_does_not_undo_a_seat(app, browser):
    # The home page's cookie, then the page's other requests (its service worker's
    # script, the offline page it caches, a missing icon) answered after the table was
    # created: none may set the cookie back to the home page's, which had no seat.
    ann = browser()
    home = ann.client.get("/")
    assert "session=" in home.headers["Set-Cookie"]
    before = cookie_of(ann)
    code = ann.create("Ann")
    seated_cookie = cookie_of(ann)
    for path in ("/sw.js", "/offline", "/rules", "/favicon.ico", "/"):
        ann.client.set_cookie("session", before)  # sent before the seat was taken
        late = ann.client.get(path)
        assert "session=" not in late.headers.get("Set-Cookie", ""), path
    ann.client.set_cookie("session", seated_cookie)
    assert seated(ann, code)

"""The sign-in rate limit: per username and per address, behind proxies, a sliding
window, said in whole minutes."""

from __future__ import annotations

import re

import limits.storage.memory
import limits.strategies

from app.web import ratelimit
from tests.web.account_helpers import (
    cheap_hashing,  # noqa: F401 (an autouse fixture)
    make_user,
    signed_in_as,
    signin,
    signout,
    text,
)

# ----- rate limit ----------------------------------------------------------------------
TOO_MANY = re.compile(r"Too many sign-in attempts: try again in (\d+) minutes?\.")


def test_too_many_failures_for_a_username_lock_it_even_from_other_addresses(browser):
    make_user("ann")
    for i in range(5):
        response = signin(
            browser(), "ann", "wrong password", environ_base={"REMOTE_ADDR": f"10.0.0.{i}"}
        )
        assert response.status_code == 401
    response = signin(browser(), "ANN", environ_base={"REMOTE_ADDR": "10.0.1.1"})
    assert response.status_code == 429
    assert TOO_MANY.search(text(response)).group(1) == "15"
    # Another user from another address is not affected.
    make_user("bob")
    assert signin(browser(), "bob", environ_base={"REMOTE_ADDR": "10.0.2.1"}).status_code == 303


def test_too_many_failures_from_an_address_lock_it_for_every_username(browser):
    make_user("zed")
    b = browser()
    for name in ("a1x", "b2x", "c3x", "d4x", "e5x"):
        assert signin(b, name, "wrong password").status_code == 401
    response = signin(b, "zed")  # right password, but this address is locked
    assert response.status_code == 429 and TOO_MANY.search(text(response))
    assert signed_in_as(b) is None
    assert signin(browser(), "zed", environ_base={"REMOTE_ADDR": "10.9.9.9"}).status_code == 303


def test_behind_a_proxy_the_forwarded_address_counts(browser, app):
    app.config["PROXY_HOPS"] = 1
    make_user("zed")
    for i in range(5):
        headers = {"X-Forwarded-For": f"spoofed, 203.0.113.{i % 2}"}
        signin(browser(), f"user{i}", "wrong password", headers=headers)
    # 203.0.113.0 failed 3 times and .1 twice: neither is locked, nor is the proxy.
    assert signin(browser(), "zed", headers={"X-Forwarded-For": "203.0.113.9"}).status_code == 303
    for _ in range(2):
        signin(browser(), "nobody1", "wrong", headers={"X-Forwarded-For": "203.0.113.0"})
    locked = signin(browser(), "zed", headers={"X-Forwarded-For": "x, 203.0.113.0"})
    assert locked.status_code == 429


class Clock:
    """Stands in for the `time` module of the rate limit's storage and strategy."""

    def __init__(self, now: float):
        self.now = now

    def time(self) -> float:
        return self.now


def test_the_limit_is_a_sliding_window(browser, app, monkeypatch):
    start = 1_800_000_000.0
    clock = Clock(start)
    for module in (limits.storage.memory, limits.strategies, ratelimit):
        monkeypatch.setattr(module, "time", clock)
    app.config.update(SIGNIN_MAX_FAILURES=3, SIGNIN_WINDOW_SECONDS=600)
    make_user("ann")
    make_user("bob")

    def attempt(name, address, password="correct horse"):
        return signin(browser(), name, password, environ_base={"REMOTE_ADDR": address})

    for t in (0, 100, 200):
        clock.now = start + t
        assert attempt("ann", "1.2.3.4", "wrong password").status_code == 401
    clock.now = start + 300
    locked = attempt("ann", "5.6.7.8")  # the username: 300 s until the first failure leaves
    assert locked.status_code == 429 and TOO_MANY.search(text(locked)).group(1) == "5"
    assert attempt("bob", "1.2.3.4").status_code == 429  # the address
    assert attempt("bob", "5.6.7.8").status_code == 303
    clock.now = start + 601  # the first failure left the window
    assert attempt("ann", "1.2.3.4").status_code == 303


def test_the_wait_is_said_in_whole_minutes():
    assert ratelimit.too_many_message(61) == "Too many sign-in attempts: try again in 2 minutes."
    assert ratelimit.too_many_message(20) == "Too many sign-in attempts: try again in 1 minute."


def test_a_successful_sign_in_forgets_the_usernames_failures(browser):
    make_user("ann")
    b = browser()
    for _ in range(4):
        signin(b, "ann", "wrong password", environ_base={"REMOTE_ADDR": "10.1.1.1"})
    assert signin(b, "ann", environ_base={"REMOTE_ADDR": "10.1.1.1"}).status_code == 303
    signout(b)
    c = browser()
    signin(c, "ann", "wrong password", environ_base={"REMOTE_ADDR": "10.2.2.2"})
    assert signin(c, "ann", environ_base={"REMOTE_ADDR": "10.2.2.2"}).status_code == 303

"""URL matching (app.routing): Werkzeug's answers (and no cyclic garbage:
test_cyclic_garbage.py)."""

from __future__ import annotations

from werkzeug.routing import Map, Rule
from werkzeug.routing.matcher import StateMachineMatcher

from app.routing import Matcher, Routes

PATHS = [
    "/",
    "/tables",
    "/t/ABCD",
    "/t/ABCD/",
    "/t/ABCD/move",
    "/t/ABCD/ws",
    "/t/abcd/next-round",
    "/t//ABCD",
    "/nowhere",
    "/static/app.css",
    "/static/a/b/c.js",
    "/docs",
    "/docs/",
    "/strict",
    "/loose/",
    "/loose",
    "/n/12",
    "/n/x",
    "/old",
]


def outcome(matcher, path: str, method: str, websocket: bool):
    """What matching gives: the rule and values, or the exception and what it carries."""
    try:
        rule, values = matcher.match("", path, method, websocket)
        return rule.endpoint, values
    except Exception as exc:  # noqa: BLE001 (the exception is the answer compared)
        return type(exc).__name__, sorted(getattr(exc, "have_match_for", ()) or ()), str(exc)


def matchers(rules_of_map):
    """Werkzeug's matcher and ours over the same rules."""
    werkzeug, ours = Map(rules_of_map(), merge_slashes=True), Routes(rules_of_map())
    assert isinstance(ours._matcher, Matcher)
    assert type(werkzeug._matcher) is StateMachineMatcher
    werkzeug.update(), ours.update()
    return werkzeug._matcher, ours._matcher


def test_matches_as_werkzeug_matches_the_app_s_rules(app):
    def rules():
        return [
            Rule(
                r.rule,
                endpoint=r.endpoint,
                methods=r.methods,
                websocket=r.websocket,
                strict_slashes=r.strict_slashes,
            )
            for r in app.url_map.iter_rules()
        ]

    theirs, ours = matchers(rules)
    for path in PATHS:
        for method in ("GET", "POST", "HEAD", "DELETE"):
            for websocket in (False, True):
                assert outcome(ours, path, method, websocket) == outcome(
                    theirs, path, method, websocket
                ), (path, method, websocket)


def test_matches_as_werkzeug_matches_slashes_converters_defaults_and_aliases():
    def rules():
        return [
            Rule("/docs/", endpoint="docs"),
            Rule("/strict", endpoint="strict"),
            Rule("/loose/", endpoint="loose", strict_slashes=False),
            Rule("/n/<int:n>", endpoint="number", methods=["POST"]),
            Rule("/n/<int:n>", endpoint="number_ws", websocket=True),
            Rule("/static/<path:filename>", endpoint="static"),
            Rule("/old", endpoint="page", defaults={"n": 1}),
            Rule("/t/<code>", endpoint="page", defaults={"n": 1}, alias=True),
        ]

    theirs, ours = matchers(rules)
    for path in PATHS:
        for method in ("GET", "POST"):
            for websocket in (False, True):
                assert outcome(ours, path, method, websocket) == outcome(
                    theirs, path, method, websocket
                ), (path, method, websocket)

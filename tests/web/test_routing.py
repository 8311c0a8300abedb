"""URL matching (app.web.routing): Werkzeug's answers (and no cyclic garbage:
test_cyclic_garbage.py)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from flask import url_for
from werkzeug.routing import Map, Rule
from werkzeug.routing.matcher import StateMachineMatcher

from app.web.routing import Matcher, Routes

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


def test_a_remembered_adapter_is_the_same_request_lines_only():
    """Adapters are remembered per host, scheme, method, path and query: each request
    still matches and builds URLs as its own."""
    routes = Routes([Rule("/t/<code>", endpoint="show"), Rule("/t/<code>/move", endpoint="move")])

    def environ(host, path, query="", scheme="http"):
        return {
            "HTTP_HOST": host,
            "SERVER_NAME": host,
            "SERVER_PORT": "80",
            "wsgi.url_scheme": scheme,
            "SCRIPT_NAME": "",
            "PATH_INFO": path,
            "REQUEST_METHOD": "GET",
            "QUERY_STRING": query,
        }

    first = routes.bind_to_environ(environ("a.test", "/t/AB"))
    assert routes.bind_to_environ(environ("a.test", "/t/AB")) is first
    assert first.match() == ("show", {"code": "AB"})
    other_path = routes.bind_to_environ(environ("a.test", "/t/CD/move"))
    assert other_path.match() == ("move", {"code": "CD"})
    other_host = routes.bind_to_environ(environ("b.test", "/t/AB", scheme="https"))
    assert other_host.build("show", {"code": "X"}, force_external=True) == "https://b.test/t/X"
    assert first.build("show", {"code": "X"}, force_external=True) == "http://a.test/t/X"
    assert routes.bind_to_environ(environ("a.test", "/t/AB", "v=3")) is not first


def test_every_url_of_a_table_or_sheet_names_it_where_the_readme_s_proxy_hashes(app):
    """README, "One table, one process": nginx sends a table's requests and sockets to one
    process by the code its map finds in the path. Every rule naming a table or a score
    sheet must give that map its code, and no other rule may look like one."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    found = re.search(r"^map \$uri \$skymo_table \{.*?^\s+~(\S+) \$code;", readme, re.M | re.S)
    assert found, "the README's nginx map of the table code"
    pattern = re.compile(found.group(1).replace("(?<", "(?P<"))
    values = {"code": "K7QX2M", "number": 3, "seat_id": 12, "filename": "app.css", "username": "al"}
    with app.test_request_context():
        for rule in app.url_map.iter_rules():
            url = url_for(rule.endpoint, **{k: values[k] for k in rule.arguments})
            path = urlsplit(url).path  # a socket's URL is absolute (ws://)
            match = pattern.match(path)
            if "code" in rule.arguments:
                assert match and match["code"] == "K7QX2M", path
            else:
                assert match is None, path

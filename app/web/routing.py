"""Werkzeug's URL matching without the cyclic garbage it leaves on every request.

Werkzeug's `StateMachineMatcher.match` walks its states with a recursive inner function
that refers to itself through its closure: every match leaves a cycle (the function, its
cells, the set of allowed methods) that only the garbage collector frees, and such
garbage is what makes the collector run (docs/figures.md, "No periodic latency bursts"). This is
the same walk (Werkzeug 3.1's, rule for rule) as a method, which leaves nothing behind.
"""

from __future__ import annotations

import re

from werkzeug.routing import Map
from werkzeug.routing.converters import ValidationError
from werkzeug.routing.exceptions import NoMatch, RequestAliasRedirect, RequestPath
from werkzeug.routing.matcher import SlashRequired, State, StateMachineMatcher


class _Misses:
    """What the failed transitions saw: the methods other rules allow (a 405), and
    whether a rule matched but for being a websocket or not."""

    __slots__ = ("methods", "websocket")

    def __init__(self):
        self.methods: set[str] = set()
        self.websocket = False


class Matcher(StateMachineMatcher):
    def match(self, domain: str, path: str, method: str, websocket: bool):
        misses = _Misses()
        walk = (method, websocket, misses)
        try:
            rv = self._walk(self._root, [domain, *path.split("/")], [], walk)
        except SlashRequired:
            raise RequestPath(f"{path}/") from None
        if self.merge_slashes and rv is None:
            path = re.sub("/{2,}", "/", path)
            try:
                rv = self._walk(self._root, [domain, *path.split("/")], [], walk)
            except SlashRequired:
                raise RequestPath(f"{path}/") from None
            if rv is None or rv[0].merge_slashes is False:
                raise NoMatch(misses.methods, misses.websocket)
            raise RequestPath(f"{path}")
        if rv is None:
            raise NoMatch(misses.methods, misses.websocket)
        rule, values = rv
        result = {}
        for name, value in zip(rule._converters.keys(), values, strict=False):
            try:
                value = rule._converters[name].to_python(value)
            except ValidationError as e:
                raise NoMatch(misses.methods, misses.websocket) from e
            result[str(name)] = value
        if rule.defaults:
            result.update(rule.defaults)
        if rule.alias and rule.map.redirect_defaults:
            raise RequestAliasRedirect(result, rule.endpoint)
        return rule, result

    def _walk(self, state: State, parts: list[str], values: list[str], walk):
        """Match the head of `parts` to the state's transitions, recursively."""
        if parts == []:
            found = self._at_end(state.rules, values, walk, strict=True)
            if found is not None:
                return found
            # A match with a trailing slash: reported, so that the client is redirected.
            if "" in state.static:
                method, websocket, _ = walk
                for rule in state.static[""].rules:
                    if websocket == rule.websocket and (
                        rule.methods is None or method in rule.methods
                    ):
                        if rule.strict_slashes:
                            raise SlashRequired()
                        return rule, values
            return None
        part = parts[0]
        if part in state.static:
            rv = self._walk(state.static[part], parts[1:], values, walk)
            if rv is not None:
                return rv
        for test_part, new_state in state.dynamic:
            rv = self._dynamic(test_part, new_state, parts, values, walk)
            if rv is not None:
                return rv
        if parts == [""]:  # a final slash: rules that are not strict about it match
            return self._at_end(state.rules, values, walk, strict=False)
        return None

    def _dynamic(self, test_part, new_state: State, parts, values, walk):
        target, remaining = parts[0], parts[1:]
        if test_part.final:  # a final part consumes the remaining parts
            target, remaining = "/".join(parts), []
        match = re.compile(test_part.content).match(target)
        if match is None:
            return None
        if test_part.suffixed and match.groups()[-1] == "/":
            remaining = [""]
        converter_groups = sorted(
            (item for item in match.groupdict().items() if item[0].startswith("__werkzeug_")),
            key=lambda item: int(item[0][11:]),
        )
        groups = [item[1] for item in converter_groups]
        return self._walk(new_state, remaining, values + groups, walk)

    @staticmethod
    def _at_end(rules, values, walk, strict: bool):
        method, websocket, misses = walk
        for rule in rules:
            if not strict and rule.strict_slashes:
                continue
            if rule.methods is not None and method not in rule.methods:
                misses.methods.update(rule.methods)
            elif rule.websocket != websocket:
                misses.websocket = True
            else:
                return rule, values
        return None


# What Werkzeug's `bind_to_environ` reads of a request.
BOUND_BY = (
    "HTTP_HOST",
    "SERVER_NAME",
    "SERVER_PORT",
    "wsgi.url_scheme",
    "HTTP_CONNECTION",
    "HTTP_UPGRADE",
    "SCRIPT_NAME",
    "PATH_INFO",
    "REQUEST_METHOD",
    "QUERY_STRING",
)


class Routes(Map):
    """Flask's URL map, matching with `Matcher`, its adapters remembered (`bind_to_environ`)."""

    BOUND_SIZE = 4096

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        matcher = Matcher(self._matcher.merge_slashes)
        matcher._root = self._matcher._root  # the rules added so far, if any
        self._matcher = matcher
        self._bound: dict[tuple, object] = {}

    def bind_to_environ(self, environ, server_name=None, subdomain=None):
        """Werkzeug's, remembered by what it reads of the request: every request binds
        the map (its host, scheme, path and query parsed anew) and a table's players ask
        for the same few addresses again and again. An adapter is only read once made
        (matching, building URLs), so requests may share one."""
        env = environ if isinstance(environ, dict) else environ.environ  # a Request
        key = (server_name, subdomain, *map(env.get, BOUND_BY))
        found = self._bound.get(key)
        if found is None:
            found = super().bind_to_environ(env, server_name, subdomain)
            if len(self._bound) >= self.BOUND_SIZE:
                self._bound.clear()
            self._bound[key] = found
        return found

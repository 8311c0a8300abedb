"""Helpers for the web tests: a small HTML tree, form submission as a browser does it,
a player who plays from what the page offers (the secrecy scanner is in secrecy_helpers.py)."""

from __future__ import annotations

import functools
import inspect
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from app import tables
from app.engine import Game
from app.storage.models import Seat, Table
from tests.web.live_helpers import HttpBrowser

VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
}


# ----- a tiny DOM ----------------------------------------------------------------------
@dataclass(eq=False)
class Node:
    tag: str
    attrs: dict = field(default_factory=dict)
    children: list = field(default_factory=list)  # Node or str
    parent: Node | None = None

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self, templates: bool = False):
        """Descendant elements in document order. As in a browser, a <template>'s
        content is not part of the document: searched only from the template itself,
        or with `templates`."""
        stack = [c for c in reversed(self.children) if isinstance(c, Node)]
        while stack:
            node = stack.pop()
            yield node
            if templates or node.tag != "template":
                stack.extend(c for c in reversed(node.children) if isinstance(c, Node))

    def find_all(self, tag=None, cls=None, **attrs) -> list[Node]:
        found = []
        for node in self.iter():
            if tag and node.tag != tag:
                continue
            if cls and cls not in node.classes:
                continue
            if any(node.attrs.get(k.replace("_", "-")) != v for k, v in attrs.items()):
                continue
            found.append(node)
        return found

    def find(self, tag=None, cls=None, **attrs) -> Node | None:
        found = self.find_all(tag, cls, **attrs)
        return found[0] if found else None

    def by_id(self, ident: str) -> Node | None:
        return self.find(id=ident)

    def ancestor(self, cls: str) -> Node | None:
        node = self.parent
        while node is not None and cls not in node.classes:
            node = node.parent
        return node


class _Builder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root")
        self.stack = [self.root]
        self.comments: list[str] = []

    def handle_starttag(self, tag, attrs):
        node = Node(tag, {k: (v if v is not None else "") for k, v in attrs}, parent=self.stack[-1])
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):
        node = Node(tag, {k: (v if v is not None else "") for k, v in attrs}, parent=self.stack[-1])
        self.stack[-1].children.append(node)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        self.stack[-1].children.append(data)

    def handle_comment(self, data):
        self.comments.append(data)


def parse(html: str | bytes) -> Node:
    if isinstance(html, bytes):
        html = html.decode()
    builder = _Builder()
    builder.feed(html)
    builder.close()
    builder.root.comments = builder.comments
    return builder.root


def form_data(form: Node, button: Node | None = None) -> dict:
    """What a browser sends for this form (hidden inputs, plus the pressed button)."""
    data = {}
    for inp in form.find_all("input"):
        if inp.attrs.get("type") == "hidden" and inp.attrs.get("name"):
            data[inp.attrs["name"]] = inp.attrs.get("value", "")
    if button is not None and button.attrs.get("name"):
        data[button.attrs["name"]] = button.attrs.get("value", "")
    return data


def form_posting_to(doc: Node, suffix: str) -> Node | None:
    for form in doc.find_all("form"):
        if form.attrs.get("action", "").endswith(suffix):
            return form
    return None


def move_form(doc: Node, kind: str) -> Node | None:
    """A move form whose hidden `type` is `kind`."""
    for form in doc.find_all("form"):
        if not form.attrs.get("action", "").endswith("/move"):
            continue
        typ = form.find("input", name="type")
        if typ is not None and typ.attrs.get("value") == kind:
            return form
    return None


def grid_form(doc: Node) -> Node | None:
    for form in doc.find_all("form", cls="mine"):
        return form
    return None


def phase_of(doc: Node) -> str | None:
    board = doc.find("div", cls="board")
    if board is None:
        return None
    for c in board.classes:
        if c.startswith("phase-"):
            return c[len("phase-") :]
    return None


def data_version(doc: Node) -> int:
    return int(doc.by_id("table").attrs["data-version"])


def table_row(code: str) -> Table:
    return Table.get(Table.code == code)


def snapshot(code: str) -> tuple:
    """Everything a bad request must leave alone."""
    t = table_row(code)
    seats = [
        (s.id, s.name, s.position, s.left, s.bot) for s in Seat.select().where(Seat.table == code)
    ]
    return (t.status, t.version, t.rules, t.state, t.public, t.votes, t.host_seat, seats)


def stored_state(code: str) -> tuple[Table, Game]:
    """The table's row and the game decoded from its state column (the round in play)."""
    table = Table.get(Table.code == code)
    return table, Game.from_dict(table.state)


def game_of(code: str) -> Game:
    """The table's whole game (its finished rounds are stored apart)."""
    return tables.store.load_game(table_row(code))


# ----- a person playing from the page --------------------------------------------------
class Player:
    """Plays through the HTML like a person: reads the page, follows its links and
    submits its forms. Nothing is built by hand."""

    def __init__(self, browser, name: str, rng, htmx: bool = False):
        self.b = browser
        self.name = name
        self.rng = rng
        self.htmx = htmx
        self.on_html = None  # called with (html, parsed) for every HTML this player gets

    @property
    def code(self):
        return self.b.code

    def get(self, query: str = "", htmx: bool = False) -> Node:
        headers = {"HX-Request": "true"} if htmx else {}
        response = self.b.get(f"/t/{self.code}{query}", headers=headers)
        assert response.status_code == 200, response.data[:500]
        html = response.data.decode()
        doc = parse(html)
        if self.on_html is not None:
            self.on_html(html, doc)
        return doc

    def submit(self, form: Node, button: Node | None = None, expect=None) -> Node | None:
        data = form_data(form, button)
        response = self.b.post(form.attrs["action"], data, htmx=self.htmx)
        if expect is not None:
            assert response.status_code == expect, response.data[:800]
        html = response.data.decode()
        if self.htmx:
            assert response.status_code == 200, html[:800]
            doc = parse(html)
            if self.on_html is not None:
                self.on_html(html, doc)
            assert doc.by_id("table") is not None
            assert "<html" not in html
            return doc
        assert response.status_code == 303, html[:800]
        assert response.headers["Location"].endswith(f"/t/{self.code}")
        return None

    def click(self, form: Node) -> Node | None:
        """Press one of the grid's card buttons (preferring face-down cards at times)."""
        buttons = form.find_all("button", name="pos")
        assert buttons, "a grid form without a card to press"
        backs = [b for b in buttons if "back" in b.classes]
        pool = backs if backs and self.rng.random() < 0.6 else buttons
        return self.submit(form, self.rng.choice(pool))

    def act(self, doc: Node | None = None) -> bool:
        """Make one move if the page offers one (next round excluded). True if moved."""
        doc = doc or self.get()
        form = grid_form(doc)
        kind = form.find("input", name="type").attrs["value"] if form is not None else None
        if kind == "reveal":
            self.click(form)
            return True
        draw = move_form(doc, "draw")
        if draw is not None:
            take = doc.find("a", href="?mode=take")
            assert take is not None, "a turn without the take-the-discard link"
            if self.rng.random() < 0.35:
                taken = self.get("?mode=take", htmx=self.rng.random() < 0.5)
                form = grid_form(taken)
                assert form.find("input", name="type").attrs["value"] == "take_discard"
                self.click(form)
            else:
                self.submit(draw)
            return True
        if kind == "keep_drawn":
            flip = doc.find("a", href="?mode=flip")
            discard = move_form(doc, "discard_drawn")
            roll = self.rng.random()
            if flip is not None and roll < 0.6:
                flipped = self.get("?mode=flip", htmx=self.rng.random() < 0.5)
                form = grid_form(flipped)
                assert form.find("input", name="type").attrs["value"] == "discard_drawn"
                for button in form.find_all("button", name="pos"):
                    assert "back" in button.classes  # only face-down cards can be turned
                self.submit(form, self.rng.choice(form.find_all("button", name="pos")))
            elif discard is not None and roll < 0.6:
                self.submit(discard)
            else:
                self.click(form)
            return True
        return False


def play_until(players: list[Player], phases=("round_over", "game_over"), limit=3000, after=None):
    """Let whoever the pages let act, act, until the board reaches one of `phases`.
    The player who just moved looks first, then the next ones in order."""
    order = list(players)
    for _ in range(limit):
        for p in order:
            doc = p.get()
            if phase_of(doc) in phases:
                return phase_of(doc)
            if p.act(doc):
                if after is not None:
                    after()
                i = players.index(p)
                order = players[i:] + players[:i]
                break
        else:
            raise AssertionError("nobody can move, yet the round is not over")
    raise AssertionError("the game did not end")


def vote_next_round(players: list[Player]) -> None:
    for p in players:
        doc = p.get()
        form = form_posting_to(doc, "/next-round")
        if form is not None:
            p.submit(form)


# ----- setting tables up ---------------------------------------------------------------
def seat_table(browser, names=("Ann", "Bob"), bots=(), **rules) -> list:
    """A lobby with these people (the first hosts) and bots; returns their browsers."""
    people = [browser() for _ in names]
    for b, name in zip(people, names, strict=True):
        b.name = name
    code = people[0].create(names[0])
    for b, name in zip(people[1:], names[1:], strict=True):
        response = b.join(code, name)
        assert response.status_code == 303, response.data[:500]
    if rules:
        form = {"end_score": "100", "show_running_score": "on", **rules}
        response = people[0].post(f"/t/{code}/rules", {k: str(v) for k, v in form.items()})
        assert response.status_code == 303, response.data[:2000]
    for kind in bots:
        assert people[0].post(f"/t/{code}/bots", {"bot": kind}).status_code == 303
    return people


def start(host) -> None:
    response = host.post(f"/t/{host.code}/start", {"version": host.version()})
    assert response.status_code == 303, response.data[:500]


def seat_of(code: str, name: str) -> Seat:
    return Seat.get((Seat.table == code) & (Seat.name == name) & (Seat.left == False))  # noqa: E712


def whose_turn(code: str, people: list) -> tuple:
    """(browser, other browsers) by the engine's turn, for people named by `.name`."""
    game = game_of(code)
    turn = game.round.turn
    current = [b for b in people if seat_of(code, b.name).player_id == turn]
    assert current, f"no person has the turn ({turn})"
    return current[0], [b for b in people if b is not current[0]]


# ----- a browser against a live server (urllib + a cookie jar) ----------------------------
class LiveBrowser(HttpBrowser):
    """One person's browser against the live server: its own cookie jar (the transport
    of live_helpers.HttpBrowser, with answers shaped for these tests)."""

    def get(self, path: str) -> str:
        status, _, text = self.request("GET", path)
        assert status == 200, (status, text[:300])
        found = re.search(r'name="csrf_token" value="([^"]+)"', text)
        if found:
            self.csrf = found.group(1)
        return text

    def post(self, path: str, data=None) -> tuple[int, str]:
        status, headers, _ = self.send_form(path, data)
        return status, headers.get("Location", "")

    def version(self) -> str:
        return re.search(r'data-version="(\d+)"', self.get(f"/t/{self.code}")).group(1)

    def cookie(self, name: str):
        return next((c for c in self.jar if c.name == name), None)


def each(names: str, values):
    """Like pytest.mark.parametrize, but every case runs inside one test: one app and
    one database for all (creating them is most of a small test's time). A failure
    names its case."""
    keys = [n.strip() for n in names.split(",")]
    values = list(values)

    def wrap(fn):
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def run(*args, **kwargs):
            for value in values:
                case = dict(zip(keys, value if len(keys) > 1 else (value,), strict=True))
                try:
                    fn(*args, **kwargs, **case)
                except AssertionError as exc:
                    raise AssertionError(f"case {case}: {exc}") from exc

        run.__signature__ = sig.replace(
            parameters=[p for name, p in sig.parameters.items() if name not in keys]
        )
        return run

    return wrap

"""What a player does in the browser, for the e2e tests: create, join, set rules, play
by clicking, and the page checks (accessible names, touch targets, overflow).

Pages change by htmx swaps (answers to our clicks, and pushes over the socket). A click
on content that htmx has swapped in but not yet processed would submit the form the old
way (a page load), so every click waits until htmx has settled."""

from __future__ import annotations

import random
import re
import time

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Locator, Page, expect

PHONE = {
    "viewport": {"width": 390, "height": 844},
    "is_mobile": True,
    "has_touch": True,
    "device_scale_factor": 2,
}
DESKTOP = {"viewport": {"width": 1280, "height": 800}}

# htmx marks new content with htmx-added until it has processed it (hx-post and friends
# work only then), and the element of a request in flight with htmx-request.
SETTLED = (
    "() => !document.querySelector('.htmx-added, .htmx-request, .htmx-swapping, .htmx-settling')"
)
VERSION = "() => +(document.querySelector('#table')?.dataset.version ?? -1)"
AT_LEAST = "v => +(document.querySelector('#table')?.dataset.version ?? -1) >= v"
ABOVE = "v => +(document.querySelector('#table')?.dataset.version ?? -1) > v"
RESULTS = "#final-h"


def settle(page: Page) -> None:
    page.wait_for_function(SETTLED)


def version(page: Page) -> int:
    return page.evaluate(VERSION)


def wait_version(page: Page, at_least: int, timeout: float = 10_000) -> None:
    page.wait_for_function(AT_LEAST, arg=at_least, timeout=timeout)


def click(page: Page, target: Locator) -> None:
    settle(page)
    target.click()
    settle(page)


def click_and_wait_change(page: Page, target: Locator) -> int:
    """Click something that changes the table; wait for this page to show the change."""
    before = version(page)
    click(page, target)
    page.wait_for_function(ABOVE, arg=before)
    settle(page)
    return version(page)


# ----- lobby ---------------------------------------------------------------------------
def create_table(page: Page, base_url: str, name: str) -> str:
    """From the home page; returns the invite link shown in the lobby."""
    page.goto(base_url + "/")
    page.get_by_label("Your name").fill(name)
    page.get_by_role("button", name="Create a table").click()
    page.wait_for_url(re.compile(r"/t/[A-Z0-9]+$"))
    expect(page.locator("#seats li.me")).to_contain_text(name)
    return page.locator("#invite").input_value()


def join(page: Page, invite: str, name: str) -> None:
    page.goto(invite)
    settle(page)
    page.get_by_label("Your name").fill(name)
    # Joining reloads the page (HX-Refresh) so that its socket reconnects as a player.
    with page.expect_navigation():
        page.locator("#join").get_by_role("button", name="Join").click()
    expect(page.locator("#seats li.me")).to_contain_text(name)
    settle(page)


def set_rules(page: Page, **fields: str) -> None:
    """fields: label -> value, e.g. {"End score": "10"}; then Save rules."""
    form = page.locator("#rules-form")
    open_rules(page)
    for label, value in fields.items():
        form.get_by_label(label, exact=True).fill(value)
    click_and_wait_change(page, form.get_by_role("button", name="Save rules"))


def open_rules(page: Page) -> None:
    """Unfold the host's rules form (folded on a short lobby)."""
    fold = page.locator("#rules-form details")
    if not fold.evaluate("d => d.open"):
        click(page, fold.locator("summary"))


def add_bot(page: Page, kind: str = "greedy") -> None:
    page.get_by_label("Add a bot").select_option(kind)
    click_and_wait_change(page, page.get_by_role("button", name="Add bot"))


def start(page: Page) -> None:
    click_and_wait_change(page, page.get_by_role("button", name="Start the game"))
    expect(page.locator("#table .board")).to_be_visible()


def game_against_a_bot(page: Page, base_url: str, name: str = "Ann", **rules: str) -> None:
    """A table of `name` and a greedy bot with these rules (label -> value), started."""
    create_table(page, base_url, name)
    if rules:
        set_rules(page, **rules)
    add_bot(page)
    start(page)


def sign_up(page: Page, base_url: str, username: str, password: str = "correct horse") -> None:
    page.goto(base_url + "/signup")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    with page.expect_navigation():
        page.get_by_role("button", name="Create my account").click()


def mark_alive(page: Page) -> None:
    """A flag that survives htmx swaps but not a page load."""
    page.evaluate("window.__skymoNoReload = true")


def still_alive(page: Page) -> bool:
    return page.evaluate("window.__skymoNoReload === true")


# ----- playing -------------------------------------------------------------------------
NUMBER = r"-?\d+"


def pick_target(form: Locator) -> Locator:
    """Prefer a face-down card (rounds end sooner), else the first card offered."""
    down = form.locator("button.card.back")
    return down.first if down.count() else form.locator("button.card").first


class Player:
    """One player's choices. Turns follow a plan, take the discard, draw then discard it
    and turn a card over, draw and keep, and again, so that every kind of move is
    played; which card is turned at the start is picked at random (seeded)."""

    PLAN = ("take", "flip", "keep")

    def __init__(self, seed: int = 0, first: int = 0):
        self.rng = random.Random(seed)
        self.turns = first

    def next_move(self) -> str:
        move = self.PLAN[self.turns % len(self.PLAN)]
        self.turns += 1
        return move

    def pick(self, n: int) -> int:
        return self.rng.randrange(n)


def act(page: Page, player: Player, observe=None) -> str | None:
    """Do one thing this page's player can do now, by clicking; None if nothing.
    observe(page, moment) sees the page in the middle of a turn: "drawn" (a drawn card
    showing), "take" or "flip" (choosing the card the move goes to)."""
    observe = observe or (lambda page, moment: None)
    settle(page)
    if page.locator(RESULTS).count():
        return None
    reveal = page.locator("form.act-reveal button.card")
    if reveal.count():
        click_and_wait_change(page, reveal.nth(player.pick(reveal.count())))
        return "reveal"
    next_round = page.get_by_role("button", name="Next round")
    if next_round.count():
        click_and_wait_change(page, next_round)
        return "next round"
    draw = page.get_by_role("button", name="Draw a card", exact=True)
    if not draw.count():
        return None
    move = player.next_move()
    take = page.get_by_role("link", name=re.compile(rf"^Take the {NUMBER}$"))
    if move == "take" and take.count():
        click(page, take)
        form = page.locator("form.act-take_discard")
        expect(form).to_be_visible()
        observe(page, "take")
        click_and_wait_change(page, pick_target(form))
        return "take"
    click_and_wait_change(page, draw)
    drawn = page.get_by_role("img", name=re.compile(rf"^Your drawn card: {NUMBER}$"))
    expect(drawn).to_be_visible()
    observe(page, "drawn")
    flip = page.get_by_role(
        "link", name=re.compile(rf"^Discard the {NUMBER} and turn a card over$")
    )
    if move == "flip" and flip.count():
        click(page, flip)
        form = page.locator("form.act-discard_drawn")
        expect(form).to_be_visible()
        observe(page, "flip")
        click_and_wait_change(page, pick_target(form))
        return "draw, discard and flip"
    click_and_wait_change(page, pick_target(page.locator("form.act-keep_drawn")))
    return "draw and keep"


def sync(pages: list[Page], at_least: int, timeout: float = 10_000) -> None:
    """Wait until every page shows version `at_least` or later (pushed over its socket)."""
    for page in pages:
        wait_version(page, at_least, timeout)


def play_until_over(pages: list[Page], observe=None, seed=0, limit=150) -> list[str]:
    """Everyone clicks what they can until every page shows the game results. After each
    move every other page must receive it (a push: nobody reloads). Returns the moves.
    observe(page, moment): as for act(), and "look" before each page acts, "end" at the
    end."""
    observe = observe or (lambda page, moment: None)
    players = [Player(seed + i, first=i) for i in range(len(pages))]
    deadline = time.monotonic() + limit
    moves: list[str] = []
    idle_at = None
    while not all(page.locator(RESULTS).count() for page in pages):
        assert time.monotonic() < deadline, f"the game did not end; moves so far: {moves}"
        acted = False
        for i, page in enumerate(pages):
            observe(page, "look")
            did = act(page, players[i], observe)
            if did:
                acted = True
                moves.append(f"{i}: {did}")
                sync(pages, version(page))
        if acted:
            continue
        newest = max(version(page) for page in pages)
        if idle_at != newest:
            idle_at = newest  # let every page catch up, then look again
            sync(pages, newest)
        else:
            # Nobody can act and everyone is up to date: a bot (or a timer) moves next.
            wait_version(pages[0], newest + 1, timeout=15_000)
    for page in pages:
        settle(page)
        observe(page, "end")
    return moves


def ranking(page: Page) -> list[tuple[str, str, str]]:
    rows = page.locator(".ranking li")
    return [
        (
            row.locator(".rank").inner_text(),
            row.locator(".name").inner_text(),
            row.locator(".total").inner_text(),
        )
        for row in rows.all()
    ]


# ----- page checks ---------------------------------------------------------------------
INTERACTIVE_ROLES = {
    "button",
    "link",
    "textbox",
    "spinbutton",
    "combobox",
    "checkbox",
    "radio",
    "menuitem",
    "searchbox",
    "slider",
    "switch",
    "listbox",
}


def unnamed_controls(page: Page) -> list[str]:
    """Controls whose accessible name (as Chromium computes it) is empty."""
    cdp = page.context.new_cdp_session(page)
    try:
        nodes = cdp.send("Accessibility.getFullAXTree")["nodes"]
    finally:
        cdp.detach()
    bad, seen = [], 0
    for node in nodes:
        role = node.get("role", {}).get("value")
        if node.get("ignored") or role not in INTERACTIVE_ROLES:
            continue
        seen += 1
        name = (node.get("name") or {}).get("value", "")
        if not str(name).strip():
            bad.append(f"{role} (node {node.get('backendDOMNodeId')}) has no accessible name")
    assert seen, "no controls found in the accessibility tree"
    return bad


CARD_CHECK = """() => {
  const problems = [];
  const where = /Row (\\d+), column (\\d+): (-?\\d+|face down|cleared)$/;
  for (const card of document.querySelectorAll('.card')) {
    const label = (card.getAttribute('aria-label') || '').trim();
    const shown = card.textContent.trim();
    const html = card.outerHTML.slice(0, 120);
    if (!label) { problems.push('card without aria-label: ' + html); continue; }
    if (card.closest('.grid')) {
      const m = label.match(where);
      if (!m) { problems.push('grid card label lacks position and value: ' + label); continue; }
      const value = m[3];
      if (card.classList.contains('back') && value !== 'face down')
        problems.push('face-down card not labelled face down: ' + label);
      if (shown && value !== shown)
        problems.push(`card shows ${shown} but is labelled: ${label}`);
      if (!shown && /^-?\\d+$/.test(value))
        problems.push('blank card labelled with a value: ' + label);
    } else {
      if (shown && !new RegExp('(^|\\\\D)' + shown.replace('-', '\\\\-') + '(\\\\D|$)').test(label))
        problems.push(`pile card shows ${shown} but is labelled: ${label}`);
      if (!/pile|drawn/i.test(label))
        problems.push('pile card label does not say which pile: ' + label);
    }
  }
  return problems;
}"""


def card_label_problems(page: Page) -> list[str]:
    return page.evaluate(CARD_CHECK)


TARGETS = """(min) => {
  const small = [];
  const seen = new Set();
  const controls = 'button, a[href], input, select, textarea, [role=button]';
  for (let el of document.querySelectorAll(controls)) {
    if (el.type === 'hidden' || el.closest('.sr-only')) continue;
    // A checkbox's target is its label (the whole row is clickable).
    if (el.matches('input[type=checkbox], input[type=radio]') && el.closest('label')) {
      el = el.closest('label');
    }
    if (seen.has(el)) continue;
    seen.add(el);
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.display === 'none') continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    if (box.width < min - 0.5 || box.height < min - 0.5) {
      const name = el.getAttribute('aria-label') || el.textContent || el.id || el.tagName;
      const size = `${box.width.toFixed(1)}×${box.height.toFixed(1)}`;
      small.push(`${el.tagName.toLowerCase()} "${name.trim().slice(0, 50)}" is ${size}`);
    }
  }
  return small;
}"""


def small_targets(page: Page, minimum: int = 44) -> list[str]:
    return page.evaluate(TARGETS, minimum)


def horizontal_overflow(page: Page) -> int:
    """How many CSS pixels the document is wider than the viewport (0: none)."""
    return page.evaluate(
        "() => Math.max(0, document.documentElement.scrollWidth - window.innerWidth)"
    )


AXE = Axe()  # axe-core, as the axe-playwright-python package ships it


def axe_violations(page: Page) -> list[str]:
    """Every rule axe-core finds broken on the page now, whatever its impact (minor
    ones too), each with the elements that break it."""
    found = AXE.run(page).response["violations"]
    return [
        f"axe {v['id']} ({v['impact']}): {v['help']}: "
        + "; ".join(node["html"][:160] for node in v["nodes"][:5])
        for v in found
    ]


def headings_one(page: Page) -> list[str]:
    """A page names itself in exactly one <h1>."""
    texts = page.locator("h1").all_inner_texts()
    if len(texts) != 1:
        return [f"{len(texts)} h1 headings (one expected): {texts}"]
    return []


def audit(page: Page, where: str) -> list[str]:
    """Every problem the checks find on this page now, each prefixed with `where`."""
    settle(page)
    problems = unnamed_controls(page) + card_label_problems(page) + small_targets(page)
    problems += axe_violations(page) + headings_one(page)
    overflow = horizontal_overflow(page)
    if overflow:
        problems.append(f"the document is {overflow}px wider than the viewport")
    return [f"{where}: {p}" for p in problems]


SIZES = {"phone": PHONE, "desktop": DESKTOP}


def shoot(page: Page, screenshots, name: str, size: str) -> None:
    settle(page)
    page.screenshot(path=screenshots / f"{name}-{size}.png")


def in_view(page: Page, target) -> bool:
    """The element (a selector or a locator) lies inside the viewport: nothing to scroll."""
    loc = page.locator(target) if isinstance(target, str) else target
    return loc.evaluate(
        """el => { const r = el.getBoundingClientRect();
           return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight
                  && r.right <= innerWidth; }"""
    )


OUT_OF_VIEW = """(selectors) => {
  const out = [];
  for (const selector of selectors) {
    const found = document.querySelectorAll(selector);
    if (!found.length) out.push(`nothing is ${selector}`);
    found.forEach((el, i) => {
      const r = el.getBoundingClientRect();
      if (r.top < -0.5 || r.left < -0.5 || r.bottom > innerHeight + 0.5
          || r.right > innerWidth + 0.5)
        out.push(`${selector} #${i + 1} at ${Math.round(r.left)},${Math.round(r.top)}`
                 + `-${Math.round(r.right)},${Math.round(r.bottom)} is out of view`);
    });
  }
  return out;
}"""


def out_of_view(page: Page, selectors: list[str]) -> list[str]:
    """What of each selector's elements lies outside the viewport as the page is scrolled
    now (and each selector that finds nothing)."""
    return page.evaluate(OUT_OF_VIEW, selectors)

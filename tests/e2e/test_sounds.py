"""Game sounds: off until the player turns them on with a labelled switch, with a
volume; then a cue for a draw, a card turned over, a column (or row) cleared, your turn
and the round's end. Reduced motion does not silence them (only the switch does)."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from tests.e2e.e2e_helpers import (
    PHONE,
    Player,
    act,
    add_bot,
    create_table,
    open_rules,
    set_rules,
    settle,
    start,
    version,
    wait_version,
)

pytestmark = pytest.mark.e2e

# Every oscillator the page makes, with its note (the cues are made in the page).
LISTEN = """
window.__notes = [];
const oscillator = AudioContext.prototype.createOscillator;
AudioContext.prototype.createOscillator = function () {
  const made = oscillator.call(this);
  window.__notes.push(made);
  return made;
};
window.__levels = [];
const level = AudioParam.prototype.setValueAtTime;
AudioParam.prototype.setValueAtTime = function (value, at) {
  window.__levels.push(value);
  return level.call(this, value, at);
};
"""
# What the log said, line by line, as it came, with the phase of the board it came with.
READ_LOG = """() => { window.__log = new Set();
  new MutationObserver(() => document.querySelectorAll('#table .log li')
      .forEach((li) => window.__log.add(
        document.querySelector('#table .board').className + '|' + li.textContent)))
    .observe(document.getElementById('content'), {childList: true, subtree: true}); }"""
CUES = {
    "turn": [660, 880],
    "draw": [392],
    "flip": [523],
    "clear": [523, 659, 784],
    "round": [784, 659, 523, 392],
}


def heard(notes: list[float], cue: str) -> bool:
    run = CUES[cue]
    return any(notes[i : i + len(run)] == run for i in range(len(notes) - len(run) + 1))


def test_cues_are_heard_once_chosen_even_with_reduced_motion(server, new_context):
    context = new_context(**PHONE, reduced_motion="reduce")
    context.add_init_script(LISTEN)
    page = context.new_page()
    create_table(page, server.url, "Ann")
    open_rules(page)
    page.get_by_label("Rows of equal cards clear too").check()
    set_rules(page, **{"Rows": "2", "Columns": "2", "End score": "10"})
    add_bot(page)
    # Off until chosen: the whole setup makes no sound.
    start(page)
    player = Player(seed=3)
    for _ in range(2):
        act(page, player)
    assert page.evaluate("window.__notes.length") == 0
    # The switch and the volume, in the header's sound menu.
    page.locator("details.sound-menu summary").click()
    volume = page.get_by_label("Volume")
    expect(volume).to_be_disabled()
    page.get_by_label("Game sounds").check()
    expect(volume).to_be_enabled()
    volume.fill("30")
    page.locator("details.sound-menu summary").click()
    page.evaluate(READ_LOG)
    # Play on until the round ends.
    deadline = time.monotonic() + 60
    while not page.locator(".board.phase-round_over, .board.phase-game_over").count():
        assert time.monotonic() < deadline, "the round did not end"
        if act(page, player) is None:
            wait_version(page, version(page) + 1, timeout=15_000)
        settle(page)
    page.wait_for_timeout(300)
    notes = page.evaluate("window.__notes.map((o) => o.frequency.value)")
    log = " | ".join(page.evaluate("[...window.__log]"))
    for cue in ("turn", "draw", "round"):
        assert heard(notes, cue), (cue, notes, log)
    assert heard(notes, "flip") or heard(notes, "clear"), (notes, log)
    # A clear in play is heard (one that ends the round is heard as the round's end).
    if any("phase-play" in line and "cleared" in line for line in log.split(" | ")):
        assert heard(notes, "clear"), (notes, log)
    # The volume chosen: each note starts at a quarter of full scale times 30%.
    levels = page.evaluate("window.__levels")
    assert levels and all(abs(v - 0.25 * 0.3) < 1e-6 for v in levels[-5:]), levels

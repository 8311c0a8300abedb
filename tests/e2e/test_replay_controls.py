"""Replays in a browser, on a phone: the controls, the arrow keys and the round links
swap the board with htmx; with JavaScript off the same links load pages; an uploaded
record steps too."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.e2e_helpers import (
    DESKTOP,
    PHONE,
    horizontal_overflow,
    small_targets,
    unnamed_controls,
)

pytestmark = pytest.mark.e2e

RECORDS = Path(__file__).resolve().parents[1] / "data" / "conformance" / "records.jsonl"


def record_with_rounds(n: int) -> dict:
    with RECORDS.open() as fh:
        for line in fh:
            record = json.loads(line)
            scored = [r for r in record["rounds"] if "result" in r]
            if len(scored) >= n and record["final"]["ended"] and len(record["players"]) <= 4:
                return record
    raise AssertionError("no such record")


def store(server, code: str, record: dict) -> str:
    """A finished game of a table, as the server keeps it, in the server's database."""
    with sqlite3.connect(server.tmp / "skymo.db") as db:
        db.execute(
            'insert into "table" (code, status, public, rules, version, game_number,'
            " grace_seconds, rejoin_seconds, votes, created_at, updated_at)"
            " values (?, 'finished', 0, ?, 1, 1, 15, 180, '{}', datetime(), datetime())",
            (code, json.dumps(record["rules"])),
        )
        db.execute(
            "insert into gamerecord (table_id, number, record, finished_at)"
            " values (?, 1, ?, datetime())",
            (code, json.dumps(record)),
        )
    return f"{server.url}/t/{code}/games/1/replay"


def step(page: Page) -> int:
    return int(page.locator("#replay").get_attribute("data-step"))


def test_replay_controls_on_a_phone(server, new_context, screenshots):
    record = record_with_rounds(2)
    url = store(server, "REPLAY", record)
    page = new_context(**PHONE).new_page()
    page.goto(url)
    expect(page.locator("#replay-move")).to_have_text("Round 1: the cards are dealt.")
    page.screenshot(path=screenshots / "replay-deal-phone.png", full_page=True)
    nav = page.get_by_role("navigation", name="Replay controls")
    nav.get_by_role("link", name="Next").click()
    expect(page.locator("#replay")).to_have_attribute("data-step", "1")
    assert page.url.endswith("?step=1")  # htmx pushed the step's own address
    assert page.evaluate("document.querySelectorAll('header.top').length") == 1  # a swap
    page.keyboard.press("ArrowRight")
    expect(page.locator("#replay")).to_have_attribute("data-step", "2")
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#replay")).to_have_attribute("data-step", "1")
    page.keyboard.press("End")
    last = int(page.locator("#replay").get_attribute("data-count")) - 1
    expect(page.locator("#replay")).to_have_attribute("data-step", str(last))
    expect(page.locator("#replay-move")).to_contain_text("The game is over.")
    names = {p["id"]: p["name"] for p in record["players"]}
    ranking = page.locator("#replay .ranking li")
    expect(ranking).to_have_count(len(record["final"]["ranking"]))
    shown = sorted(ranking.nth(i).inner_text().split("\n")[1] for i in range(ranking.count()))
    assert shown == sorted(names[r["player"]] for r in record["final"]["ranking"])
    page.screenshot(path=screenshots / "replay-end-phone.png", full_page=True)
    page.get_by_role("navigation", name="Rounds").get_by_role("link", name="Round 2").click()
    expect(page.locator("#replay-move")).to_have_text("Round 2: the cards are dealt.")
    page.get_by_role("navigation", name="Rounds").get_by_role("link", name="Scores 1").click()
    expect(page.locator("#replay .results")).to_contain_text("Round 1 scores")
    page.screenshot(path=screenshots / "replay-scores-phone.png", full_page=True)
    assert unnamed_controls(page) == [] and small_targets(page) == []
    assert horizontal_overflow(page) == 0
    page.keyboard.press("Home")
    expect(page.locator("#replay")).to_have_attribute("data-step", "0")
    page.go_back()  # the browser's history holds the steps
    expect(page.locator("#replay")).not_to_have_attribute("data-step", "0")


def test_replay_links_work_without_javascript(server, new_context, screenshots):
    url = store(server, "NOJSRP", record_with_rounds(1))
    page = new_context(**DESKTOP, java_script_enabled=False).new_page()
    page.goto(url)
    with page.expect_navigation():
        page.get_by_role("link", name="Last").click()
    assert step(page) == int(page.locator("#replay").get_attribute("data-count")) - 1
    with page.expect_navigation():
        page.get_by_role("link", name="Previous").click()
    assert step(page) == int(page.locator("#replay").get_attribute("data-count")) - 2
    assert unnamed_controls(page) == [] and small_targets(page) == []
    page.screenshot(path=screenshots / "replay-desktop.png", full_page=True)


def test_an_uploaded_record_steps_on_a_phone(server, new_context, screenshots, tmp_path):
    record = record_with_rounds(1)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    page = new_context(**PHONE).new_page()
    page.goto(server.url + "/replay")
    page.get_by_label("Game record file").set_input_files(path)
    page.get_by_role("button", name="Open the replay").click()
    expect(page.locator("#replay")).to_have_attribute("data-step", "0")
    page.get_by_role("button", name="Next").click()
    expect(page.locator("#replay")).to_have_attribute("data-step", "1")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#replay")).to_have_attribute("data-step", "2")
    (tmp_path / "bad.json").write_text('{"format": "skymo.game/1"')
    page.get_by_label("Game record file").set_input_files(tmp_path / "bad.json")
    page.get_by_role("button", name="Open the replay").click()
    expect(page.locator("#record-error")).to_contain_text("This file is not JSON")
    assert unnamed_controls(page) == [] and small_targets(page) == []
    assert horizontal_overflow(page) == 0
    page.screenshot(path=screenshots / "replay-bad-upload-phone.png", full_page=True)

"""Alerts on a locked phone (Web Push): when it becomes a player's turn, a new round
starts or the game ends, each device that asked at that seat gets a notification, but
only while none of the player's pages at the table is visible.

`Alerting` wraps the table service's publisher: after a committed change is published
(in the process that committed it), the moments it brings are worked out at once (pure),
and the rest (reading subscriptions, claiming each moment once, calling the push
services) runs in the background, off the request's path. A subscription's `moment`
column is claimed by one UPDATE, so in the multi-process mode a moment is sent once."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from flask_babel import gettext as _
from py_vapid import Vapid, b64urlencode
from pywebpush import WebPushException, webpush

from app import i18n
from app.background import background
from app.engine import GAME_OVER, PLAY, SETUP
from app.storage import alerts
from app.storage.models import db
from app.storage.table_store import Snapshot

log = logging.getLogger(__name__)

TURN, ROUND, END = "turn", "round", "end"
SEND_TIMEOUT = 10  # seconds a push service gets to answer
GONE = (404, 410)  # the push service's answers for a subscription that expired


@dataclass(frozen=True)
class Moment:
    seat_id: int
    kind: str  # TURN, ROUND or END
    key: str  # names the moment: one alert per device and key
    round: int


def moments(snap: Snapshot) -> list[Moment]:
    """What the committed `snap` tells each seated player about: their turn, a round
    that starts, the game's end."""
    game = snap.game
    if game is None or not game.rounds:
        return []
    people = {s.player_id: s.id for s in snap.seats if s.bot is None}
    number = game.round.number
    if game.phase == GAME_OVER:
        key = f"{game.id}:end"
        return [Moment(seat, END, key, number) for seat in people.values()]
    seating = game.round.seating
    if game.phase == SETUP:
        key = f"{game.id}:r{number}"
        return [Moment(people[p], ROUND, key, number) for p in seating if p in people]
    if game.phase != PLAY:
        return []
    turn = game.round.turn
    # A turn's moves are written when it ends (a reshuffle is no turn): the count names
    # the turn, the same before and after its player draws.
    turns = sum(1 for m in game.round.moves if m["type"] != "reshuffle")
    found = []
    if turns == 0 and not game.rules.initial_flips:  # no reveals: the round starts in play
        key = f"{game.id}:r{number}"
        found = [
            Moment(people[p], ROUND, key, number) for p in seating if p in people and p != turn
        ]
    if turn in people:
        found.append(Moment(people[turn], TURN, f"{game.id}:r{number}:t{turns}", number))
    return found


def message(moment: Moment, code: str) -> dict:
    """The notification, in the current language (no card value: only what happens)."""
    if moment.kind == TURN:
        body = _("Your turn at table %(code)s.", code=code)
    elif moment.kind == ROUND:
        body = _("Round %(number)d begins at table %(code)s.", number=moment.round, code=code)
    else:
        body = _("The game at table %(code)s is over.", code=code)
    return {
        "title": _("Skymo · table %(code)s", code=code),
        "body": body,
        "url": f"/t/{code}",
        "tag": f"skymo-{code}",
    }


class Keys:
    """The instance's VAPID key pair: SKYMO_VAPID_PRIVATE_KEY (a base64url raw or DER
    key, as py_vapid reads it), else made once and kept in the instance folder."""

    def __init__(self, instance: Path, given: str | None = None):
        if given:
            self.vapid = Vapid.from_string(given)
        else:
            path = instance / "vapid_private.pem"
            if not path.exists():
                made_once(path)
            self.vapid = Vapid.from_file(str(path))

    @property
    def public(self) -> str:
        """The applicationServerKey a page subscribes with (base64url, uncompressed)."""
        return b64urlencode(
            self.vapid.public_key.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
        )


def made_once(path: Path) -> None:
    """A new key at `path`, unless another process made one first: written aside, then
    linked in place (a link never replaces a file), so processes sharing the instance
    folder all read the same key."""
    made = Vapid()
    made.generate_keys()
    aside = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}")
    aside.write_bytes(made.private_pem())
    aside.chmod(0o600)
    try:
        os.link(aside, path)
    except FileExistsError:
        pass
    finally:
        aside.unlink()


@contextmanager
def connected():
    """A database connection for the block: this thread's own if it has one open (a
    request's), else one opened and closed for it (a background job's)."""
    if not db.is_closed():
        yield
        return
    with db.connection_context():
        yield


@dataclass(eq=False)
class Alerts:
    """Sends each moment's notification to the devices of players not looking."""

    app: object  # the Flask app: its context for the language and the database
    keys: Keys
    subject: str  # VAPID "sub": a mailto: or https: address of the operator
    looking: Callable[[str, int], bool]  # looking(code, seat id): a page of it is visible
    # Tests: sent within the change's request, as their bots move (no thread left
    # reading a database the next test replaces).
    inline: bool = False
    last: dict = field(default_factory=dict)  # code -> keys handled here (same: no work)
    running: int = 0  # jobs in the background
    idle: threading.Condition = field(default_factory=threading.Condition)

    def after(self, snap: Snapshot) -> None:
        """A committed change: its moments, sent in the background if new here."""
        found = moments(snap)
        keys = frozenset(m.key for m in found)
        last = self.last
        if not found or last.get(snap.code) == keys:
            return
        if len(last) >= 4096:
            last.clear()
        last[snap.code] = keys
        if self.inline:
            self.send_all(snap.code, found)
            return
        with self.idle:
            self.running += 1
        background(lambda: self.job(snap.code, found), "skymo-alerts")

    def job(self, code: str, found: list[Moment]) -> None:
        try:
            self.send_all(code, found)
        finally:
            with self.idle:
                self.running -= 1
                self.idle.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Until no job runs in the background (tests), at most `timeout` seconds."""
        with self.idle:
            return self.idle.wait_for(lambda: self.running == 0, timeout)

    def send_all(self, code: str, found: list[Moment]) -> int:
        """Send what `found` calls for; returns how many notifications went out."""
        sent = 0
        try:
            with self.app.app_context(), connected():
                by_seat = {m.seat_id: m for m in found}
                for sub in alerts.of_seats(by_seat):
                    moment = by_seat[sub.seat_id]
                    if self.looking(code, sub.seat_id) or not alerts.claim(sub.id, moment.key):
                        continue
                    sent += self.send(sub, moment, code)
        except Exception:  # an alert lost must not break anything else
            log.exception("alerts for table %s failed", code)
        return sent

    def send(self, sub, moment: Moment, code: str) -> int:
        with i18n.speaking(sub.locale or i18n.DEFAULT):
            data = json.dumps(message(moment, code))
        info = {"endpoint": sub.endpoint, "keys": {"p256dh": sub.p256dh, "auth": sub.auth}}
        try:
            webpush(
                info,
                data,
                vapid_private_key=self.keys.vapid,
                vapid_claims={"sub": self.subject},
                timeout=SEND_TIMEOUT,
                ttl=60 * 60,
            )
        except WebPushException as exc:
            status = exc.response.status_code if exc.response is not None else None
            if status in GONE:
                alerts.drop(sub.id)
            else:
                log.warning("push to a device at table %s failed: %s", code, status)
            return 0
        except Exception as exc:  # the push service could not be reached
            log.warning("push to a device at table %s failed: %s", code, exc)
            return 0
        return 1


@dataclass(eq=False)
class Alerting:
    """The table service's publisher, with alerts after each published change."""

    publisher: object
    alerts: Alerts

    def publish(self, code: str, what: str = "table", snapshot: Snapshot | None = None) -> None:
        self.publisher.publish(code, what, snapshot)
        if snapshot is not None:
            self.alerts.after(snapshot)

    def broadcast(self, code: str, name: str, data) -> None:
        self.publisher.broadcast(code, name, data)

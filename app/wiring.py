"""The one place that puts Skymo together: the table service with its adapters, the
way boardgame.io builds `Master(game, storage, transport)`.

- One process (the default, SQLite or any database): the in-process hub publishes,
  presence is this process's, a thread runs each table's timers (app.live).
- Many processes (SKYMO_REDIS_URL, with PostgreSQL): the Redis fan-out publishes to
  every process, presence is shared in Redis, and the `Due` table is every process's
  scheduler (app.cluster).

`build` makes them and keeps them in `app.extensions`; `start` starts their threads
once the web layer is registered."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.cluster.broker import Broker
from app.cluster.due import DueScheduler
from app.cluster.fanout import Fanout
from app.cluster.looking import SharedLooking
from app.cluster.presence import SharedPresence
from app.features.alerts import Alerting, Alerts, Keys
from app.live.hub import Hub
from app.live.presence import Presence
from app.live.scheduler import InlineScheduler, Scheduler
from app.storage.table_store import store
from app.tables.automation import next_automatic, run_automatic
from app.tables.ports import Publisher
from app.tables.service import EXTENSION, TableService, Timing
from app.web import render
from app.web.services import SERVICES  # app.extensions key of the `Services`


@dataclass(eq=False)
class Services:
    tables: TableService
    hub: Hub  # this process's sockets
    presence: Presence
    publisher: Publisher  # every process's sockets at a table (the hub, or the fan-out)
    broker: Broker | None = None  # the multi-process mode's Redis
    shared: SharedPresence | None = None
    fanout: Fanout | None = None
    alerts: Alerts | None = None  # turn alerts on locked phones (Web Push)
    looking: SharedLooking | None = None  # visible pages in every process (alerts)

    @property
    def scheduler(self):
        return self.tables.scheduler


def build(app) -> Services:
    timing = Timing(
        bot_delay=float(app.config.get("BOT_DELAY", Timing.bot_delay)),
        next_round_seconds=float(app.config.get("NEXT_ROUND_SECONDS", 20)),
        inline_bots=bool(app.config.get("INLINE_BOTS", False)),
    )
    many = bool(app.config.get("REDIS_URL"))
    services = _many_processes(app, timing) if many else _one_process(timing)
    _with_alerts(app, services)
    app.extensions[SERVICES] = services
    app.extensions[EXTENSION] = services.tables
    return services


def _with_alerts(app, services: Services) -> None:
    """The table service's changes also alert the players not looking (app.features.alerts)."""
    keys = Keys(Path(app.instance_path), app.config.get("VAPID_PRIVATE_KEY"))
    subject = app.config.get("VAPID_SUBJECT") or "mailto:skymo@localhost"
    hub = services.hub
    looking = hub.looking
    if services.broker is not None:  # every process's pages
        shared = services.looking = SharedLooking(services.broker)
        hub.on_looking(shared.mark)

        def looking(code: str, seat_id: int) -> bool:
            return hub.looking(code, seat_id) or shared.looking(code, seat_id)

    inline = bool(app.config.get("ALERTS_INLINE", app.config.get("INLINE_BOTS", False)))
    services.alerts = Alerts(app, keys, subject, looking, inline=inline)
    tables = services.tables
    tables.publisher = Alerting(tables.publisher, services.alerts)


def _one_process(timing: Timing) -> Services:
    presence = Presence()
    hub = Hub(presence, render.render_push)
    scheduler = InlineScheduler() if timing.inline_bots else Scheduler(presence, timing)
    return Services(TableService(store, hub, scheduler, presence, timing), hub, presence, hub)


def _many_processes(app, timing: Timing) -> Services:
    broker = Broker(app.config["REDIS_URL"], app.config["REDIS_PREFIX"])
    shared = SharedPresence(broker)
    presence = Presence(shared)
    hub = Hub(presence, render.render_push)
    fanout = Fanout(
        app, broker, hub, store, shared, answered=render.answered_page, remote=render.from_remote
    )
    if timing.inline_bots:
        scheduler = InlineScheduler()
    else:
        scheduler = DueScheduler(
            lambda snap: next_automatic(snap, presence, timing),
            run_automatic,
            store.current,
            served=hub.codes,
            warm=presence.present,
        )
    tables = TableService(store, fanout, scheduler, presence, timing)
    return Services(tables, hub, presence, fanout, broker, shared, fanout)


def start(app) -> None:
    """Start the adapters' threads: Redis listeners and heartbeats, the scheduler."""
    services: Services = app.extensions[SERVICES]
    presence, hub = services.presence, services.hub
    if services.fanout is not None:
        fanout, broker = services.fanout, services.broker

        def notify(code: str, seat_id: int, present: bool) -> None:
            with app.app_context():  # listeners push and schedule, from the heartbeat thread
                presence.notify(code, seat_id, present)

        hub.on_holding(fanout.holding)
        looking = services.looking

        def beat() -> None:
            fanout.refresh()
            looking.beat(hub.looking_seats())

        services.shared.start(presence.held, notify, beat)
        broker.on_events(fanout.event)  # events (reactions) from other processes
        broker.listen(fanout.received, fanout.resync)
    scheduler = services.scheduler
    scheduler.start(app)
    presence.on_change(lambda code, seat_id, present: scheduler.wake(code))

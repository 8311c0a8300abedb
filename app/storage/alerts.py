"""The devices that asked to be told when it is their turn (PushSubscription rows): kept,
claimed once per moment, and removed."""

from __future__ import annotations

from app.storage.models import PushSubscription, db

DEVICES = 8  # subscriptions kept per seat: the newest (a seat's requests cannot fill a table)


def subscribe(code: str, seat_id: int, endpoint: str, p256dh: str, auth: str, locale: str):
    """Keep (or renew) this device's subscription at the seat."""
    of_seat = PushSubscription.seat == seat_id
    with db.atomic():
        PushSubscription.delete().where(of_seat & (PushSubscription.endpoint == endpoint)).execute()
        PushSubscription.create(
            table=code, seat=seat_id, endpoint=endpoint, p256dh=p256dh, auth=auth, locale=locale
        )
        newest = (
            PushSubscription.select(PushSubscription.id)
            .where(of_seat)
            .order_by(PushSubscription.id.desc())
            .limit(DEVICES)
        )
        PushSubscription.delete().where(of_seat & PushSubscription.id.not_in(newest)).execute()


def unsubscribe(seat_id: int, endpoint: str) -> int:
    return (
        PushSubscription.delete()
        .where((PushSubscription.seat == seat_id) & (PushSubscription.endpoint == endpoint))
        .execute()
    )


def of_seats(seat_ids) -> list[PushSubscription]:
    ids = list(seat_ids)
    if not ids:
        return []
    return list(PushSubscription.select().where(PushSubscription.seat.in_(ids)))


def claim(subscription_id: int, moment: str) -> bool:
    """Mark the subscription as alerted of `moment`: True for the one caller whose
    update changed the row (one process sends each alert, even when several try)."""
    changed = (
        PushSubscription.update(moment=moment)
        .where(
            (PushSubscription.id == subscription_id)
            & (PushSubscription.moment.is_null() | (PushSubscription.moment != moment))
        )
        .execute()
    )
    return changed == 1


def drop(subscription_id: int) -> int:
    """An expired subscription (the push service answered 404 or 410)."""
    return PushSubscription.delete().where(PushSubscription.id == subscription_id).execute()


def forget_table(code: str) -> int:
    """A closed table's subscriptions go."""
    return PushSubscription.delete().where(PushSubscription.table == code).execute()


def forget_seats(seat_ids) -> int:
    """A seat that left, or a deleted account's seats: their subscriptions go."""
    ids = list(seat_ids)
    if not ids:
        return 0
    return PushSubscription.delete().where(PushSubscription.seat.in_(ids)).execute()

"""External sales: how many tickets an organisation's own shop sold for an event."""

from __future__ import annotations

import dataclasses

from sqlalchemy.orm import Session

from models.db import insert_for
from models.errors import Conflict
from models.events import Event
from models.tickets import ExternalSales


@dataclasses.dataclass(frozen=True)
class SalesReport:
    """The last reported count (0 and time 0 before anything was reported)."""

    eventId: str  # noqa: N815 - the API's field name
    external: bool
    sold: int
    updatedAt: int  # noqa: N815 - the API's field name


def external_sales(session: Session, *, event: Event) -> SalesReport:
    """The last count reported for `event`."""
    row = session.get(ExternalSales, event.id)
    return SalesReport(eventId=event.id, external=event.external_ticketing,
                       sold=row.sold if row else 0, updatedAt=row.updated_at if row else 0)


def report_external_sales(session: Session, *, event: Event, sold: int, now: int) -> SalesReport:
    """Store the count the organisation's shop sold so far; 409 without external ticketing."""
    if not event.external_ticketing:
        raise Conflict("This event does not use external ticketing.")
    statement = insert_for(session, ExternalSales).values(event_id=event.id, sold=sold,
                                                          updated_at=now)
    session.execute(statement.on_conflict_do_update(
        index_elements=[ExternalSales.event_id], set_={"sold": sold, "updated_at": now}))
    session.expire_all()
    return SalesReport(eventId=event.id, external=True, sold=sold, updatedAt=now)

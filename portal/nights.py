"""What the portal pages look up: tonight's events at an organisation's door, and a ticket
as its holder sees it. Plain functions on the session, like the rest of `models`."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select
from sqlalchemy.orm import Session

from models import door, events
from models.errors import NotFound
from models.events import Event
from models.tickets import Ticket

# Events listed as tonight's at one door; an organisation rarely runs more than a few.
TONIGHT_LIMIT = 20


def tonight(session: Session, *, organisation_id: str, today: dt.date,
            moment: dt.datetime) -> list[Event]:
    """The organisation's approved events whose doors are open at `moment` (the window of
    `models.door`: a night that began yesterday may still be open this morning)."""
    filters = events.EventFilters(organisation_id=organisation_id,
                                  date_from=today - dt.timedelta(days=1), date_to=today)
    listed = events.list_events(session, filters=filters, today=today, after=None,
                                limit=TONIGHT_LIMIT).items
    return [event for event in listed if _open(event, moment)]


def _open(event: Event, moment: dt.datetime) -> bool:
    opens, closes = door.door_window(event)
    return opens <= moment <= closes


def holders_ticket(session: Session, *, code: str, person_id: str) -> tuple[Ticket, Event]:
    """The person's ticket with this code and its event; `NotFound` for a code that is
    someone else's, waits for its buyer, or does not exist (the three look the same)."""
    if "\x00" in code:
        # No ticket holds a NUL (PostgreSQL cannot even compare one).
        raise NotFound("ticket")
    found = session.execute(
        select(Ticket, Event).join(Event, Event.id == Ticket.event_id)
        .where(Ticket.code == code, Ticket.person_id == person_id)
        .order_by(Event.date.desc(), Ticket.id)
    ).first()
    if found is None:
        raise NotFound("ticket")
    return found.Ticket, found.Event

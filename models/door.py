"""The door: validating a ticket code and marking the ticket used.

Acceptance is one conditional UPDATE (`status = 'valid'` -> `'used'`), so when
two doors scan the same ticket at the same moment exactly one of them gets `ok`.
A scan is one round trip to read and, for a valid ticket, one to take it, each in
autocommit (`adapters.direct.DirectStatements`): no transaction is needed around them, the
UPDATE decides. A ticket with a holder account is taken in a transaction together with
the badges it earns, so that the two are stored or neither is.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import re
from collections.abc import Callable
from typing import NamedTuple
from zoneinfo import ZoneInfo

from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import Session

from models import badges, events
from models.events import Event
from models.tickets import Ticket

# Events listed as tonight's at one door; an organisation rarely runs more than a few.
TONIGHT_LIMIT = 20
# Doors open this long before the start and close this long after the end.
DOORS_BEFORE = dt.timedelta(hours=6)
DOORS_AFTER = dt.timedelta(hours=12)
_URL_CODE = re.compile(r"/t/([^/?#\s]+)")


@dataclasses.dataclass(frozen=True)
class Verdict:
    """What the door screen shows for one scan."""

    ok: bool
    status: str
    title: str
    sub: str
    type: str
    holder: str
    eventId: str  # noqa: N815 - the API's field name
    scannedAt: int  # noqa: N815 - the API's field name
    reason: str | None = None


class _DoorTicket(NamedTuple):
    id: str
    status: str
    type: str
    holder: str
    person_id: str | None
    scanned_at: int | None


class _DoorEvent(NamedTuple):
    id: str
    slug: str
    title: str
    timezone: str
    date: dt.date
    last_date: dt.date
    end_date: dt.date | None
    start: str
    end: str


# Only what the door needs, in columns of the tables (Core statements, built once: no
# entities, none of an event's related rows, no ORM compilation a scan).
_tickets, _events = Ticket.__table__.c, Event.__table__.c
_TICKET_COLUMNS = len(_DoorTicket._fields)
_CANDIDATES = (
    select(*(_tickets[name] for name in _DoorTicket._fields),
           *(_events[name].label(f"event_{name}") for name in _DoorEvent._fields))
    .join_from(Ticket.__table__, Event.__table__, _events.id == _tickets.event_id)
    .where(_tickets.code == bindparam("code"),
           _events.organisation_id == bindparam("organisation_id"))
)
# Taking a valid ticket: conditional, so that of two doors exactly one takes it (a row).
_TAKE = (update(Ticket.__table__)
         .where(_tickets.id == bindparam("ticket_id"), _tickets.status == "valid")
         .values(status="used", scanned_at=bindparam("now"))
         .returning(_tickets.id))
_STATE = select(_tickets.status, _tickets.scanned_at).where(_tickets.id == bindparam("ticket_id"))


def code_of(scanned: str) -> str:
    """The ticket code in a scanned value: the code itself, or the `/t/<code>` of a URL."""
    match = _URL_CODE.search(scanned)
    return (match.group(1) if match else scanned).strip()


def door_window(event: Event) -> tuple[dt.datetime, dt.datetime]:
    """When the doors are open for `event`, as aware datetimes in its timezone."""
    zone = ZoneInfo(event.timezone)
    start = dt.datetime.combine(event.date, dt.time.fromisoformat(event.start), zone)
    end = dt.datetime.combine(event.last_date, dt.time.fromisoformat(event.end), zone)
    if end <= start or (event.end_date is None and event.end <= event.start):
        # Ends after midnight: the night runs into the next morning.
        end += dt.timedelta(days=1)
    return start - DOORS_BEFORE, end + DOORS_AFTER


# `DirectStatements.execute`, and a context manager's factory giving a session in a transaction.
Direct = Callable[[object, dict], list]
Transaction = Callable[[], contextlib.AbstractContextManager[Session]]


def scan(direct: Direct, transaction: Transaction, *, organisation_id: str, scanned: str,
         event_id: str | None, now: int) -> Verdict:
    """Validate `scanned` for the organisation's door and mark the ticket used: `direct`
    (`DirectStatements.execute`) reads and takes it; a ticket with a holder account is taken
    and its badges awarded in the session of `transaction()` (a unit of work's `transaction`, or `within`
    a request's session). See the module's text."""
    code = code_of(scanned)
    if "\x00" in code or (event_id and "\x00" in event_id):
        # No ticket or event holds a NUL (PostgreSQL cannot even compare one).
        return _refuse("unknown", "No ticket with this code for this organisation.", now=now)
    candidates = [(_DoorTicket(*row[:_TICKET_COLUMNS]), _DoorEvent(*row[_TICKET_COLUMNS:]))
                  for row in direct(_CANDIDATES, {"code": code,
                                                  "organisation_id": organisation_id})]
    if not candidates:
        return _refuse("unknown", "No ticket with this code for this organisation.", now=now)
    moment = dt.datetime.fromtimestamp(now, dt.UTC)
    if event_id is not None:
        wanted = [(t, e) for t, e in candidates if event_id in (e.id, e.slug)]
        if not wanted:
            ticket, event = candidates[0]
            return _refuse("wrong_event", f"This ticket is for {event.title}.", ticket=ticket,
                           event=event, now=now)
        candidates = wanted
    # The same code may exist for several events of the organisation: tonight's wins.
    candidates.sort(key=lambda pair: not _open(pair[1], moment))
    ticket, event = candidates[0]
    if ticket.status == "void":
        return _refuse("void", "This ticket was refunded or cancelled.", ticket=ticket,
                       event=event, now=now)
    if not _open(event, moment):
        opens, _closes = door_window(event)
        when = opens.strftime("%d-%m-%Y %H:%M")
        return _refuse("not_today", f"This ticket is for {event.title}; doors open {when}.",
                       ticket=ticket, event=event, now=now)
    # A ticket already used needs no write; a valid one is taken by one conditional UPDATE,
    # and a door that lost the race to another reads what the winner wrote.
    accepted = ticket.status == "valid" and _take(direct, transaction, ticket, now)
    if not accepted:
        if ticket.status == "valid":
            status, scanned_at = direct(_STATE, {"ticket_id": ticket.id})[0]
            ticket = ticket._replace(status=status, scanned_at=scanned_at)
        if ticket.status == "void":
            return _refuse("void", "This ticket was refunded or cancelled.", ticket=ticket,
                           event=event, now=now)
        when = dt.datetime.fromtimestamp(ticket.scanned_at or now, ZoneInfo(event.timezone))
        return _refuse("used", f"Already scanned at {when:%H:%M} on {when:%d-%m-%Y}.",
                       ticket=ticket, event=event, now=now)
    return Verdict(ok=True, status="ok", title=event.title, sub=_line(ticket),
                   type=ticket.type, holder=ticket.holder, eventId=event.id, scannedAt=now)


def within(session: Session) -> Transaction:
    """`scan`'s `transaction` in a session whose transaction its caller commits."""
    return lambda: contextlib.nullcontext(session)


def _take(direct: Direct, transaction: Transaction, ticket: _DoorTicket, now: int) -> bool:
    """Whether this scan took the valid `ticket` (another door may have, meanwhile)."""
    params = {"ticket_id": ticket.id, "now": now}
    if ticket.person_id is None:
        return bool(direct(_TAKE, params))
    with transaction() as session:
        taken = bool(session.execute(_TAKE, params).all())
        if taken:
            # What the holder attended grew: their badges may have too.
            badges.award(session, [ticket.person_id])
        return taken


def _open(event: Event, moment: dt.datetime) -> bool:
    opens, closes = door_window(event)
    return opens <= moment <= closes


def _line(ticket: _DoorTicket) -> str:
    return " · ".join(part for part in (ticket.type, ticket.holder) if part)


def _refuse(status: str, reason: str, *, now: int, ticket: _DoorTicket | None = None,
            event: _DoorEvent | None = None) -> Verdict:
    return Verdict(ok=False, status=status, reason=reason,
                   title=event.title if event else "Unknown ticket", sub=reason,
                   type=ticket.type if ticket else "", holder=ticket.holder if ticket else "",
                   eventId=event.id if event else "", scannedAt=now)


def tonight(session: Session, *, organisation_id: str, today: dt.date,
            moment: dt.datetime) -> list[events.EventSummary]:
    """The organisation's approved events whose doors are open at `moment` (a night that
    began yesterday may still be open this morning)."""
    filters = events.EventFilters(organisation_id=organisation_id,
                                  date_from=today - dt.timedelta(days=1), date_to=today)
    listed = events.list_events(session, filters=filters, today=today, after=None,
                                limit=TONIGHT_LIMIT).items
    return [event for event in listed if _open(event, moment)]

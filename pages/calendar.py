"""Events as iCalendar (RFC 5545), written with the `icalendar` package: one event's file
(`/events/{slug}.ics`) and the feed of a search (`/calendar.ics?<filters of GET /v1/events>`).

Times are given in UTC (`...Z`) rather than with a TZID, which would need a VTIMEZONE
component describing the zone's rules inside the file; the event's own time zone decides
which UTC moments its local times are, across midnight and the DST changes alike.

`icalendar` is imported by the first file written, not with this module: ~2.5 MB of every
worker, most of which never write one.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

if TYPE_CHECKING:
    import icalendar

PRODUCT = "-//Event Agenda Service//Public pages//EN"
# How often a subscribed calendar app should fetch the feed again (X-PUBLISHED-TTL,
# REFRESH-INTERVAL of RFC 7986).
REFRESH = dt.timedelta(hours=1)
# SEQUENCE is the seconds from this moment (2020-01-01 UTC) to the event's last change:
# it grows with every change without a stored counter and fits the 32-bit integers
# calendar apps keep it in until 2088.
SEQUENCE_EPOCH = 1577836800


def times(event) -> tuple[dt.datetime, dt.datetime]:
    """Start and end in UTC of an `Event` or `EventSummary`; the new dates of a postponed one.

    The event ends at `end` on its last day, or on the day after when `end` is not
    after `start` (a night from 23:00 to 06:00).
    """
    zone = ZoneInfo(event.timezone)
    shift = (event.postponed_to - event.date) if event.postponed_to else dt.timedelta()
    first, last = event.date + shift, (event.end_date or event.date) + shift
    start, end = dt.time.fromisoformat(event.start), dt.time.fromisoformat(event.end)
    if end <= start:
        last += dt.timedelta(days=1)
    return (dt.datetime.combine(first, start, zone).astimezone(dt.UTC),
            dt.datetime.combine(last, end, zone).astimezone(dt.UTC))


def location(venue) -> str:
    """Venue, address and city, the city once (an address may already end in it)."""
    parts = [venue.name]
    if venue.address and venue.address != venue.name:
        parts.append(venue.address)
    if venue.city and not parts[-1].casefold().endswith(venue.city.casefold()):
        parts.append(venue.city)
    return ", ".join(part for part in parts if part)


def vevent(event, *, url: str, host: str, description: str = "") -> icalendar.Event:
    """The VEVENT of an `Event` or `EventSummary`: its UID is the event's id at the site's
    host, the same at every fetch; DTSTAMP is its last change, so an unchanged event is
    written with the same bytes (and the feed keeps its ETag)."""
    import icalendar

    start, end = times(event)
    changed = dt.datetime.fromtimestamp(event.updated_at, dt.UTC)
    if event.cancelled and event.cancel_reason:
        description = f"{event.cancel_reason}\n\n{description}".strip()
    component = icalendar.Event()
    component.add("uid", f"{event.id}@{host}")
    component.add("dtstamp", changed)
    component.add("last-modified", changed)
    component.add("sequence", max(0, event.updated_at - SEQUENCE_EPOCH))
    component.add("dtstart", start)
    component.add("dtend", end)
    component.add("summary", event.title)
    component.add("location", location(event.venue))
    component.add("url", url)
    component.add("status", "CANCELLED" if event.cancelled else "CONFIRMED")
    if description:
        component.add("description", description)
    return component


def _calendar(name: str | None = None) -> icalendar.Calendar:
    import icalendar

    calendar = icalendar.Calendar()
    calendar.add("prodid", PRODUCT)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("method", "PUBLISH")
    if name is not None:
        calendar.add("name", name)
        calendar.add("x-wr-calname", name)
        calendar.add("refresh-interval", REFRESH, parameters={"VALUE": "DURATION"})
        calendar.add("x-published-ttl", icalendar.vDuration(REFRESH))
    return calendar


def event_calendar(event, *, url: str, host: str) -> bytes:
    """The VCALENDAR of one event (an `Event`, with its description)."""
    calendar = _calendar()
    calendar.add_component(vevent(event, url=url, host=host, description=event.description))
    return calendar.to_ical()


def feed(events: Iterable, *, name: str, url_of: Callable[[object], str], host: str) -> bytes:
    """The VCALENDAR of a subscription: `name`, refreshed hourly, one VEVENT per event."""
    calendar = _calendar(name)
    for event in events:
        calendar.add_component(vevent(event, url=url_of(event), host=host))
    return calendar.to_ical()

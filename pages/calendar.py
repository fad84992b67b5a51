"""An event as an iCalendar (RFC 5545) file: one VEVENT, times in UTC.

Times are given in UTC (`...Z`) rather than with a TZID, which would need a
VTIMEZONE component describing the zone's rules inside the file.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from models.events import Event

PRODUCT = "-//Event Agenda Service//Public pages//EN"
# RFC 5545 3.1: lines of at most 75 octets, longer ones folded with CRLF and a space.
LINE_OCTETS = 75


def escape(text: str) -> str:
    """A TEXT value (RFC 5545 3.3.11): backslash, semicolon, comma and newlines escaped."""
    return (text.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,")
            .replace("\r\n", "\\n").replace("\r", "\\n").replace("\n", "\\n"))


def fold(line: str) -> str:
    """One content line folded into pieces of at most 75 octets, never inside a character."""
    pieces, piece, size = [], "", 0
    for char in line:
        octets = len(char.encode("utf-8"))
        # Continuation lines start with a space, which counts toward their 75 octets.
        if size + octets > LINE_OCTETS:
            pieces.append(piece)
            piece, size = " ", 1
        piece += char
        size += octets
    pieces.append(piece)
    return "\r\n".join(pieces)


def times(event: Event) -> tuple[dt.datetime, dt.datetime]:
    """Start and end in UTC; the new dates of a postponed event.

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


def _utc(moment: dt.datetime) -> str:
    return moment.strftime("%Y%m%dT%H%M%SZ")


def event_calendar(event: Event, *, url: str, stamp: dt.datetime, host: str) -> str:
    """The VCALENDAR of one event, CRLF-terminated lines, folded and escaped."""
    start, end = times(event)
    venue = event.venue
    location = ", ".join(part for part in (venue.name, venue.address, venue.city) if part)
    description = event.description or ""
    if event.cancelled and event.cancel_reason:
        description = f"{event.cancel_reason}\n\n{description}".strip()
    lines = [
        "BEGIN:VCALENDAR", "VERSION:2.0", f"PRODID:{PRODUCT}", "CALSCALE:GREGORIAN",
        "METHOD:PUBLISH", "BEGIN:VEVENT",
        f"UID:{event.id}@{host}",
        f"DTSTAMP:{_utc(stamp)}",
        f"DTSTART:{_utc(start)}",
        f"DTEND:{_utc(end)}",
        f"SUMMARY:{escape(event.title)}",
        f"LOCATION:{escape(location)}",
        f"URL:{url}",
        f"STATUS:{'CANCELLED' if event.cancelled else 'CONFIRMED'}",
    ]
    if description:
        lines.append(f"DESCRIPTION:{escape(description)}")
    lines += ["END:VEVENT", "END:VCALENDAR"]
    return "".join(fold(line) + "\r\n" for line in lines)

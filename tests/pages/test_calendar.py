"""An event's .ics file: one VEVENT per RFC 5545, read back with the `icalendar` package."""

from __future__ import annotations

import datetime as dt
import re

import icalendar

from tests.api import SITE
from tests.factories import EventFactory, VenueFactory


def _parse(body: bytes) -> icalendar.Calendar:
    """The calendar, read with `icalendar`; fails unless every line ends in CRLF and is at
    most 75 octets (RFC 5545 3.1)."""
    assert body.endswith(b"\r\n")
    physical = body[:-2].split(b"\r\n")
    assert all(b"\n" not in line and b"\r" not in line for line in physical)
    assert all(len(line) <= 75 for line in physical), max(physical, key=len)
    return icalendar.Calendar.from_ical(body)


def _unescape(value: str) -> str:
    return re.sub(r"\\([\\;,nN])", lambda m: "\n" if m.group(1) in "nN" else m.group(1), value)


def _event(calendar: icalendar.Calendar) -> dict[str, str]:
    """The calendar's one VEVENT: each property's value as written (escaped)."""
    assert str(calendar["VERSION"]) == "2.0" and calendar["PRODID"]
    assert not calendar.errors
    (vevent,) = calendar.walk("VEVENT")
    assert len(vevent.property_items()) == len(set(vevent)) + 2, "no property twice"
    return {name: vevent[name].to_ical().decode() for name in vevent}


def test_the_calendar_file_has_a_correct_vevent_in_utc(client, db):
    venue = VenueFactory(name="Shelter", address="Overhoeksplein 3", city="Amsterdam")
    event = EventFactory(title="Shelter Nights", date=dt.date(2031, 7, 4), start="23:00",
                         end="06:00", venue=venue)
    response = client.get(f"/events/{event.slug}.ics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/calendar")
    assert f'filename="{event.slug}.ics"' in response.headers["Content-Disposition"]
    vevent = _event(_parse(response.content))
    assert vevent["UID"] == f"{event.id}@127.0.0.1"
    assert re.fullmatch(r"\d{8}T\d{6}Z", vevent["DTSTAMP"])
    # 23:00 to 06:00 summer time in Amsterdam is 21:00 to 04:00 UTC, over midnight.
    assert (vevent["DTSTART"], vevent["DTEND"]) == ("20310704T210000Z", "20310705T040000Z")
    assert _unescape(vevent["SUMMARY"]) == "Shelter Nights"
    assert _unescape(vevent["LOCATION"]) == "Shelter, Overhoeksplein 3, Amsterdam"
    assert vevent["URL"] == f"{SITE}/events/{event.slug}"
    assert vevent["STATUS"] == "CONFIRMED"
    assert client.get(f"/events/{event.slug}", params={"format": "ics"}).content == \
        response.content


def test_text_is_escaped_and_long_lines_are_folded_between_characters(client, db):
    title = 'Back\\slash; comma, "quotes" and a new\nline'
    description = "Één nacht vol muziek — " * 12
    event = EventFactory(title=title, slug="escaped", description=description,
                         date=dt.date(2031, 1, 10), start="22:00", end="23:30")
    body = client.get("/events/escaped.ics").content
    assert b"\r\n " in body, "the description is folded"
    vevent = _event(_parse(body))
    assert vevent["SUMMARY"] == 'Back\\\\slash\\; comma\\, "quotes" and a new\\nline'
    assert _unescape(vevent["SUMMARY"]) == title
    assert _unescape(vevent["DESCRIPTION"]) == description
    # Winter time: UTC+1.
    assert (vevent["DTSTART"], vevent["DTEND"]) == ("20310110T210000Z", "20310110T223000Z")
    assert event.id in vevent["UID"]


def test_a_cancelled_event_is_a_cancelled_vevent(client, db):
    event = EventFactory(cancelled=True, cancel_reason="Storm")
    vevent = _event(_parse(client.get(f"/events/{event.slug}.ics").content))
    assert vevent["STATUS"] == "CANCELLED"
    assert _unescape(vevent["DESCRIPTION"]).startswith("Storm")


def test_a_postponed_or_multi_day_event_gets_its_real_days(client, db):
    postponed = EventFactory(date=dt.date(2031, 3, 7), postponed_to=dt.date(2031, 4, 4),
                             start="20:00", end="02:00")
    vevent = _event(_parse(client.get(f"/events/{postponed.slug}.ics").content))
    assert (vevent["DTSTART"], vevent["DTEND"]) == ("20310404T180000Z", "20310405T000000Z")
    festival = EventFactory(date=dt.date(2031, 8, 15), end_date=dt.date(2031, 8, 17),
                            start="12:00", end="23:00", timezone="Europe/Brussels")
    vevent = _event(_parse(client.get(f"/events/{festival.slug}.ics").content))
    assert (vevent["DTSTART"], vevent["DTEND"]) == ("20310815T100000Z", "20310817T210000Z")

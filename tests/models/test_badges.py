"""Earning badges: counted from door scans and kept token reports, at the moment it happened."""

from __future__ import annotations

import datetime as dt
import functools

from sqlalchemy import select

from adapters.direct import rows
from models import badges, deliveries, door, importing
from models.badges import EarnedBadge
from models.db import now
from tests.api import day
from tests.factories import EventFactory, PersonFactory, TicketFactory, TokenReportFactory, VenueFactory

NIGHT = 1_760_000_000


def _earned(db, person) -> dict[str, tuple[int, int]]:
    return {row.badge_id: (row.value, row.earned_at) for row in db.scalars(
        select(EarnedBadge).where(EarnedBadge.person_id == person.id))}


def _attended(person, *, at, **event_fields):
    """A past night of `person`, their ticket scanned at `at`."""
    event = EventFactory(date=dt.date(2025, 1, 1), **event_fields)
    TicketFactory(event_id=event.id, person_id=person.id, status="used", scanned_at=at)
    return event


def test_nothing_attended_earns_nothing(db):
    person = PersonFactory()
    TicketFactory(person_id=person.id)  # bought, never scanned
    assert badges.award(db, [person.id]) == 0
    assert _earned(db, person) == {}


def test_the_first_scanned_ticket_earns_the_first_night_at_its_scan(db):
    person = PersonFactory()
    _attended(person, at=NIGHT)
    badges.award(db, [person.id])
    assert _earned(db, person)["regular-1"] == (1, NIGHT)


def test_a_badge_is_earned_when_the_threshold_is_crossed_not_when_it_is_computed(db):
    person = PersonFactory()
    # Ten nights; the tenth scan (at NIGHT + 9 days) makes the Regular badge (needs 10).
    for night in range(12):
        _attended(person, at=NIGHT + night * 86400)
    badges.award(db, [person.id])
    assert _earned(db, person)["regular-2"] == (10, NIGHT + 9 * 86400)
    assert "regular-3" not in _earned(db, person)


def test_two_tickets_for_one_night_count_as_one_event(db):
    person = PersonFactory()
    event = _attended(person, at=NIGHT)
    TicketFactory(event_id=event.id, person_id=person.id, status="used", scanned_at=NIGHT + 5)
    badges.award(db, [person.id])
    assert set(_earned(db, person)) == {"regular-1"}


def test_venues_cities_and_genres_are_counted_distinct(db):
    person = PersonFactory()
    home = VenueFactory(city="Utrecht")
    _attended(person, at=NIGHT, venue=home, genre_names=("Techno",))
    _attended(person, at=NIGHT + 10, venue=home, genre_names=("Techno",))
    _attended(person, at=NIGHT + 20, venue=VenueFactory(city="Gent"),
              genre_names=("House", "Disco"))
    # Three venues' worth of nights but only two venues; two cities; three genres, the third
    # and second arriving together at NIGHT + 20, so the value is 3 although 3 is needed.
    badges.award(db, [person.id])
    earned = _earned(db, person)
    assert "explorer-1" not in earned
    assert earned["nomad-1"] == (2, NIGHT + 20)
    assert earned["omnivore-1"] == (3, NIGHT + 20)


def test_the_value_is_the_count_when_a_night_jumps_past_the_threshold(db):
    person = PersonFactory()
    _attended(person, at=NIGHT, genre_names=("Techno",))
    _attended(person, at=NIGHT + 1, genre_names=("House", "Disco", "Acid"))
    badges.award(db, [person.id])
    assert _earned(db, person)["omnivore-1"] == (4, NIGHT + 1)


def test_festivals_count_only_festival_editions(db):
    person = PersonFactory()
    _attended(person, at=NIGHT)
    _attended(person, at=NIGHT + 100, festival_key="dgtl", season=2025)
    badges.award(db, [person.id])
    assert _earned(db, person)["festival-1"] == (1, NIGHT + 100)


def test_a_scan_at_the_door_awards_the_holder(db):
    person = PersonFactory()
    event = EventFactory(date=day(0), start="00:00", end="23:59")
    ticket = TicketFactory(event_id=event.id, person_id=person.id)
    at = now()
    verdict = door.scan(functools.partial(rows, db.connection()), door.within(db),
                        organisation_id=event.organisation_id, scanned=ticket.code,
                        event_id=None, now=at)
    assert verdict.ok
    assert _earned(db, person)["regular-1"] == (1, at)


def test_linking_waiting_tickets_that_were_scanned_awards_them(db):
    person = PersonFactory(email="late@mail.example", email_key="late@mail.example")
    event = EventFactory(date=dt.date(2025, 1, 1))
    TicketFactory(event_id=event.id, person_id=None, status="used", scanned_at=NIGHT,
                  buyer_email_hash=deliveries.address_hash("test-secret", "late@mail.example"))
    assert deliveries.link_waiting_tickets(db, person=person, secret_key="test-secret",
                                           now=NIGHT + 99) == 1
    assert _earned(db, person)["regular-1"] == (1, NIGHT)


def test_reports_that_are_outliers_earn_nothing(db):
    reporter = PersonFactory()
    festival = EventFactory(festival_key="fest", season=2025)
    for n in range(5):
        TokenReportFactory(event_id=festival.id, paid=25, tokens=10, created_at=NIGHT + n)
    TokenReportFactory(event_id=festival.id, paid=250, tokens=10, person_id=reporter.id,
                       created_at=NIGHT + 10)
    badges.award(db, [reporter.id])
    assert _earned(db, reporter) == {}
    TokenReportFactory(event_id=festival.id, paid=25, tokens=10, person_id=reporter.id,
                       created_at=NIGHT + 20)
    badges.award(db, [reporter.id])
    assert _earned(db, reporter) == {"reporter-1": (1, NIGHT + 20)}


def test_importing_reports_awards_the_reporters(db):
    reporter = PersonFactory()
    festival = EventFactory(festival_key="fest", season=2025)
    lines = [f'{{"kind": "token_report", "id": "r{n}", "event_id": "{festival.id}", '
             f'"person_id": "{reporter.id}", "paid": 25, "tokens": 10, "drink_tokens": 2, '
             f'"channel": "onsite", "tier": "visitor", "created_at": {NIGHT + n}, '
             f'"source": "test"}}' for n in range(5)]
    importing.import_lines(db, lines=lines)
    # Many reports earn one badge per tier reached: posting more earns no more than that.
    assert _earned(db, reporter) == {"reporter-1": (1, NIGHT), "reporter-2": (5, NIGHT + 4)}


def test_an_earned_badge_stays_and_is_not_awarded_twice(db):
    person = PersonFactory()
    _attended(person, at=NIGHT)
    assert badges.award(db, [person.id]) == 1
    assert badges.award(db, [person.id, person.id]) == 0
    assert _earned(db, person) == {"regular-1": (1, NIGHT)}


def test_many_people_are_awarded_at_once(db):
    people = [PersonFactory() for _ in range(3)]
    for number, person in enumerate(people):
        _attended(person, at=NIGHT + number)
    assert badges.award(db, [person.id for person in people]) == 3
    assert [_earned(db, person) for person in people] == [
        {"regular-1": (1, NIGHT + number)} for number in range(3)]

"""One city by the slug of its page address."""

import datetime as dt

import pytest

from models import cities
from models.errors import NotFound
from tests.factories import EventFactory, VenueFactory, settled

TODAY = dt.date(2031, 3, 1)


def test_a_city_is_found_by_the_slug_of_its_name_with_its_upcoming_events(db):
    venue = VenueFactory(city="Den Haag", country="NL")
    EventFactory(venue=venue, date=TODAY + dt.timedelta(days=3))
    EventFactory(venue=venue, date=TODAY + dt.timedelta(days=4))
    settled(db)  # cities count from the counts kept as changes commit
    city = cities.get_city(db, "den-haag", today=TODAY)
    assert (city.name, city.country, city.upcoming_events) == ("Den Haag", "NL", 2)


def test_a_city_without_upcoming_events_is_not_found(db):
    EventFactory(venue=VenueFactory(city="Zwolle"), date=TODAY - dt.timedelta(days=3))
    settled(db)
    for slug in ("zwolle", "nowhere"):
        with pytest.raises(NotFound):
            cities.get_city(db, slug, today=TODAY)

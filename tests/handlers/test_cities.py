"""GET /cities: cities with upcoming events, busiest first, paged."""

import pytest

from tests import api
from tests.api import SITE, day
from tests.factories import EventFactory, VenueFactory

CITIES = api.Listing("/v1/cities")


def _names(client, auth, **params):
    return [(c["name"], c["country"]) for c in CITIES.items(client, auth, **params)]


def _events(venue, count, **fields):
    for _ in range(count):
        EventFactory(venue=venue, **fields)


def test_every_field_of_a_city(client, auth):
    north = VenueFactory(city="Den Haag", lat=52.10, lng=4.30)
    south = VenueFactory(city="den haag", lat=52.06, lng=4.28)
    _events(north, 2, date=day(1))
    _events(south, 1, date=day(-1), end_date=day(0))
    assert CITIES.page(client, auth)["data"] == [{
        "name": "Den Haag", "country": "NL", "upcoming_events": 3,
        "lat": 52.08, "lng": 4.29, "url": f"{SITE}/cities/den-haag",
    }]


def test_only_approved_events_from_today_on_count(client, auth):
    venue = VenueFactory(city="Utrecht")
    _events(venue, 1, date=day(2))
    _events(venue, 1, date=day(5), cancelled=True)
    _events(venue, 2, date=day(-3))
    _events(venue, 1, date=day(2), status="pending")
    past_only = VenueFactory(city="Zwolle")
    _events(past_only, 1, date=day(-1))
    drafts_only = VenueFactory(city="Breda")
    _events(drafts_only, 1, date=day(1), status="draft")
    VenueFactory(city="Leiden")
    assert [(c["name"], c["upcoming_events"]) for c in CITIES.page(client, auth)["data"]] == [
        ("Utrecht", 2)]


def test_the_middle_counts_every_venue_of_the_city(client, auth):
    busy = VenueFactory(city="Gent", country="BE", lat=51.00, lng=3.70)
    VenueFactory(city="Gent", country="BE", lat=51.10, lng=3.80)
    _events(busy, 1)
    city = CITIES.page(client, auth)["data"][0]
    assert (city["lat"], city["lng"]) == (51.05, 3.75)


def test_busiest_first_then_by_name(client, auth):
    for city, country, count in (("Amsterdam", "NL", 3), ("Antwerpen", "BE", 1),
                                 ("Rotterdam", "NL", 3), ("Brussel", "BE", 2),
                                 ("Eindhoven", "NL", 1)):
        _events(VenueFactory(city=city, country=country), count)
    assert _names(client, auth) == [("Amsterdam", "NL"), ("Rotterdam", "NL"),
                                    ("Brussel", "BE"), ("Antwerpen", "BE"),
                                    ("Eindhoven", "NL")]


def test_a_city_is_one_per_country(client, auth):
    _events(VenueFactory(city="Bergen", country="NL"), 2)
    _events(VenueFactory(city="Bergen", country="BE"), 1)
    body = CITIES.page(client, auth)["data"]
    assert [(c["name"], c["country"], c["upcoming_events"]) for c in body] == [
        ("Bergen", "NL", 2), ("Bergen", "BE", 1)]


def test_country_filter_and_its_values(client, auth):
    _events(VenueFactory(city="Gent", country="BE"), 1)
    _events(VenueFactory(city="Utrecht", country="NL"), 1)
    assert _names(client, auth, country="BE") == [("Gent", "BE")]
    assert _names(client, auth, country="NL") == [("Utrecht", "NL")]
    assert CITIES.bad(client, auth, country="DE") == {"country"}
    assert CITIES.bad(client, auth, country="nl") == {"country"}


@pytest.mark.parametrize("filters", [{}, {"country": "NL"}])
def test_paging_returns_every_city_once(client, auth, filters):
    for i in range(7):
        _events(VenueFactory(city=f"Stad {i}"), 1 + i % 3)
    expected = _names(client, auth, **filters)
    assert len(expected) == 7
    seen = [(c["name"], c["country"]) for c in CITIES.walk(client, auth, 2, **filters)]
    assert seen == expected


def test_limit_edges(client, auth):
    for city in ("Assen", "Breda", "Delft"):
        _events(VenueFactory(city=city), 1)
    body = CITIES.page(client, auth, limit=1)
    assert body["meta"]["count"] == 1 and body["meta"]["limit"] == 1
    assert body["meta"]["next_cursor"]
    full = CITIES.page(client, auth, limit=100)
    assert full["meta"]["count"] == 3 and full["meta"]["next_cursor"] is None
    assert CITIES.bad(client, auth, limit=0) == {"limit"}
    assert CITIES.bad(client, auth, limit=101) == {"limit"}


def test_a_bad_cursor_or_one_reused_with_other_filters_is_400(client, auth):
    for city in ("Assen", "Breda", "Delft"):
        _events(VenueFactory(city=city), 1)
    cursor = CITIES.page(client, auth, limit=1, country="NL")["meta"]["next_cursor"]
    assert CITIES.page(client, auth, limit=1, country="NL", cursor=cursor)["meta"]["count"] == 1
    assert CITIES.bad(client, auth, country="BE", cursor=cursor) == {"cursor"}
    assert CITIES.bad(client, auth, cursor=cursor) == {"cursor"}
    assert CITIES.bad(client, auth, cursor="garbage") == {"cursor"}


def test_the_list_is_cacheable_and_carries_the_attribution(client, auth):
    _events(VenueFactory(), 1)
    first = client.get("/v1/cities", headers=auth)
    assert first.json()["meta"]["attribution"]["text"]
    assert first.headers["cache-control"] == "public, max-age=60"
    again = client.get("/v1/cities", headers={**auth, "If-None-Match": first.headers["etag"]})
    assert again.status_code == 304
    _events(VenueFactory(), 1)
    changed = client.get("/v1/cities", headers={**auth, "If-None-Match": first.headers["etag"]})
    assert changed.status_code == 200


def test_events_months_ahead_and_running_ones_count(client, auth):
    """The counts come from the kept day and month counts and the running events: an event
    this month, next month, next year and one that began before today and still runs."""
    venue = VenueFactory(city="Haarlem")
    for offset in (0, 40, 400):
        _events(venue, 1, date=day(offset))
    _events(venue, 1, date=day(-3), end_date=day(2))
    _events(venue, 1, date=day(-3), end_date=day(-1))
    assert [(c["name"], c["upcoming_events"]) for c in CITIES.page(client, auth)["data"]] == [
        ("Haarlem", 4)]

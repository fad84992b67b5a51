"""Calendar subscriptions: /calendar.ics?<filters of GET /v1/events>, read back with the
`icalendar` package and compared with what GET /v1/events lists for the same filters."""

from __future__ import annotations

import datetime as dt
import itertools
import re
import time
from urllib.parse import urlsplit

import icalendar
import pytest

from pages import subscriptions
from pages.calendar import SEQUENCE_EPOCH
from tests import api
from tests.api import SITE, day
from tests.factories import ArtistFactory, EventFactory, OrganisationFactory, VenueFactory

EVENTS = api.Listing("/v1/events")
_minutes = itertools.count((int(time.time()) // 60) * 60 + 3600, 60)


@pytest.fixture(autouse=True)
def fresh_minute(app, monkeypatch):
    """Every test counts its fetches in a minute of its own (the feed's limit is per minute)."""
    moment = next(_minutes) + 5
    monkeypatch.setattr(app.service.usage, "clock", lambda: moment)
    return moment


def _feed(client, **params) -> icalendar.Calendar:
    response = client.get("/calendar.ics", params=params)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/calendar")
    return icalendar.Calendar.from_ical(response.content)


def _vevents(calendar: icalendar.Calendar) -> list:
    return calendar.walk("VEVENT")


def _ids(calendar: icalendar.Calendar) -> list[str]:
    return [str(vevent["UID"]).split("@")[0] for vevent in _vevents(calendar)]


def _utc(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value).replace(tzinfo=dt.UTC)


def test_the_feed_holds_what_the_api_lists_for_the_same_filters_in_its_order(client, auth):
    shelter = VenueFactory(name="Shelter", city="Amsterdam", address="Overhoeksplein 3")
    elsewhere = VenueFactory(city="Rotterdam")
    running = EventFactory(date=day(-1), end_date=day(2), venue=shelter, genre_names=["Techno"])
    late = EventFactory(date=day(3), start="23:00", venue=shelter, genre_names=["Techno"])
    early = EventFactory(date=day(3), start="20:00", venue=shelter,
                         genre_names=["House", "Techno"])
    EventFactory(date=day(3), venue=shelter, genre_names=["House"])
    EventFactory(date=day(2), venue=elsewhere, genre_names=["Techno"])
    EventFactory(date=day(-3), venue=shelter, genre_names=["Techno"])
    EventFactory(date=day(4), venue=shelter, genre_names=["Techno"], status="draft")
    for filters in ({"genre": "Techno", "city": "amsterdam"}, {}, {"q": "night", "to": day(3)},
                    {"venue_id": shelter.id, "has_tickets": "true"}):
        listed = EVENTS.walk(client, auth, limit=100, **filters)
        feed = _feed(client, **filters)
        assert _ids(feed) == [event["id"] for event in listed], filters
        for vevent, event in zip(_vevents(feed), listed):
            assert str(vevent["SUMMARY"]) == event["title"]
            assert str(vevent["URL"]) == event["url"] == f"{SITE}/events/{event['slug']}"
    assert _ids(_feed(client, genre="Techno", city="Amsterdam")) == [running.id, early.id,
                                                                       late.id]


def test_location_names_venue_address_and_city_once(client, db):
    shelter = VenueFactory(name="Shelter", address="Overhoeksplein 3", city="Amsterdam")
    full = VenueFactory(name="Paradiso", address="Weteringschans 6, Amsterdam", city="Amsterdam")
    EventFactory(date=day(1), venue=shelter)
    EventFactory(date=day(2), venue=full)
    assert [str(v["LOCATION"]) for v in _vevents(_feed(client))] == [
        "Shelter, Overhoeksplein 3, Amsterdam", "Paradiso, Weteringschans 6, Amsterdam"]


def test_times_are_right_across_midnight_and_both_dst_changes(client, db):
    # Amsterdam moves to summer time on 2031-03-30 and back on 2031-10-26, both at night.
    into_summer = EventFactory(date=dt.date(2031, 3, 29), start="23:00", end="06:00")
    into_winter = EventFactory(date=dt.date(2031, 10, 25), start="23:00", end="06:00")
    summer_evening = EventFactory(date=dt.date(2031, 7, 4), start="20:00", end="23:30")
    weekend = EventFactory(date=dt.date(2031, 8, 15), end_date=dt.date(2031, 8, 17),
                           start="12:00", end="23:00")
    lisbon = EventFactory(date=dt.date(2031, 7, 5), start="22:00", end="04:00",
                          timezone="Europe/Lisbon")
    times = {str(v["UID"]).split("@")[0]: (v["DTSTART"].dt, v["DTEND"].dt)
             for v in _vevents(_feed(client, **{"from": "2031-01-01"}))}
    assert times[into_summer.id] == (_utc("2031-03-29T22:00"), _utc("2031-03-30T04:00"))
    assert times[into_winter.id] == (_utc("2031-10-25T21:00"), _utc("2031-10-26T05:00"))
    assert times[summer_evening.id] == (_utc("2031-07-04T18:00"), _utc("2031-07-04T21:30"))
    assert times[weekend.id] == (_utc("2031-08-15T10:00"), _utc("2031-08-17T21:00"))
    assert times[lisbon.id] == (_utc("2031-07-05T21:00"), _utc("2031-07-06T03:00"))


def test_a_cancelled_event_is_cancelled_and_every_event_is_stamped_stably(client, db):
    cancelled = EventFactory(date=day(1), cancelled=True, cancel_reason="Storm warning")
    shown = EventFactory(date=day(2))
    first = {str(v["UID"]): v for v in _vevents(_feed(client))}
    again = _feed(client)
    assert list(first) == [str(v["UID"]) for v in _vevents(again)]
    assert list(first) == [f"{cancelled.id}@127.0.0.1", f"{shown.id}@127.0.0.1"]
    one, two = first.values()
    assert (str(one["STATUS"]), str(two["STATUS"])) == ("CANCELLED", "CONFIRMED")
    assert "Storm warning" in str(one["DESCRIPTION"])
    changed = dt.datetime.fromtimestamp(shown.updated_at, dt.UTC)
    assert two["LAST-MODIFIED"].dt == two["DTSTAMP"].dt == changed
    assert int(two["SEQUENCE"]) == shown.updated_at - SEQUENCE_EPOCH


def test_a_change_to_an_event_raises_its_sequence_and_changes_the_etag(client, db):
    event = EventFactory(date=day(1), title="Before")
    response = client.get("/calendar.ics")
    before = icalendar.Calendar.from_ical(response.content).walk("VEVENT")[0]
    event.title, event.updated_at = "After", event.updated_at + 60
    db.flush()
    changed = client.get("/calendar.ics", headers={"If-None-Match": response.headers["ETag"]})
    assert changed.status_code == 200 and changed.headers["ETag"] != response.headers["ETag"]
    after = icalendar.Calendar.from_ical(changed.content).walk("VEVENT")[0]
    assert str(after["UID"]) == str(before["UID"])
    assert int(after["SEQUENCE"]) == int(before["SEQUENCE"]) + 60
    assert str(after["SUMMARY"]) == "After"


def test_the_calendar_is_named_after_its_query_and_refreshed_hourly(client, db):
    venue = VenueFactory(name="Shelter")
    artist = ArtistFactory(name="Marcel Dettmann")
    organisation = OrganisationFactory(name="Dekmantel")
    named = {
        (("genre", "Techno"), ("city", "Amsterdam")): "Techno in Amsterdam",
        (): "Events",
        (("venue_id", venue.id),): "Events at Shelter",
        (("artist_id", artist.id), ("from", "2031-05-01")):
            "Events with Marcel Dettmann from 2031-05-01",
        (("organisation_id", organisation.id), ("q", "selectors")):
            'Events matching "selectors" by Dekmantel',
    }
    for query, name in named.items():
        calendar = _feed(client, **dict(query))
        assert str(calendar["NAME"]) == str(calendar["X-WR-CALNAME"]) == name
        assert calendar["X-PUBLISHED-TTL"].to_ical() == b"PT1H"
        assert calendar["REFRESH-INTERVAL"].dt == dt.timedelta(hours=1)
        assert calendar["REFRESH-INTERVAL"].params["VALUE"] == "DURATION"


def test_a_feed_holds_at_most_the_first_500_events_of_the_list(client, auth):
    venue, organisation = VenueFactory(), OrganisationFactory()
    for index in range(subscriptions.FEED_LIMIT + 1):
        EventFactory(date=day(1 + index // 100), start=f"{10 + index % 12:02d}:{index % 60:02d}",
                     venue=venue, organisation=organisation)
    listed = EVENTS.walk(client, auth, limit=100)
    assert len(listed) == 501
    assert _ids(_feed(client)) == [event["id"] for event in listed[:500]]


def test_bad_filters_are_a_400_page_naming_every_bad_parameter(client, db):
    response = client.get("/calendar.ics", params={
        "from": "someday", "radius_km": "0", "limit": "5", "colour": "red", "has_tickets": "maybe"})
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("text/html")
    named = set(re.findall(r"<code>([^<]+)</code>", response.text))
    assert named == {"from", "radius_km", "limit", "colour", "has_tickets"}
    crossed = client.get("/calendar.ics", params={"from": "2031-05-02", "to": "2031-05-01",
                                                  "lat": "52.3"})
    assert crossed.status_code == 400
    assert set(re.findall(r"<code>([^<]+)</code>", crossed.text)) == {"to", "lng"}


@pytest.mark.parametrize(("query", "name", "message"), [
    ("min_price=%EF%BC%91%EF%BC%90", "min_price", "must be a finite number in ASCII digits"),
    ("radius_km=%EF%BC%95&lat=52&lng=4", "radius_km", "must be an integer in ASCII digits"),
    ("lat=NaN&lng=4", "lat", "must be a finite number in ASCII digits"),
    ("q=techno&q=house", "q", "is given more than once"),
])
def test_a_feed_refuses_what_rest_refuses_full_width_digits_and_a_repeated_parameter(
        client, auth, db, query, name, message):
    # The same words as GET /v1/events for the same query.
    rest = client.get(f"/v1/events?{query}", headers=auth)
    assert [(p["name"], p["message"]) for p in rest.json()["error"]["details"]["params"]] == [
        (name, message)]
    for path in ("/calendar.ics", "/events"):
        response = client.get(f"{path}?{query}")
        assert response.status_code == 400, (path, response.text)
        assert response.headers["content-type"].startswith("text/html")
        assert set(re.findall(r"<code>([^<]+)</code>", response.text)) == {name}
        assert message in response.text


def test_an_unchanged_feed_is_revalidated_with_its_etag(client, db):
    EventFactory(date=day(1))
    first = client.get("/calendar.ics", params={"city": "Amsterdam"})
    assert first.headers["Cache-Control"] == "public, max-age=60"
    tag = first.headers["ETag"]
    again = client.get("/calendar.ics", params={"city": "Amsterdam"},
                       headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["ETag"] == tag
    other = client.get("/calendar.ics", params={"city": "Utrecht"},
                       headers={"If-None-Match": tag})
    assert other.status_code == 200


def test_feeds_are_limited_per_address_and_minute(app, client, db, fresh_minute):
    for _ in range(subscriptions.FEED_PER_MINUTE):
        assert client.get("/calendar.ics").status_code == 200
    refused = client.get("/calendar.ics")
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) == 55
    app.service.usage.clock = lambda: fresh_minute + 60
    assert client.get("/calendar.ics").status_code == 200


def _subscribe_link(page: str) -> str:
    found = re.findall(r'<a class="subscribe" href="([^"]+)"', page)
    assert len(found) == 1, page
    return found[0].replace("&amp;", "&")


def _follow(client, link: str) -> icalendar.Calendar:
    parts = urlsplit(link)
    assert parts.scheme == "webcal" and parts.netloc == urlsplit(SITE).netloc
    assert parts.path == "/calendar.ics"
    return icalendar.Calendar.from_ical(client.get(f"/calendar.ics?{parts.query}").content)


def test_city_venue_artist_organisation_and_genre_pages_offer_their_feed(client, auth):
    venue = VenueFactory(name="Shelter", city="Amsterdam")
    artist, organisation = ArtistFactory(), OrganisationFactory()
    event = EventFactory(date=day(1), venue=venue, organisation=organisation, acts=[artist],
                         genre_names=["Techno"])
    EventFactory(date=day(2), venue=VenueFactory(city="Utrecht"), genre_names=["House"])
    for page, filters in (("/cities/amsterdam", {"city": "Amsterdam"}),
                          (f"/venues/{venue.id}", {"venue_id": venue.id}),
                          (f"/artists/{artist.id}", {"artist_id": artist.id}),
                          (f"/organisations/{organisation.id}",
                           {"organisation_id": organisation.id}),
                          ("/genres/techno", {"genre": "Techno"})):
        response = client.get(page)
        assert response.status_code == 200, page
        feed = _follow(client, _subscribe_link(response.text))
        assert _ids(feed) == [e["id"] for e in EVENTS.walk(client, auth, limit=100, **filters)]
        assert _ids(feed) == [event.id]


def test_the_search_page_lists_its_filters_events_and_offers_their_feed(client, auth):
    techno = EventFactory(date=day(1), title="Warehouse Techno", genre_names=["Techno"])
    EventFactory(date=day(1), title="Warehouse House", genre_names=["House"])
    EventFactory(date=day(9), title="Late Techno", genre_names=["Techno"])
    query = {"genre": "Techno", "to": day(5).isoformat(), "q": "", "city": "", "lang": "en"}
    response = client.get("/events", params=query)
    assert response.status_code == 200
    assert "Warehouse Techno" in response.text and "Late Techno" not in response.text
    feed = _follow(client, _subscribe_link(response.text))
    assert _ids(feed) == [techno.id]
    assert str(feed["NAME"]) == f"Techno until {day(5).isoformat()}"
    assert client.get("/events", params={"from": "tomorrow"}).status_code == 400

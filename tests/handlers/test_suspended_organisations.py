"""A suspended organisation and its events are not public: every surface that lists, counts
or shows events agrees with the change feed's tombstones, and the kept answers (the
response cache, the kept day counts) follow the suspension at once, both ways."""

from __future__ import annotations

import icalendar
import pytest
from sqlalchemy import update

from models.organisations import Organisation
from tests import api
from tests.api import day
from tests.factories import ArtistFactory, EventFactory, OrganisationFactory, VenueFactory

EVENTS = api.Listing("/v1/events")


@pytest.fixture
def suspending(db):
    """`suspending(organisation, True/False)` as an operator's SQL would (no request)."""
    def suspend(organisation, suspended: bool = True):
        db.execute(update(Organisation).where(Organisation.id == organisation.id)
                   .values(suspended=suspended))
    return suspend


@pytest.fixture
def agenda(db):
    """Two organisations with events at one venue, with one artist and one genre."""
    venue, artist = VenueFactory(city="Zwolle"), ArtistFactory(name="Nachtdienst")
    kept, hidden = OrganisationFactory(name="Stays"), OrganisationFactory(name="Suspended")
    shown = EventFactory(organisation=kept, venue=venue, date=day(2), title="Open night",
                         genre_names=["Techno"], acts=[artist])
    gone = EventFactory(organisation=hidden, venue=venue, date=day(3), end_date=day(4),
                        title="Open weekend", genre_names=["Techno", "Disco"], acts=[artist])
    return {"venue": venue, "artist": artist, "kept": kept, "hidden": hidden,
            "shown": shown, "gone": gone}


def _lists(client, auth, agenda) -> dict[str, list[str]]:
    """The event ids of every list that held both events before the suspension."""
    return {name: EVENTS.ids(client, auth, **params) for name, params in {
        "all": {}, "search": {"q": "open"}, "venue": {"venue_id": agenda["venue"].id},
        "artist": {"artist_id": agenda["artist"].id}, "city": {"city": "Zwolle"},
        "genre": {"genre": "Techno"},
        # Around the venue (its few venues walked one by one on PostgreSQL).
        "radius": {"lat": agenda["venue"].lat, "lng": agenda["venue"].lng, "radius_km": 1},
        "organisation": {"organisation_id": agenda["hidden"].id}}.items()}


def _facets(client, auth, **params) -> dict:
    body = EVENTS.page(client, auth, facets="genre,city,date", to=day(10).isoformat(), **params)
    return body["meta"]["facets"]


def test_a_suspended_organisations_events_leave_every_list_at_once_and_come_back(
        client, auth, agenda, suspending):
    shown, gone = agenda["shown"].id, agenda["gone"].id
    before = _lists(client, auth, agenda)  # also kept in the response cache
    assert before["organisation"] == [gone] and all(
        ids == [shown, gone] for name, ids in before.items() if name != "organisation")
    suspending(agenda["hidden"])
    after = _lists(client, auth, agenda)
    assert after["organisation"] == [] and all(
        ids == [shown] for name, ids in after.items() if name != "organisation")
    suspending(agenda["hidden"], False)
    assert _lists(client, auth, agenda) == before


def test_a_suspended_organisation_and_its_events_are_404_and_not_counted(
        client, auth, agenda, suspending):
    gone, hidden, venue = agenda["gone"], agenda["hidden"], agenda["venue"]
    assert client.get(f"/v1/events/{gone.id}", headers=auth).status_code == 200
    suspending(hidden)
    assert client.get(f"/v1/events/{gone.id}", headers=auth).status_code == 404
    assert client.get(f"/v1/organisations/{hidden.id}", headers=auth).status_code == 404
    listed = api.Listing("/v1/organisations").items(client, auth)
    assert agenda["kept"].id in {o["id"] for o in listed}
    assert hidden.id not in {o["id"] for o in listed}
    assert api.page(client, auth, f"/v1/venues/{venue.id}")["data"]["upcoming_events"] == 1
    zwolle = [city for city in api.Listing("/v1/cities").items(client, auth)
              if city["name"] == "Zwolle"]
    assert [city["upcoming_events"] for city in zwolle] == [1]


@pytest.mark.parametrize("bounded", [False, True], ids=["kept counts", "counted rows"])
def test_facet_counts_leave_out_a_suspended_organisations_events_and_take_them_back(
        client, auth, agenda, suspending, bounded):
    params = {"venue_id": agenda["venue"].id} if bounded else {"city": "Zwolle"}
    both = _facets(client, auth, **params)
    assert {f["value"]: f["count"] for f in both["genre"]} == {"Techno": 2, "Disco": 1}
    suspending(agenda["hidden"])
    assert _facets(client, auth, **params) == {
        "genre": [{"value": "Techno", "count": 1}], "city": [{"value": "Zwolle", "count": 1}],
        "date": [{"value": day(2).isoformat(), "count": 1}]}
    suspending(agenda["hidden"], False)
    assert _facets(client, auth, **params) == both


def test_pages_and_calendar_feeds_hide_a_suspended_organisations_events(
        client, agenda, suspending):
    gone, hidden = agenda["gone"], agenda["hidden"]
    assert client.get(f"/events/{gone.slug}").status_code == 200
    suspending(hidden)
    assert client.get(f"/events/{gone.slug}").status_code == 404
    assert client.get(f"/events/{gone.slug}.ics").status_code == 404
    assert client.get(f"/organisations/{hidden.id}").status_code == 404
    feed = client.get("/calendar.ics", params={"venue_id": agenda["venue"].id})
    uids = [str(component["UID"]) for component in
            icalendar.Calendar.from_ical(feed.content).walk("VEVENT")]
    assert len(uids) == 1 and uids[0].startswith(agenda["shown"].id)
    assert agenda["gone"].title not in client.get(f"/venues/{agenda['venue'].id}").text

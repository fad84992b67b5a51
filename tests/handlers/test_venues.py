"""GET /venues and GET /venues/{id}: filters, order, paging and the practical profile."""

import pytest
from sqlalchemy import update

from models import venues
from models.events import Event
from tests import api
from tests.api import SITE, day
from tests.factories import EventFactory, VenueFactory

VENUES = api.Listing("/v1/venues")


def test_by_name_ignoring_case_and_accents_then_id(client, auth):
    zebra = VenueFactory(name="Zebra")
    ampere = VenueFactory(name="Ampère")
    bird = VenueFactory(name="bird")
    twins = sorted([VenueFactory(name="Twin"), VenueFactory(name="Twin")], key=lambda v: v.id)
    assert VENUES.ids(client, auth) == [ampere.id, bird.id, twins[0].id, twins[1].id, zebra.id]


def test_every_field_of_the_summary(client, auth):
    venue = VenueFactory(name="Shelter", city="Amsterdam", area="Noord",
                         address="Overhoeksplein 3", website="https://shelter.example",
                         image_url="https://img.example/shelter.jpg", lat=52.384, lng=4.902,
                         tags=["club", "24h"], rating=4.5, reviews_count=321)
    assert VENUES.page(client, auth)["data"] == [{
        "id": venue.id, "name": "Shelter", "city": "Amsterdam", "area": "Noord",
        "address": "Overhoeksplein 3", "website": "https://shelter.example",
        "image_url": "https://img.example/shelter.jpg", "url": f"{SITE}/venues/{venue.id}",
        "lat": 52.384, "lng": 4.902, "tags": ["club", "24h"], "rating": 4.5,
        "reviews_count": 321,
    }]


def test_city_is_case_and_accent_insensitive(client, auth):
    gent = VenueFactory(city="Gent", country="BE")
    liege = VenueFactory(city="Liège", country="BE")
    VenueFactory(city="Antwerpen", country="BE")
    assert VENUES.ids(client, auth, city="GENT") == [gent.id]
    assert VENUES.ids(client, auth, city="liege") == [liege.id]
    assert VENUES.ids(client, auth, city="Gen") == []


def test_q_searches_the_name_without_case_or_accents(client, auth):
    ampere = VenueFactory(name="Club Ampère")
    VenueFactory(name="Paradiso")
    assert VENUES.ids(client, auth, q="ampere") == [ampere.id]
    assert VENUES.ids(client, auth, q="AMPÈRE") == [ampere.id]
    assert VENUES.ids(client, auth, q="club amp") == [ampere.id]
    assert VENUES.ids(client, auth, q="100%") == []
    assert VENUES.ids(client, auth, q="_") == []


def test_with_events_counts_approved_events_from_today_on(client, auth):
    coming = EventFactory(date=day(3)).venue
    running = EventFactory(date=day(-1), end_date=day(1)).venue
    tonight = EventFactory(date=day(0)).venue
    past = EventFactory(date=day(-2)).venue
    draft_only = EventFactory(date=day(3), status="draft").venue
    empty = VenueFactory()
    with_events = set(VENUES.ids(client, auth, with_events="true"))
    without = set(VENUES.ids(client, auth, with_events="false"))
    assert with_events == {coming.id, running.id, tonight.id}
    assert without == {past.id, draft_only.id, empty.id}
    assert len(VENUES.ids(client, auth)) == 6


def test_filters_combine_with_and(client, auth):
    match = EventFactory(venue=VenueFactory(name="De School", city="Amsterdam")).venue
    VenueFactory(name="De Marktkantine", city="Amsterdam")
    EventFactory(venue=VenueFactory(name="De Kroepoekfabriek", city="Vlaardingen"))
    assert VENUES.ids(client, auth, city="amsterdam", q="de", with_events="true") == [match.id]


@pytest.mark.parametrize("filters", [{}, {"city": "amsterdam"}, {"q": "venue"},
                                     {"with_events": "false"}])
def test_paging_returns_every_venue_once(client, auth, filters):
    created = [VenueFactory(name=f"Venue {i % 3}") for i in range(7)]
    expected = VENUES.ids(client, auth, **filters)
    assert set(expected) == {v.id for v in created}
    seen = [v["id"] for v in VENUES.walk(client, auth, 3, **filters)]
    assert seen == expected


def test_limit_edges(client, auth):
    for _ in range(3):
        VenueFactory()
    body = VENUES.page(client, auth, limit=1)
    assert body["meta"]["count"] == 1 and body["meta"]["limit"] == 1
    assert body["meta"]["next_cursor"]
    full = VENUES.page(client, auth, limit=100)
    assert full["meta"]["count"] == 3 and full["meta"]["next_cursor"] is None
    assert VENUES.page(client, auth)["meta"]["limit"] == 25
    assert VENUES.bad(client, auth, limit=0) == {"limit"}
    assert VENUES.bad(client, auth, limit=101) == {"limit"}


def test_a_bad_cursor_or_one_reused_with_other_filters_is_400(client, auth):
    for _ in range(3):
        VenueFactory(city="Utrecht")
    cursor = VENUES.page(client, auth, limit=1, city="Utrecht")["meta"]["next_cursor"]
    assert VENUES.page(client, auth, limit=1, city="Utrecht", cursor=cursor)["meta"]["count"] == 1
    assert VENUES.bad(client, auth, city="Gent", cursor=cursor) == {"cursor"}
    assert VENUES.bad(client, auth, cursor=cursor) == {"cursor"}
    assert VENUES.bad(client, auth, cursor="garbage") == {"cursor"}


def test_unknown_parameters_and_bad_booleans_are_400(client, auth):
    assert VENUES.bad(client, auth, with_events="maybe") == {"with_events"}
    assert VENUES.bad(client, auth, country="NL") == {"country"}


def test_the_list_is_cacheable_and_carries_the_attribution(client, auth):
    VenueFactory()
    first = client.get("/v1/venues", headers=auth)
    assert first.headers["cache-control"] == "public, max-age=60"
    assert first.json()["meta"]["attribution"]["terms"] == "http://127.0.0.1:8080/v1/terms"
    again = client.get("/v1/venues", headers={**auth, "If-None-Match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    VenueFactory()
    changed = client.get("/v1/venues", headers={**auth, "If-None-Match": first.headers["etag"]})
    assert changed.status_code == 200


def test_detail_has_every_field_of_the_profile(client, auth):
    venue = VenueFactory(name="Shelter", area="Noord", tags=["club"], rating=4.5,
                         reviews_count=3, info="Under A'DAM tower.",
                         accessibility="Lift to the club.", rules=["No photos", "18+"],
                         rules_url="https://shelter.example/rules",
                         facts={"capacity": 700, "cloakroom": "yes", "smoking": None})
    EventFactory(venue=venue, date=day(1))
    EventFactory(venue=venue, date=day(-1), end_date=day(0))
    EventFactory(venue=venue, date=day(20), cancelled=True)
    EventFactory(venue=venue, date=day(-5))
    EventFactory(venue=venue, date=day(2), status="pending")
    response = client.get(f"/v1/venues/{venue.id}", headers=auth)
    assert response.status_code == 200, response.text
    assert response.json()["data"] == {
        "id": venue.id, "name": "Shelter", "city": "Amsterdam", "area": "Noord",
        "address": venue.address, "website": venue.website, "image_url": venue.image_url,
        "url": f"{SITE}/venues/{venue.id}", "lat": venue.lat, "lng": venue.lng,
        "tags": ["club"], "rating": 4.5, "reviews_count": 3,
        "info": "Under A'DAM tower.", "accessibility": "Lift to the club.",
        "rules": ["No photos", "18+"], "rules_url": "https://shelter.example/rules",
        # A null fact is unknown, like an absent one.
        "facts": {"capacity": 700, "cloakroom": "yes"},
        # Coming and running events, cancelled ones included (as GET /events lists them).
        "upcoming_events": 3,
    }
    assert response.json()["meta"]["attribution"]


def test_detail_of_a_venue_without_facts_or_events(client, auth):
    venue = VenueFactory(facts={})
    data = client.get(f"/v1/venues/{venue.id}", headers=auth).json()["data"]
    assert data["facts"] == {} and data["upcoming_events"] == 0


def test_detail_revalidates_with_304(client, auth):
    venue = VenueFactory()
    first = client.get(f"/v1/venues/{venue.id}", headers=auth)
    again = client.get(f"/v1/venues/{venue.id}",
                       headers={**auth, "If-None-Match": first.headers["etag"]})
    assert again.status_code == 304


def test_detail_of_a_missing_venue_is_404(client, auth):
    response = client.get("/v1/venues/nope", headers=auth)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert response.json()["meta"]["request_id"]


def test_a_profiles_basis_is_read_again_from_its_row_and_its_count(db):
    """What a venue's profile was built from (`VenueProfile.basis`: its row version and the
    number of its upcoming events) is what `venue_basis` reads again, in one statement; it
    follows a change to the venue or to its count, not one to another venue's event. On
    SQLite neither has one (no row versions)."""
    event = EventFactory()
    other = EventFactory()
    built = venues.get_venue(db, event.venue_id, today=day(0)).basis
    if db.get_bind().dialect.name != "postgresql":
        assert built is None and venues.venue_basis(db, event.venue_id, today=day(0)) is None
        return
    with api.statements(db.get_bind().engine) as statements:
        assert venues.venue_basis(db, event.venue_id, today=day(0)) == built
    assert len(statements) == 1, statements
    db.execute(update(Event).where(Event.id == other.id).values(title="Other"))
    assert venues.venue_basis(db, event.venue_id, today=day(0)) == built
    EventFactory(venue=event.venue)
    counted = venues.venue_basis(db, event.venue_id, today=day(0))
    assert counted != built
    assert counted == venues.get_venue(db, event.venue_id, today=day(0)).basis
    assert venues.venue_basis(db, event.venue_id, today=day(9)) != counted  # gone by then
    missing = venues.venue_basis(db, "no-such-venue", today=day(0))
    assert missing not in (built, counted)

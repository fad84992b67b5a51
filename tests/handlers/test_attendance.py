"""GET /events/{id}/attendance: exact counts and the audience of an own event, in safe groups."""

import datetime as dt

import pytest

from models.db import now
from tests.api import day
from tests.factories import (EventFactory, MarkFactory, OrganisationFactory, PersonFactory,
                             TicketFactory)


@pytest.fixture
def headers(bearer_of):
    return bearer_of("attendance")


@pytest.fixture
def event(organisation):
    return EventFactory(organisation=organisation, date=day(10))


def _attendance(client, headers, key):
    response = client.get(f"/v1/events/{key}/attendance", headers=headers)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def _going(event, count, **person):
    """`count` new people marked going to `event`."""
    people = [PersonFactory(**person) for _ in range(count)]
    for someone in people:
        MarkFactory(person_id=someone.id, event_id=event.id, kind="going")
    return people


def _attended(person, event, *, times=1):
    for _ in range(times):
        TicketFactory(person_id=person.id, event_id=event.id, status="used", scanned_at=now())


def test_counts_are_exact(client, headers, event):
    for _ in range(3):
        MarkFactory(event_id=event.id, kind="going")
    for _ in range(2):
        MarkFactory(event_id=event.id, kind="interested")
    for status in ("valid", "valid", "used", "void"):
        TicketFactory(event_id=event.id, status=status)
    TicketFactory(event_id=event.id, source="eventbrite")
    TicketFactory(source="service")
    data = _attendance(client, headers, event.id)
    assert data["ok"] is True
    assert data["eventId"] == event.id
    assert data["counts"] == {"going": 3, "interested": 2, "tickets": 3}


def test_the_audience_is_ticket_holders_and_people_going_each_once(client, headers, event):
    both = PersonFactory()
    TicketFactory(event_id=event.id, person_id=both.id)
    TicketFactory(event_id=event.id, person_id=both.id)
    MarkFactory(event_id=event.id, person_id=both.id, kind="going")
    TicketFactory(event_id=event.id, status="used")
    TicketFactory(event_id=event.id, source="paylogic")  # delivered and on an account
    TicketFactory(event_id=event.id, status="void")
    TicketFactory(event_id=event.id, person_id=None, source="weeztix")  # still waiting
    MarkFactory(event_id=event.id, kind="interested")
    MarkFactory(event_id=event.id, kind="going")
    audience = _attendance(client, headers, event.id)["audience"]
    assert audience["total"] == 4
    assert audience["min_cell"] == 10
    assert abs(audience["computed_at"] - now()) <= 5


def test_returning_visitors_attended_an_earlier_event_of_the_organisation(
        client, headers, organisation, event):
    earlier = EventFactory(organisation=organisation, date=event.date - dt.timedelta(days=30))
    same_day = EventFactory(organisation=organisation, date=event.date)
    later = EventFactory(organisation=organisation, date=event.date + dt.timedelta(days=30))
    elsewhere = EventFactory(date=event.date - dt.timedelta(days=30))
    people = _going(event, 12)
    for someone in people[:4]:
        _attended(someone, earlier)
    TicketFactory(person_id=people[4].id, event_id=earlier.id)  # bought, never scanned
    _attended(people[5], same_day)
    _attended(people[6], later)
    _attended(people[7], elsewhere)
    audience = _attendance(client, headers, event.slug)["audience"]
    assert (audience["total"], audience["returning"], audience["new"]) == (12, 4, 8)
    assert audience["returning_share"] == 33


def test_regions_withhold_a_single_small_province_with_the_next_smallest(
        client, headers, event):
    _going(event, 15, region="Noord-Holland")
    _going(event, 11, region="Utrecht")
    _going(event, 3, region="Zeeland")
    _going(event, 2, region=None)
    regions = _attendance(client, headers, event.id)["audience"]["regions"]
    assert regions == {"rows": [{"key": "Noord-Holland", "count": 15}], "other": 14, "hidden": 2}


def test_ages_in_bands_and_small_bands_hidden_below_min_cell(client, headers, event):
    year = event.date.year
    for age, count in ((19, 12), (23, 10), (27, 4), (40, 3), (50, 2)):
        _going(event, count, birth_year=year - age)
    _going(event, 2, birth_year=None)
    ages = _attendance(client, headers, event.id)["audience"]["ages"]
    assert ages == {"rows": [{"key": "18-20", "count": 12}, {"key": "21-24", "count": 10}],
                    "other": None, "hidden": 11}


def test_genres_by_each_persons_most_attended_genre(client, headers, event):
    techno = EventFactory(genre_names=["Techno"], date=day(-40))
    acid = EventFactory(genre_names=["Acid"], date=day(-30))
    house_techno = EventFactory(genre_names=["House", "Techno"], date=day(-20))
    hardstyle = EventFactory(genre_names=["Hardstyle"], date=day(-10))
    dnb = EventFactory(genre_names=["Drum & Bass"], date=day(-5))
    for someone in _going(event, 10):
        _attended(someone, techno)
    # Acid twice on one night is one event: Techno 1, Acid 1, and Techno comes first in the list.
    acid_fan = _going(event, 1)[0]
    _attended(acid_fan, techno)
    _attended(acid_fan, acid, times=2)
    for someone in _going(event, 10):
        _attended(someone, house_techno)  # a tie: House comes first in the list
    for someone in _going(event, 2):
        _attended(someone, house_techno)
        _attended(someone, techno)
    for someone in _going(event, 6):
        _attended(someone, hardstyle)
    for someone in _going(event, 5):
        _attended(someone, dnb)
    for someone in _going(event, 3):
        TicketFactory(person_id=someone.id, event_id=techno.id)  # never scanned: no genre
    genres = _attendance(client, headers, event.id)["audience"]["genres"]
    assert genres == {"rows": [{"key": "Techno", "count": 13}, {"key": "House", "count": 10}],
                      "other": 11, "hidden": 3}


def test_an_audience_below_min_cell_shows_no_groups(client, headers, event):
    _going(event, 9, region="Utrecht")
    audience = _attendance(client, headers, event.id)["audience"]
    assert audience["total"] == 9
    for name in ("regions", "ages", "genres"):
        assert audience[name] == {"rows": [], "other": None, "hidden": 9}


def test_an_empty_audience(client, headers, event):
    data = _attendance(client, headers, event.id)
    assert data["counts"] == {"going": 0, "interested": 0, "tickets": 0}
    audience = data["audience"]
    assert (audience["total"], audience["returning"], audience["new"]) == (0, 0, 0)
    assert audience["returning_share"] == 0


def test_an_event_of_another_organisation_is_answered_like_a_missing_one(client, headers):
    foreign = EventFactory()
    _going(foreign, 12)
    answers = {}
    for key in (foreign.id, foreign.slug, "evt_missing"):
        response = client.get(f"/v1/events/{key}/attendance", headers=headers)
        assert response.status_code == 404
        body = response.json()
        assert body["error"] == {"code": "not_found", "message": f"No event with id {key!r}.",
                                 "details": {}}
        answers[key] = (set(body), set(body["meta"]), dict(response.headers).keys() - {
            "x-request-id", "content-length", "date", "x-ratelimit-remaining",
            "x-ratelimit-reset"})
    assert len(set(map(repr, answers.values()))) == 1


def test_the_answer_is_private_and_never_cached(client, headers, event):
    response = client.get(f"/v1/events/{event.id}/attendance", headers=headers)
    assert response.status_code == 200
    assert response.headers["cache-control"] == "private, no-store"
    assert "etag" not in response.headers
    assert set(response.json()["meta"]) == {"request_id"}


def test_a_token_without_the_attendance_scope_is_refused(client, make_token):
    shop = OrganisationFactory(ticket_shop_url="https://shop.example")
    event = EventFactory(organisation=shop)
    token = make_token("read", "scan", "tickets", organisation=shop)
    response = client.get(f"/v1/events/{event.id}/attendance",
                          headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"


def test_a_full_answer_matches_the_document(client, headers, organisation, event):
    """Response validation is on in tests: every field and null shape has to pass it."""
    earlier = EventFactory(organisation=organisation, genre_names=["Disco"],
                           date=event.date - dt.timedelta(days=7))
    year = event.date.year
    for region, count in (("Brussel", 14), ("Antwerpen", 6), ("Luik", 5), (None, 1)):
        for someone in _going(event, count, region=region, birth_year=year - 30):
            _attended(someone, earlier)
    response = client.get(f"/v1/events/{event.id}/attendance", headers=headers)
    assert response.status_code == 200, response.text
    audience = response.json()["data"]["audience"]
    assert audience["regions"] == {"rows": [{"key": "Brussel", "count": 14}], "other": 11,
                                   "hidden": 1}
    assert audience["ages"] == {"rows": [{"key": "30-34", "count": 26}], "other": None,
                                "hidden": 0}
    assert audience["genres"] == {"rows": [{"key": "Disco", "count": 26}], "other": None,
                                  "hidden": 0}
    assert (audience["returning"], audience["new"], audience["returning_share"]) == (26, 0, 100)

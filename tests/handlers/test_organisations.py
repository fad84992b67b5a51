"""GET /organisations and GET /organisations/{id}: filters, order, paging, events count."""

import pytest
from sqlalchemy import text

from tests import api
from tests.api import SITE, day
from tests.factories import EventFactory, OrganisationFactory

ORGANISATIONS = api.Listing("/v1/organisations")


def _mine(ids, *organisations):
    """`ids` of these organisations only (the token's owner, and organisations that the
    command-line tests commit to the same database, are listed too)."""
    wanted = {o.id for o in organisations}
    return [i for i in ids if i in wanted]


def test_by_name(client, auth):
    created = [OrganisationFactory(name=name) for name in ("Zuid", "Awakenings", "Dekmantel")]
    zuid, awakenings, dekmantel = created
    assert _mine(ORGANISATIONS.ids(client, auth), *created) == [
        awakenings.id, dekmantel.id, zuid.id]


def test_every_field_with_the_count_of_approved_events(client, auth):
    organisation = OrganisationFactory(name="Dekmantel", bio="Festival and label.",
                                       website="https://dekmantel.example", verified=True,
                                       since=2007)
    for offset in (-30, 2, 40):
        EventFactory(organisation=organisation, date=day(offset))
    EventFactory(organisation=organisation, date=day(3), cancelled=True)
    for status in ("draft", "pending", "rejected"):
        EventFactory(organisation=organisation, status=status)
    EventFactory()
    expected = {
        "id": organisation.id, "name": "Dekmantel", "bio": "Festival and label.",
        "website": "https://dekmantel.example", "url": f"{SITE}/organisations/{organisation.id}",
        "verified": True, "since": 2007,
        # Approved events, past and coming, cancelled ones included; never drafts.
        "events_count": 4,
    }
    assert ORGANISATIONS.page(client, auth, q="dekmantel")["data"] == [expected]
    detail = client.get(f"/v1/organisations/{organisation.id}", headers=auth)
    assert detail.status_code == 200, detail.text
    assert detail.json()["data"] == expected
    assert detail.json()["meta"]["attribution"]


def test_the_count_counts_each_event_once_and_follows_plain_sql(client, auth, db):
    """The count is read from the kept month counts: an event of three genres is one, events
    of other months add up, and a change in plain SQL (no ORM, no API) shows at once."""
    organisation = OrganisationFactory()
    EventFactory(organisation=organisation, date=day(2),
                 genre_names=["Techno", "House", "Disco"])
    EventFactory(organisation=organisation, date=day(-400))
    moving = EventFactory(organisation=organisation, date=day(70))
    path = f"/v1/organisations/{organisation.id}"
    assert client.get(path, headers=auth).json()["data"]["events_count"] == 3
    db.execute(text("UPDATE events SET status = 'rejected' WHERE id = :id"), {"id": moving.id})
    assert client.get(path, headers=auth).json()["data"]["events_count"] == 2
    db.execute(text("UPDATE organisations SET suspended = true WHERE id = :id"),
               {"id": organisation.id})
    db.execute(text("UPDATE organisations SET suspended = false WHERE id = :id"),
               {"id": organisation.id})
    db.execute(text("DELETE FROM events WHERE date < :day AND organisation_id = :id"),
               {"day": day(0), "id": organisation.id})
    assert ORGANISATIONS.page(client, auth, q=organisation.name)["data"][0]["events_count"] == 1


def test_an_organisation_without_events_counts_zero(client, auth):
    organisation = OrganisationFactory()
    response = client.get(f"/v1/organisations/{organisation.id}", headers=auth)
    assert response.json()["data"]["events_count"] == 0


def test_me_shows_the_real_events_count(client, make_token):
    organisation = OrganisationFactory()
    EventFactory(organisation=organisation)
    EventFactory(organisation=organisation, date=day(-10))
    EventFactory(organisation=organisation, status="draft")
    token = make_token("read", organisation=organisation)
    response = client.get("/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert response.json()["data"]["organisation"]["events_count"] == 2


def test_q_searches_the_name_without_case_or_accents(client, auth):
    ampere = OrganisationFactory(name="Club Ampère")
    OrganisationFactory(name="Paradiso")
    assert ORGANISATIONS.ids(client, auth, q="ampere") == [ampere.id]
    assert ORGANISATIONS.ids(client, auth, q="CLUB AMPÈRE") == [ampere.id]
    assert ORGANISATIONS.ids(client, auth, q="100%") == []


def test_verified(client, auth):
    checked = OrganisationFactory(verified=True)
    unchecked = OrganisationFactory(verified=False)
    verified = ORGANISATIONS.ids(client, auth, verified="true")
    unverified = ORGANISATIONS.ids(client, auth, verified="false")
    assert _mine(verified, checked, unchecked) == [checked.id]
    assert _mine(unverified, checked, unchecked) == [unchecked.id]


def test_filters_combine_with_and(client, auth):
    match = OrganisationFactory(name="Rave Alpha", verified=True)
    OrganisationFactory(name="Rave Bravo", verified=False)
    OrganisationFactory(name="Club Charlie", verified=True)
    assert ORGANISATIONS.ids(client, auth, q="rave", verified="true") == [match.id]


@pytest.mark.parametrize("filters", [{}, {"q": "night"}, {"q": "NIGHT", "verified": "true"},
                                     {"verified": "true"}])
def test_paging_returns_every_organisation_once(client, auth, filters):
    created = [OrganisationFactory(name=f"Night {i:02d}", verified=True) for i in range(7)]
    OrganisationFactory(name="Night 99 unchecked", verified=False)
    OrganisationFactory(name="Day 00", verified=True)
    expected = ORGANISATIONS.ids(client, auth, **filters)
    assert _mine(expected, *created) == [o.id for o in created]
    seen = [o["id"] for o in ORGANISATIONS.walk(client, auth, 3, **filters)]
    assert seen == expected


def test_limit_edges(client, auth):
    for i in range(3):
        OrganisationFactory(name=f"Edge {i}")
    body = ORGANISATIONS.page(client, auth, limit=1, q="edge")
    assert body["meta"]["count"] == 1 and body["meta"]["limit"] == 1
    assert body["meta"]["next_cursor"]
    full = ORGANISATIONS.page(client, auth, limit=100, q="edge")
    assert full["meta"]["count"] == 3 and full["meta"]["next_cursor"] is None
    assert ORGANISATIONS.bad(client, auth, limit=0) == {"limit"}
    assert ORGANISATIONS.bad(client, auth, limit=101) == {"limit"}


def test_a_bad_cursor_or_one_reused_with_other_filters_is_400(client, auth):
    for _ in range(3):
        OrganisationFactory(verified=True)
    cursor = ORGANISATIONS.page(client, auth, limit=1, verified="true")["meta"]["next_cursor"]
    rest = ORGANISATIONS.page(client, auth, limit=1, verified="true", cursor=cursor)
    assert rest["meta"]["count"] == 1
    assert ORGANISATIONS.bad(client, auth, verified="false", cursor=cursor) == {"cursor"}
    assert ORGANISATIONS.bad(client, auth, q="x", verified="true", cursor=cursor) == {"cursor"}
    assert ORGANISATIONS.bad(client, auth, cursor="not.a-cursor") == {"cursor"}


def test_the_list_and_the_detail_revalidate_with_304(client, auth):
    organisation = OrganisationFactory()
    for path in ("/v1/organisations", f"/v1/organisations/{organisation.id}"):
        first = client.get(path, headers=auth)
        assert first.headers["cache-control"] == "public, max-age=60"
        again = client.get(path, headers={**auth, "If-None-Match": first.headers["etag"]})
        assert again.status_code == 304
    EventFactory(organisation=organisation)
    changed = client.get(f"/v1/organisations/{organisation.id}",
                         headers={**auth, "If-None-Match": first.headers["etag"]})
    assert changed.status_code == 200 and changed.json()["data"]["events_count"] == 1


def test_detail_of_a_missing_organisation_is_404_and_names_are_not_ids(client, auth):
    OrganisationFactory(name="Dekmantel")
    for key in ("nope", "Dekmantel"):
        response = client.get(f"/v1/organisations/{key}", headers=auth)
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"

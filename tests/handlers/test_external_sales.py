"""GET and POST /events/{id}/external-sales: the organisation's own shop's count."""

import pytest

from tests.factories import EventFactory


@pytest.fixture
def headers(bearer_of):
    return bearer_of("attendance")


def test_nothing_reported_yet_is_zero(client, headers, organisation):
    event = EventFactory(organisation=organisation, external_ticketing=True)
    response = client.get(f"/v1/events/{event.id}/external-sales", headers=headers)
    assert response.status_code == 200
    assert response.headers["cache-control"] == "private, no-store"
    assert "etag" not in response.headers
    body = response.json()
    assert body["data"] == {"ok": True, "eventId": event.id, "external": True, "sold": 0,
                            "updatedAt": 0}
    assert "attribution" not in body["meta"]


def test_a_reported_count_is_read_back_and_replaced(client, headers, organisation):
    event = EventFactory(organisation=organisation, external_ticketing=True)
    url = f"/v1/events/{event.id}/external-sales"
    first = client.post(url, headers=headers, json={"sold": 120})
    assert first.status_code == 200, first.text
    assert first.json()["data"]["sold"] == 120 and first.json()["data"]["updatedAt"] > 0
    client.post(url, headers=headers, json={"sold": 0})
    assert client.get(url, headers=headers).json()["data"]["sold"] == 0
    client.post(f"/v1/events/{event.slug}/external-sales", headers=headers,
                json={"sold": 10_000_000})
    assert client.get(url, headers=headers).json()["data"]["sold"] == 10_000_000


@pytest.mark.parametrize("body", [{"sold": -1}, {"sold": 10_000_001}, {"sold": 1.5},
                                  {"sold": "12"}, {}, {"sold": 1, "extra": 2}])
def test_out_of_range_or_malformed_counts_are_400(client, headers, organisation, body):
    event = EventFactory(organisation=organisation, external_ticketing=True)
    url = f"/v1/events/{event.id}/external-sales"
    client.post(url, headers=headers, json={"sold": 7})
    response = client.post(url, headers=headers, json=body)
    assert response.status_code == 400
    assert response.json()["error"]["details"]["params"]
    assert client.get(url, headers=headers).json()["data"]["sold"] == 7, "nothing lost"


def test_an_event_without_external_ticketing_is_409(client, headers, organisation):
    event = EventFactory(organisation=organisation, external_ticketing=False)
    response = client.post(f"/v1/events/{event.id}/external-sales", headers=headers,
                           json={"sold": 5})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "conflict"
    read = client.get(f"/v1/events/{event.id}/external-sales", headers=headers).json()["data"]
    assert read["external"] is False and read["sold"] == 0


def test_another_organisations_event_is_404_like_a_missing_one(client, headers):
    foreign = EventFactory(external_ticketing=True)
    missing = client.get("/v1/events/nope/external-sales", headers=headers)
    other = client.get(f"/v1/events/{foreign.id}/external-sales", headers=headers)
    assert missing.status_code == other.status_code == 404
    assert other.json()["error"]["code"] == "not_found"
    assert set(other.json()["error"]) == set(missing.json()["error"])
    post = client.post(f"/v1/events/{foreign.id}/external-sales", headers=headers,
                       json={"sold": 1})
    assert post.status_code == 404


def test_a_token_without_the_attendance_scope_is_403(client, make_token, organisation):
    event = EventFactory(organisation=organisation, external_ticketing=True)
    token = make_token("read", "scan", organisation=organisation)
    response = client.get(f"/v1/events/{event.id}/external-sales",
                          headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 403

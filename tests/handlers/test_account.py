"""GET /me: the token, its organisation, its limits and today's usage."""

from tests.factories import OrganisationFactory


def test_me_describes_the_token_and_its_organisation(client, make_token):
    organisation = OrganisationFactory(name="Club Ampère", verified=True, since=2011)
    token = make_token("read", "scan", organisation=organisation)
    response = client.get("/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200
    assert response.headers["cache-control"] == "private, no-store"
    assert "etag" not in response.headers
    me = response.json()["data"]
    assert "attribution" not in response.json()["meta"]
    assert me["token"]["prefix"] == token[:17]
    assert me["token"]["scopes"] == ["read", "scan"]
    assert token not in response.text, "the token itself is never shown again"
    assert me["organisation"]["id"] == organisation.id
    assert me["organisation"]["name"] == "Club Ampère"
    assert me["organisation"]["url"] == f"http://127.0.0.1:8080/organisations/{organisation.id}"
    assert me["organisation"]["verified"] is True and me["organisation"]["since"] == 2011


def test_me_counts_requests_per_route_and_matches_the_headers(client, make_token, app,
                                                             monkeypatch):
    monkeypatch.setattr(app.service.usage, "clock", lambda: 1_790_000_030.0)
    headers = {"Authorization": f"Bearer {make_token('read', per_day=500)}"}
    for _ in range(3):
        client.get("/v1/me", headers=headers)
    response = client.get("/v1/me", headers=headers)
    me = response.json()["data"]
    assert me["usage_today"] == [{"path": "/v1/me", "count": 4}]
    assert me["rate_limit"]["per_minute"] == 120
    assert me["rate_limit"]["per_day"] == 500
    assert me["rate_limit"]["used_today"] == 4
    assert me["rate_limit"]["remaining_this_minute"] == int(response.headers["x-ratelimit-remaining"])
    assert int(response.headers["x-ratelimit-limit"]) == 120
    assert int(response.headers["x-ratelimit-reset"]) == 1_790_000_040, "aligned to the minute"

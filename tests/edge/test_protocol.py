"""Issue 22, "Protocol details": every bad parameter at once, parameters written only one way,
one Authorization header on every surface, redirects on the configured site, and a log no
request can write lines into."""

import logging

import orjson
import pytest

from tests.api import SITE, bad_params
from tests.edge.test_door_lane import lane_scans  # noqa: F401 - the fixture
from tests.factories import OrganisationFactory, TicketFactory, tonight_event


def _error(response, status: int) -> dict:
    """The REST envelope of a refusal, with the request's id."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error", "meta"}
    assert body["meta"]["request_id"] == response.headers["x-request-id"]
    return body["error"]


# (a) Every bad parameter at once: the schema's and the rules' in one 400.
@pytest.mark.parametrize(("query", "named"), [
    ({"limit": "0", "lat": "52"}, {"limit", "lng"}),
    ({"has_tickets": "yes", "from": "2026-12-10", "to": "2026-12-01"}, {"has_tickets", "to"}),
    ({"limit": "0", "radius_km": "5", "min_price": "9", "max_price": "1"},
     {"limit", "radius_km", "min_price"}),
    ({"colour": "red", "from": "0001-01-01"}, {"colour", "from"}),
])
def test_schema_and_rule_errors_come_in_one_400(client, auth, query, named):
    assert bad_params(client, auth, "/v1/events", **query) == named


def _lists_with_a_cursor(document: dict) -> list[str]:
    """The paths of every GET of the document that pages with `cursor`."""
    return [path for path, item in document["paths"].items() if "get" in item
            and any(parameter.get("$ref", "").endswith("/Cursor")
                    or parameter.get("name") == "cursor"
                    for parameter in item["get"].get("parameters", []))]


def test_a_bad_cursor_is_named_in_the_same_400_on_every_list(app, client, auth):
    paths = _lists_with_a_cursor(app.service.document)
    assert "/events" in paths and "/changes" in paths
    for path in paths:
        url = "/v1" + path.replace("{id}", "someone")
        assert bad_params(client, auth, url, limit="0", cursor="bad") == {"limit", "cursor"}, path
        if "{" not in path:  # (one of a missing resource is a 404 first)
            assert bad_params(client, auth, url, cursor="bad") == {"cursor"}, path


@pytest.mark.parametrize("query", [
    {"from": "2026-12-10", "to": "2026-12-01", "cursor": "bad"},
    {"from": "2026-12-10", "to": "2026-12-01", "cursor": "bad", "facets": "genre"},
])
def test_a_bad_cursor_and_a_rule_error_come_in_one_400(client, auth, query):
    assert bad_params(client, auth, "/v1/events", **query) == {"to", "cursor"}


def test_a_rule_says_nothing_of_a_parameter_the_schema_refused(client, auth):
    error = _error(client.get("/v1/events", headers=auth, params={"lat": "NaN", "lng": "4"}),
                   400)
    assert [(p["name"], p["message"]) for p in error["details"]["params"]] == [
        ("lat", "must be a finite number in ASCII digits")]


# (b) radius_km needs its centre; numbers in ASCII digits; one value per parameter.
def test_radius_km_without_lat_and_lng_is_a_400(client, auth):
    assert bad_params(client, auth, "/v1/events", radius_km="10") == {"radius_km"}


@pytest.mark.parametrize(("query", "name"), [
    ("lat=NaN&lng=4", "lat"),
    ("lat=52&lng=-Infinity", "lng"),
    ("lat=52&lng=inf", "lng"),
    ("max_price=1e999", "max_price"),
    ("limit=%EF%BC%91%EF%BC%90", "limit"),  # full-width "１０"
    ("limit=1_0", "limit"),
    ("limit=+10", "limit"),
    ("limit=%2010", "limit"),
    ("limit=%D9%A1", "limit"),  # Arabic-Indic one
    ("lat=%EF%BC%95%EF%BC%92&lng=4", "lat"),
    ("limit=" + "9" * 5000, "limit"),
])
def test_numbers_not_in_ascii_digits_are_a_400(client, auth, query, name):
    error = _error(client.get(f"/v1/events?{query}", headers=auth), 400)
    assert {p["name"] for p in error["details"]["params"]} == {name}


@pytest.mark.parametrize("query", ["limit=10&limit=20", "limit=10&limit=10", "q=a&q=b",
                                   "has_tickets=true&has_tickets=false"])
def test_a_single_valued_parameter_given_twice_is_a_400(client, auth, query):
    error = _error(client.get(f"/v1/events?{query}", headers=auth), 400)
    [param] = error["details"]["params"]
    assert param["message"] == "is given more than once"


def test_plain_numbers_still_pass(client, auth):
    for query in ("lat=52.37&lng=4.89&radius_km=10", "lat=-1.5e1&lng=0", "limit=010",
                  "max_price=0"):
        response = client.get(f"/v1/events?{query}", headers=auth)
        assert response.status_code == 200, (query, response.text)


# (c) Two Authorization headers: a 400 on every surface, in that surface's envelope.
@pytest.fixture
def twice(make_token):
    """Two Authorization headers, each of a valid token holding every scope."""
    organisation = OrganisationFactory(ticket_shop_url="https://shop.example")
    return [("Authorization", f"Bearer {make_token(*scopes, organisation=organisation)}")
            for scopes in (("read", "scan", "attendance", "tickets"), ("read", "scan"))]


def _two_authorizations_refused(response) -> None:
    error = _error(response, 400)
    assert error["code"] == "bad_request"
    assert error["details"]["params"] == [
        {"name": "Authorization", "in": "header", "message": "is given more than once"}]


def test_two_authorization_headers_are_a_400_on_the_full_way(client, twice):
    _two_authorizations_refused(client.get("/v1/me", headers=twice))


def test_two_authorization_headers_are_a_400_at_the_door(client, twice, lane_scans):  # noqa: F811
    event = tonight_event(organisation=OrganisationFactory())
    TicketFactory(event_id=event.id, code="TWICE123")
    _two_authorizations_refused(client.post("/v1/scan", headers=twice,
                                            json={"code": "TWICE123"}))
    assert lane_scans == []


def test_two_authorization_headers_are_a_400_on_a_kept_answer(client, twice):
    first, _second = twice
    assert client.get("/v1/genres", headers=[first]).status_code == 200
    assert client.get("/v1/genres", headers=[first]).status_code == 200  # served as kept
    _two_authorizations_refused(client.get("/v1/genres", headers=twice))


def test_two_authorization_headers_are_a_400_on_mcp(client, twice):
    call = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    _two_authorizations_refused(client.post(
        "/mcp", content=call, headers=[*twice, ("Content-Type", "application/json"),
                                       ("Accept", "application/json, text/event-stream")]))


@pytest.mark.parametrize("path", ["/oauth/token", "/oauth/revoke", "/oauth/register"])
def test_two_authorization_headers_are_an_rfc_6749_400_on_oauth_endpoints(client, path):
    basic = [("Authorization", "Basic Y2xpZW50OnNlY3JldA=="),
             ("Authorization", "Basic b3RoZXI6c2VjcmV0")]
    response = client.post(path, headers=basic, data={"grant_type": "refresh_token",
                                                      "refresh_token": "x"})
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_request"
    assert "Authorization" in response.json()["error_description"]
    assert response.headers["cache-control"] == "no-store"


# (d) The trailing-slash redirect names the configured site, never the Host header.
@pytest.mark.parametrize(("path", "location"), [
    ("/v1/terms/", f"{SITE}/v1/terms"),
    ("/v1/events/?limit=5", f"{SITE}/v1/events?limit=5"),
    ("/v1/events/evt_1/", f"{SITE}/v1/events/evt_1"),
])
def test_a_trailing_slash_redirects_to_the_configured_site(client, path, location):
    response = client.get(path, headers={"Host": "evil.example"}, follow_redirects=False)
    assert response.status_code == 307
    assert response.headers["location"] == location
    assert response.headers["x-request-id"]


# (e) Control characters in a logged path are escaped.
def test_control_characters_in_a_path_cannot_forge_a_log_line(client, caplog):
    forged = "/v1/x%0D%0A2026-11-26 12:00:00 INFO agenda.access GET /v1/me 200%1B[2J"
    with caplog.at_level(logging.INFO, logger="agenda.access"):
        client.get(forged)
    [line] = [r.getMessage() for r in caplog.records if r.name == "agenda.access"]
    assert "\n" not in line and "\r" not in line and "\x1b" not in line
    assert "/v1/x\\r\\n2026-11-26 12:00:00 INFO" in line and "\\x1b[2J" in line

"""Bad input of every kind gets its documented status in the error envelope, never a 500."""

import inspect
import uuid

import pytest

from edge import problems
from models import errors


def _error(response, status, code):
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error", "meta"}
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    assert body["meta"]["request_id"] == response.headers["x-request-id"]
    assert "Traceback" not in response.text and "SELECT" not in response.text
    return body["error"]


def _params(error):
    return {(p["name"], p["in"]) for p in error["details"]["params"]}


def test_every_bad_query_parameter_is_named_at_once(client, auth):
    response = client.get("/v1/events", headers=auth, params={
        "limit": "0", "radius_km": "201", "lat": "91", "from": "2026-13-40",
        "has_tickets": "maybe", "colour": "red", "genre": "Polka"})
    error = _error(response, 400, "bad_request")
    assert _params(error) == {("limit", "query"), ("radius_km", "query"), ("lat", "query"),
                              ("from", "query"), ("has_tickets", "query"),
                              ("colour", "query"), ("genre", "query")}
    assert all(p["message"] for p in error["details"]["params"])


@pytest.mark.parametrize(("query", "name"), [
    ({"limit": "101"}, "limit"),
    ({"limit": "abc"}, "limit"),
    ({"max_price": "-0.01"}, "max_price"),
    ({"lng": "180.5"}, "lng"),
    ({"cursor": ""}, "cursor"),
])
def test_out_of_range_numbers_and_empty_values_are_400(client, auth, query, name):
    error = _error(client.get("/v1/events", headers=auth, params=query), 400, "bad_request")
    assert _params(error) == {(name, "query")}


@pytest.mark.parametrize("limit", ["1", "100"])
def test_limit_edges_are_accepted(client, auth, limit):
    response = client.get("/v1/events", headers=auth, params={"limit": limit})
    assert response.status_code != 400, response.text


def test_unknown_route_is_404_in_the_envelope(client, auth):
    _error(client.get("/v1/nothing-here", headers=auth), 404, "not_found")
    _error(client.get("/nowhere"), 404, "not_found")


def test_wrong_method_is_405_with_the_allowed_methods(client, auth):
    response = client.delete("/v1/events/abc/external-sales", headers=auth)
    _error(response, 405, "method_not_allowed")
    assert set(response.headers["allow"].split(", ")) == {"GET", "HEAD", "POST"}
    response = client.put("/v1/terms")
    _error(response, 405, "method_not_allowed")
    assert set(response.headers["allow"].split(", ")) == {"GET", "HEAD"}


@pytest.mark.parametrize(("content", "content_type"), [
    (b'{"code": ', "application/json"),
    (b"\xff\xfe\xfa not utf-8", "application/json"),
    (b"[1, 2", "application/json; charset=utf-8"),
])
def test_malformed_json_bodies_are_400(client, auth, content, content_type):
    response = client.post("/v1/scan", headers={**auth, "Content-Type": content_type},
                           content=content)
    error = _error(response, 400, "bad_request")
    assert _params(error) == {("body", "body")}


def test_body_fields_are_named_by_their_json_path(client, auth):
    response = client.post("/v1/events/e1/external-tickets", headers=auth,
                           json={"source": "ticketcorner", "invite": "yes", "items": [], "x": 1})
    error = _error(response, 400, "bad_request")
    assert _params(error) == {("source", "body"), ("invite", "body"), ("items", "body"),
                              ("x", "body")}


def test_a_missing_body_is_400(client, auth):
    error = _error(client.post("/v1/scan", headers={**auth, "Content-Type": "application/json"}),
                   400, "bad_request")
    assert error["details"]["params"]


def test_a_wrong_content_type_is_415(client, auth):
    response = client.post("/v1/scan", headers={**auth, "Content-Type": "text/plain"},
                           content=b"code=ABCD")
    _error(response, 415, "unsupported_media_type")


def test_a_huge_body_is_413(client, auth):
    huge = b'{"code": "' + b"A" * (1024 * 1024 + 10) + b'"}'
    response = client.post("/v1/scan", headers={**auth, "Content-Type": "application/json"},
                           content=huge)
    _error(response, 413, "payload_too_large")


def test_a_huge_chunked_body_is_413(client, auth):
    def chunks():
        yield b'{"code": "'
        for _ in range(200):
            yield b"A" * 8192
        yield b'"}'

    response = client.post("/v1/scan", headers={**auth, "Content-Type": "application/json"},
                           content=chunks())
    _error(response, 413, "payload_too_large")


def test_an_accept_header_without_json_is_406(client, auth):
    _error(client.get("/v1/me", headers={**auth, "Accept": "text/html"}), 406, "not_acceptable")
    assert client.get("/v1/me", headers={**auth, "Accept": "application/json"}).status_code == 200
    assert client.get("/v1/me", headers={**auth, "Accept": "text/html, */*;q=0.1"}).status_code == 200


@pytest.mark.parametrize("odd", ["%00", "..%2F..%2Fetc", "%F0%9F%8E%A7", "a%20b", "'%3B--", "x" * 201])
def test_path_ids_with_odd_characters_never_500(client, auth, odd):
    response = client.get(f"/v1/events/{odd}", headers=auth)
    assert response.status_code in (400, 404, 501), response.text
    assert response.json()["error"]["code"] in ("bad_request", "not_found", "not_implemented")


def test_a_well_formed_request_id_is_echoed_and_a_bad_one_replaced(client):
    given = str(uuid.uuid4())
    assert client.get("/v1/terms", headers={"X-Request-Id": given}).headers["x-request-id"] == given
    made = set()
    # Not a UUID; a UUID without its hyphens, in braces, as a URN; 36 characters of another
    # kind.
    for bad in ("<script>", given.replace("-", ""), f"{{{given}}}", f"urn:uuid:{given}",
                "x" * 36, given[:-1] + "g"):
        replaced = client.get("/v1/terms", headers={"X-Request-Id": bad})
        request_id = replaced.headers["x-request-id"]
        assert request_id != bad
        # A random UUID of its own, written as one (lower case, hyphens).
        assert str(uuid.UUID(request_id)) == request_id
        assert uuid.UUID(request_id).version == 4
        assert uuid.UUID(request_id).variant == uuid.RFC_4122
        made.add(request_id)
    assert len(made) == 6


def test_an_unexpected_failure_is_500_without_internals(client, auth, app, monkeypatch, caplog):
    from models import tokens

    def explode(*args, **kwargs):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(tokens, "describe_token", explode)
    response = client.get("/v1/me", headers=auth)
    _error(response, 500, "internal_error")
    assert "secret internals" not in response.text
    assert response.headers["x-request-id"] in caplog.text


def test_an_unreachable_database_is_503_with_retry_after(client, auth, app, monkeypatch):
    from sqlalchemy.exc import OperationalError

    from models import tokens

    def unreachable(*args, **kwargs):
        raise OperationalError("SELECT 1", {}, Exception("connection refused"))

    monkeypatch.setattr(tokens, "describe_token", unreachable)
    response = client.get("/v1/me", headers=auth)
    _error(response, 503, "service_unavailable")
    assert int(response.headers["retry-after"]) > 0


def test_nul_characters_never_reach_the_database(client, auth):
    """PostgreSQL cannot hold NUL in text: a parameter with one is a 400, a scanned code
    with one is simply unknown, on every database alike."""
    response = client.get("/v1/events", headers=auth, params={"q": "a\x00b", "city": "\x00"})
    assert response.status_code == 400
    assert {p["name"] for p in response.json()["error"]["details"]["params"]} == {"q", "city"}
    assert client.get("/v1/events/%00", headers=auth).status_code == 400
    response = client.post("/v1/scan", headers=auth, json={"code": "AB\x00CD", "eventId": "\x00"})
    assert response.status_code == 200
    assert response.json()["data"]["status"] == "unknown"


def test_a_nul_character_outside_the_rest_parameters_is_a_400(client):
    """The OAuth and page endpoints read their own parameters; one with NUL is refused too."""
    response = client.get("/oauth/authorize", params={
        "client_id": "cli_\x00", "response_type": "code", "redirect_uri": "https://a.example/cb",
        "code_challenge": "x" * 43, "code_challenge_method": "S256"})
    assert response.status_code == 400


def test_every_domain_error_kind_has_its_status_and_code_in_the_one_table():
    kinds = {kind for _name, kind in inspect.getmembers(errors, inspect.isclass)
             if issubclass(kind, errors.DomainError)}
    assert kinds <= set(problems.KINDS)
    assert problems.status_of(errors.ScopeMissing("scan", "Needs scan.")) == (403, "forbidden")
    assert problems.status_of(problems.PayloadTooLarge()) == (413, "payload_too_large")
    assert problems.CODES[403] == "forbidden" and problems.CODES[400] == "bad_request"


def test_a_bad_field_is_named_as_the_rest_caller_knows_it(client, auth):
    response = client.get("/v1/events", headers=auth,
                          params={"from": "2027-05-02", "to": "2027-05-01"})
    error = _error(response, 400, "bad_request")
    assert error["details"]["params"] == [{"name": "to", "in": "query",
                                           "message": "is before from"}]

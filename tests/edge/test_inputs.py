"""Issue 22, "Inputs that give a 500 today": each a clear 4xx in the REST envelope with the
request id, and nothing stored lost."""

import logging

import pytest
from sqlalchemy import func, select

from models.tickets import Ticket
from tests.factories import EventFactory, OrganisationFactory, TicketFactory, tonight_event

JSON = {"Content-Type": "application/json"}
DEEP = "[" * 1000 + "]" * 1000


def _refused(response, status: int, code: str) -> dict:
    """The error of a refusal in the REST envelope, carrying the request's id."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error", "meta"} and body["error"]["code"] == code
    assert body["meta"]["request_id"] == response.headers["x-request-id"]
    return body["error"]


def _body_refused(response) -> str:
    """The message of a 400 naming the body."""
    error = _refused(response, 400, "bad_request")
    [param] = error["details"]["params"]
    assert (param["name"], param["in"]) == ("body", "body")
    return param["message"]


@pytest.fixture
def organisation(db):
    return OrganisationFactory(ticket_shop_url="https://shop.example")


@pytest.fixture
def event(organisation):
    return EventFactory(organisation=organisation, external_ticketing=True)


@pytest.fixture
def door_ticket(organisation):
    """A valid ticket of an event whose doors are open."""
    return TicketFactory(event_id=tonight_event(organisation=organisation).id, code="DOOR1234")


def _delivered(db, event) -> int:
    db.expire_all()
    return db.scalar(select(func.count(Ticket.id)).where(Ticket.event_id == event.id))


# 1. POST /scan with 1,000-deep nested JSON (the door's lane parsed it before the token).
@pytest.mark.parametrize("body", [DEEP, '{"code": ' + DEEP + "}"])
def test_a_1000_deep_scan_body_is_a_400_and_logs_no_traceback(client, bearer_of, door_ticket,
                                                              caplog, body):
    door = bearer_of("scan")
    with caplog.at_level(logging.WARNING):
        message = _body_refused(client.post("/v1/scan", headers={**door, **JSON}, content=body))
        refused = client.post("/v1/scan", content=body,
                              headers={"Authorization": "Bearer nonsense", **JSON})
    assert "deep" in message
    _refused(refused, 401, "unauthorized")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert client.post("/v1/scan", headers=door, json={"code": "DOOR1234"}).json()["data"][
        "status"] == "ok", "the ticket is untouched"


# 2. The same nesting on POST external-tickets.
def test_a_1000_deep_delivery_is_a_400_and_adds_nothing(client, db, bearer_of, event):
    url = f"/v1/events/{event.id}/external-tickets"
    tickets = bearer_of("tickets")
    first = client.post(url, headers=tickets,
                        json={"items": [{"code": "KEEP1234", "email": "a@mail.example"}]})
    assert first.status_code == 200, first.text
    for body in (DEEP, '{"items": [' + DEEP + "]}",
                 '{"items": [{"code": "DEEP1234", "email": "a@mail.example", "name": '
                 + DEEP + "}]}"):
        assert "deep" in _body_refused(client.post(url, headers={**tickets, **JSON},
                                                   content=body))
    assert _delivered(db, event) == 1


# 3. A lone surrogate in a scan code or an item's name.
def test_a_lone_surrogate_in_a_scan_code_is_a_400(client, bearer_of, door_ticket):
    door = bearer_of("scan")
    message = _body_refused(client.post("/v1/scan", headers={**door, **JSON},
                                        content=b'{"code": "DOOR\\ud800"}'))
    assert "surrogate" in message
    assert client.post("/v1/scan", headers=door, json={"code": "DOOR1234"}).json()["data"][
        "status"] == "ok"


def test_a_lone_surrogate_in_an_items_name_is_a_400_and_adds_nothing(client, db, bearer_of,
                                                                     event):
    content = (b'{"items": [{"code": "SURR1234", "email": "a@mail.example", '
               b'"name": "Sam \\udfff"}]}')
    message = _body_refused(client.post(f"/v1/events/{event.id}/external-tickets",
                                        headers={**bearer_of("tickets"), **JSON},
                                        content=content))
    assert "surrogate" in message
    assert _delivered(db, event) == 0


# 4. GET /v1/events?from=0001-01-01 (the list's date arithmetic overflowed).
@pytest.mark.parametrize(("query", "named"), [
    ({"from": "0001-01-01"}, {"from"}),
    ({"to": "0001-01-01", "from": "0001-01-01"}, {"from", "to"}),
    ({"from": "1899-12-31"}, {"from"}),
])
def test_a_day_before_1900_is_a_400_naming_it(client, auth, query, named):
    error = _refused(client.get("/v1/events", headers=auth, params=query), 400, "bad_request")
    assert {p["name"] for p in error["details"]["params"]} == named


def test_the_first_and_last_days_are_listed(client, auth):
    for query in ({"from": "1900-01-01"}, {"from": "9999-12-31"}, {"to": "9999-12-31"}):
        assert client.get("/v1/events", headers=auth, params=query).status_code == 200


# 5. A 5,000-digit integer for `sold` (Python refuses to read an int of over 4,300 digits).
@pytest.mark.parametrize("digits", ["9" * 5000, "-" + "9" * 5000, "9" * 400, "1" + "0" * 20])
def test_a_huge_integer_for_sold_is_a_400_and_keeps_the_count(client, bearer_of, event, digits):
    url = f"/v1/events/{event.id}/external-sales"
    attendance = bearer_of("attendance")
    assert client.post(url, headers=attendance, json={"sold": 7}).status_code == 200
    response = client.post(url, headers={**attendance, **JSON},
                           content=b'{"sold": ' + digits.encode() + b"}")
    error = _refused(response, 400, "bad_request")
    assert {p["name"] for p in error["details"]["params"]} <= {"body", "sold"}
    assert client.get(url, headers=attendance).json()["data"]["sold"] == 7


# 6. POST /scan or external-sales without a Content-Type: 415, not a body taken for JSON.
def test_a_scan_without_content_type_is_a_415(client, bearer_of, door_ticket):
    door = bearer_of("scan")
    response = client.post("/v1/scan", headers=door, content=b'{"code": "DOOR1234"}')
    _refused(response, 415, "unsupported_media_type")
    assert response.headers["accept"] == "application/json"
    assert client.post("/v1/scan", headers=door, json={"code": "DOOR1234"}).json()["data"][
        "status"] == "ok", "the refused scan used nothing"


def test_external_sales_without_content_type_is_a_415_and_keeps_the_count(client, bearer_of,
                                                                          event):
    url = f"/v1/events/{event.id}/external-sales"
    attendance = bearer_of("attendance")
    client.post(url, headers=attendance, json={"sold": 7})
    _refused(client.post(url, headers=attendance, content=b'{"sold": 9}'), 415,
             "unsupported_media_type")
    assert client.get(url, headers=attendance).json()["data"]["sold"] == 7


# Found by the hostile families: an upper-case media type skipped body validation (a 500).
@pytest.mark.parametrize("content_type", ["APPLICATION/JSON", "Application/Json; charset=UTF-8"])
def test_a_json_media_type_in_any_case_is_read_as_json(client, bearer_of, event, content_type):
    url = f"/v1/events/{event.id}/external-sales"
    attendance = bearer_of("attendance")
    response = client.post(url, headers={**attendance, "Content-Type": content_type},
                           content=b'{"sold": 12}')
    assert response.status_code == 200, response.text
    error = _refused(client.post(url, headers={**attendance, "Content-Type": content_type},
                                 content=b'{"sold": "many"}'), 400, "bad_request")
    assert [p["name"] for p in error["details"]["params"]] == ["sold"]
    assert client.get(url, headers=attendance).json()["data"]["sold"] == 12

"""POST /scan's lane (edge/door_lane.py): a well-formed scan is answered before the framework,
exactly as the full way answers it; anything else goes the full way and is counted once."""

import asyncio
import datetime as dt
import json
import os
import re
import subprocess
from zoneinfo import ZoneInfo

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from agenda.app import create_app
from edge.door_lane import DoorLane
from models import badges, organisations, tokens
from models.badges import EarnedBadge
from models.tickets import Ticket
from tests.conftest import APP_SETTINGS, joined
from tests.factories import PersonFactory, TicketFactory, tonight_event
from tests.servers import AGENDA, agenda_serve, committed, drop_database, migrated_database

# Headers that belong to one request (or one application's counters), not to the answer.
PER_REQUEST = {"date", "x-request-id", "x-ratelimit-remaining", "x-ratelimit-reset",
               "ratelimit", "content-length"}


@pytest.fixture(scope="module")
def full_way_app(database_url):
    """The same application with the lane off: every scan goes through Connexion."""
    app = create_app({"database_url": database_url, **APP_SETTINGS, "door_lane": False})
    yield app
    app.service.close()


@pytest.fixture
def full_way(full_way_app, db):
    with joined(full_way_app.service, db.get_bind()), full_way_app.test_client() as client:
        yield client


@pytest.fixture
def lane_scans(monkeypatch):
    """The scans the lane made itself (arguments of each), in order."""
    made = []
    scan = DoorLane._scan

    def counted(lane, *args):
        made.append(args)
        return scan(lane, *args)

    monkeypatch.setattr(DoorLane, "_scan", counted)
    return made


@pytest.fixture
def door(bearer_of):
    return bearer_of("scan")


def remaining(response) -> int:
    return int(re.search(r'"day";r=(\d+)', response.headers["ratelimit"]).group(1))


def comparable(response) -> tuple:
    """What two answers to the same scan share: status, headers, body (times as <when>)."""
    envelope = response.json()
    assert envelope["meta"]["request_id"] == response.headers["x-request-id"]
    data = {key: re.sub(r"\d\d:\d\d on \d\d-\d\d-\d{4}", "<when>", value)
            if isinstance(value, str) else value
            for key, value in envelope.get("data", {}).items() if key != "scannedAt"}
    headers = {name: value for name, value in response.headers.items()
               if name not in PER_REQUEST}
    return response.status_code, headers, data, envelope.get("error")


def test_the_lane_answers_every_verdict_as_the_full_way_does(client, full_way, lane_scans, door,
                                                             organisation):
    event = tonight_event(organisation=organisation, title="Parity Night")
    other = tonight_event(organisation=organisation, title="Other Night")
    for code in ("LANE0001", "FULL0001"):
        TicketFactory(event_id=event.id, code=code, type="Early bird", holder="Sam")
    for code in ("LANE0002", "FULL0002"):
        TicketFactory(event_id=event.id, code=code, status="void")
    scans = [  # (body, with {} for the ticket's code, ticket, verdict)
        ({"code": "{}"}, 1, "ok"),
        ({"code": "{}"}, 1, "used"),
        ({"code": "https://agenda.example/t/{}?door=2"}, 1, "used"),
        ({"code": "{}", "eventId": other.id}, 1, "wrong_event"),
        ({"code": "NOPE{}"}, 1, "unknown"),
        ({"code": "{}", "eventId": event.id}, 2, "void"),
    ]
    for body, ticket, status in scans:
        lane = client.post("/v1/scan", headers=door,
                           json={**body, "code": body["code"].format(f"LANE000{ticket}")})
        full = full_way.post("/v1/scan", headers=door,
                             json={**body, "code": body["code"].format(f"FULL000{ticket}")})
        assert lane.status_code == 200 and lane.json()["data"]["status"] == status
        assert comparable(lane) == comparable(full)
    assert len(lane_scans) == len(scans)
    assert lane.headers["cache-control"] == "private, no-store"
    assert {"x-ratelimit-limit", "x-ratelimit-remaining", "ratelimit"} <= set(lane.headers)


def test_the_lane_echoes_a_clients_request_id(client, lane_scans, door):
    request_id = "0b7f3c9e-55a1-4c47-9d1e-3f1a6f2b8c10"
    response = client.post("/v1/scan", headers={**door, "X-Request-Id": request_id},
                           json={"code": "NOPE0000"})
    assert response.headers["x-request-id"] == request_id
    assert response.json()["meta"]["request_id"] == request_id
    assert len(lane_scans) == 1


@pytest.mark.parametrize("code", ["x" * 2048, "x"])
def test_the_longest_and_shortest_codes_are_scanned_by_the_lane(client, lane_scans, door, code):
    response = client.post("/v1/scan", headers=door, json={"code": code, "eventId": "e" * 200})
    assert response.status_code == 200 and response.json()["data"]["status"] == "unknown"
    assert len(lane_scans) == 1


@pytest.mark.parametrize("request_, status, field", [
    ({"content": b'{"code": "X"', "headers": {"Content-Type": "application/json"}}, 400, "body"),
    ({"content": b"", "headers": {"Content-Type": "application/json"}}, 400, "body"),
    ({"json": ["X"]}, 400, "body"),
    ({"json": {"code": "X", "door": 2}}, 400, "door"),
    ({"json": {"code": ""}}, 400, "code"),
    ({"json": {"code": "x" * 2049}}, 400, "code"),
    ({"json": {"code": "X", "eventId": "e" * 201}}, 400, "eventId"),
    ({"json": {"eventId": "e"}}, 400, "code"),
    ({"json": {"code": "X"}, "params": {"code": "X"}}, 400, "code"),
    ({"content": b"code=X", "headers": {"Content-Type": "application/x-www-form-urlencoded"}},
     415, None),
])
def test_what_the_lane_cannot_answer_gets_the_full_ways_error_counted_once(
        client, lane_scans, door, request_, status, field):
    before = remaining(client.post("/v1/scan", headers=door, json={"code": "NOPE0000"}))
    response = client.post("/v1/scan", **{**request_, "headers": {
        **door, **request_.get("headers", {})}})
    assert response.status_code == status, response.text
    error = response.json()["error"]
    if field is not None:
        assert error["code"] == "bad_request"
        assert field in [param["name"] for param in error["details"]["params"]]
    assert remaining(response) == before - 1
    assert len(lane_scans) == 1, "only the well-formed scan"


def test_a_scan_without_a_good_token_or_scope_is_refused_as_on_the_full_way(
        client, full_way, lane_scans, db, make_token, door):
    read_only = {"Authorization": f"Bearer {make_token('read')}"}
    revoked_token = make_token("scan")
    tokens.revoke_token(db, tokens.LIVE_PREFIX + revoked_token.removeprefix(tokens.LIVE_PREFIX)[
        :tokens.VISIBLE_CHARS])
    refused = [({}, 401), (read_only, 403), ({"Authorization": f"Bearer {revoked_token}"}, 401),
               ({"Authorization": "Basic eDp5"}, 401)]
    for headers, status in refused:
        lane = client.post("/v1/scan", headers=headers, json={"code": "X"})
        full = full_way.post("/v1/scan", headers=headers, json={"code": "X"})
        assert lane.status_code == status
        assert comparable(lane) == comparable(full)
        if status == 403:
            assert "insufficient_scope" in lane.headers["www-authenticate"]
    assert lane_scans == []


def test_a_token_at_its_daily_limit_is_refused_by_the_lane(client, lane_scans, make_token,
                                                          organisation):
    door = {"Authorization": f"Bearer {make_token('scan', organisation=organisation, per_day=3)}"}
    answers = [client.post("/v1/scan", headers=door, json={"code": "NOPE0000"})
               for _ in range(4)]
    assert [answer.status_code for answer in answers] == [200, 200, 200, 429]
    assert answers[3].json()["error"]["code"] == "rate_limited"
    assert "retry-after" in answers[3].headers
    assert len(lane_scans) == 3


def test_a_failure_in_the_lane_goes_the_full_way_once(client, lane_scans, monkeypatch, door,
                                                      organisation, db, caplog):
    event = tonight_event(organisation=organisation)
    ticket = TicketFactory(event_id=event.id, code="FAIL0001")
    before = remaining(client.post("/v1/scan", headers=door, json={"code": "NOPE0000"}))

    def unreachable(_lane, *_args):
        raise OperationalError("SELECT", {}, ConnectionError("the database went away"))

    monkeypatch.setattr(DoorLane, "_scan", unreachable)
    response = client.post("/v1/scan", headers=door, json={"code": "FAIL0001"})
    assert response.status_code == 200 and response.json()["data"]["status"] == "ok"
    assert remaining(response) == before - 1
    assert db.scalar(select(Ticket.status).where(Ticket.id == ticket.id)) == "used"
    assert "goes the full way" in caplog.text


def test_a_holders_ticket_is_taken_with_its_badges_or_not_at_all(client, lane_scans, monkeypatch,
                                                                  door, organisation, db):
    """A ticket with an account is taken in the transaction that awards its badges."""
    person = PersonFactory()
    ticket = TicketFactory(event_id=tonight_event(organisation=organisation).id,
                           code="HOLD0001", person_id=person.id)
    award = badges.award

    def unreachable(_session, _person_ids):
        raise OperationalError("INSERT", {}, ConnectionError("the database went away"))

    monkeypatch.setattr(badges, "award", unreachable)
    response = client.post("/v1/scan", headers=door, json={"code": "HOLD0001"})
    assert response.status_code == 503, "the lane failed, then the full way"
    assert db.scalar(select(Ticket.status).where(Ticket.id == ticket.id)) == "valid"
    monkeypatch.setattr(badges, "award", award)
    response = client.post("/v1/scan", headers=door, json={"code": "HOLD0001"})
    assert response.json()["data"]["status"] == "ok"
    assert db.scalar(select(Ticket.status).where(Ticket.id == ticket.id)) == "used"
    assert db.scalars(select(EarnedBadge.badge_id).where(EarnedBadge.person_id == person.id)).all()
    assert len(lane_scans) == 2


@pytest.fixture
def served_door(worker_id, tmp_path):
    """A database of this test's own with tonight's event of an organisation (sold by an
    external shop; doors open all day) and its `scan` and `tickets` tokens."""
    url = migrated_database(f"{worker_id}_doors")
    with committed(url) as session:
        owner = organisations.create_organisation(session, name="Doors",
                                                  ticket_shop_url="https://shop.example")
        door = tokens.create_token(session, organisation=owner, name="door", scopes=["scan"])[1]
        shop = tokens.create_token(session, organisation=owner, name="shop",
                                   scopes=["tickets"])[1]
    today = dt.datetime.now(ZoneInfo("Europe/Amsterdam")).date().isoformat()
    records = [
        {"kind": "venue", "id": "door-hall", "name": "Door Hall", "city": "Utrecht",
         "country": "NL", "lat": 52.09, "lng": 5.12},
        {"kind": "event", "id": "door-night", "title": "Door Night", "date": today,
         "start": "00:00", "end": "23:59", "venue_id": "door-hall",
         "organisation_id": owner.id, "external_ticketing": True},
    ]
    feed = tmp_path / "tonight.jsonl"
    feed.write_text("".join(json.dumps(record) + "\n" for record in records))
    subprocess.run([AGENDA, "import", str(feed), "--source", "doors"],
                   env={**os.environ, "AGENDA_DATABASE_URL": url}, check=True,
                   capture_output=True)
    yield url, door, shop
    drop_database(url)


def test_doors_racing_for_one_ticket_on_two_workers_get_exactly_one_ok(served_door):
    """8 doors scan each ticket at the same moment, through the lane of two processes."""
    url, door, shop = served_door
    codes = [f"RACE-{n:04d}" for n in range(6)]
    delivery = {"invite": False, "items": [
        {"code": code, "email": f"buyer{n}@mail.example", "name": f"Buyer {n}"}
        for n, code in enumerate(codes)]}

    async def race(base: str) -> dict[str, list[str]]:
        limits = httpx.Limits(max_connections=8, max_keepalive_connections=0)
        async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30,
                                     headers={"Authorization": f"Bearer {door}"}) as web:
            verdicts = {}
            for code in codes:
                answers = await asyncio.gather(*[web.post("/v1/scan", json={"code": code})
                                                 for _ in range(8)])
                assert {answer.status_code for answer in answers} == {200}
                verdicts[code] = sorted(answer.json()["data"]["status"] for answer in answers)
            return verdicts

    with agenda_serve({"AGENDA_DATABASE_URL": url, "AGENDA_SECRET_KEY": "doors"},
                      workers=2) as base:
        delivered = httpx.post(f"{base}/v1/events/door-night/external-tickets", json=delivery,
                               headers={"Authorization": f"Bearer {shop}"}, timeout=30)
        assert delivered.status_code == 200, delivered.text
        verdicts = asyncio.run(race(base))
    assert verdicts == {code: ["ok"] + ["used"] * 7 for code in codes}

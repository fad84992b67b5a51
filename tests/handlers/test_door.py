"""POST /scan: the door accepts a ticket once and refuses the rest with a reason."""

import datetime as dt
import threading
from zoneinfo import ZoneInfo

import pytest

from models import door
from tests.api import day
from tests.factories import EventFactory, TicketFactory
from tests.factories import tonight_event as tonight

AMSTERDAM = ZoneInfo("Europe/Amsterdam")


@pytest.fixture
def door_token(bearer_of):
    return bearer_of("scan")


def _scan(client, headers, **body):
    response = client.post("/v1/scan", headers=headers, json=body)
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "private, no-store"
    return response.json()["data"]


def test_a_valid_ticket_is_accepted_once_then_used(client, door_token, organisation):
    event = tonight(organisation=organisation, title="Awakenings")
    ticket = TicketFactory(event_id=event.id, code="ABCD1234", type="Early bird", holder="Sam")
    first = _scan(client, door_token, code="ABCD1234")
    assert first["ok"] is True and first["status"] == "ok"
    assert first["title"] == "Awakenings" and first["sub"] == "Early bird · Sam"
    assert first["type"] == "Early bird" and first["holder"] == "Sam"
    assert first["eventId"] == event.id and "reason" not in first
    assert abs(first["scannedAt"] - int(dt.datetime.now().timestamp())) < 5
    again = _scan(client, door_token, code="ABCD1234")
    assert again["ok"] is False and again["status"] == "used"
    assert again["reason"].startswith("Already scanned at ")
    assert ticket.id


@pytest.mark.parametrize("scanned", [
    "https://agenda.example/t/URL12345",
    "http://127.0.0.1:8080/t/URL12345?utm=door",
    "  URL12345  ",
])
def test_a_scanned_url_or_padded_code_finds_the_ticket(client, door_token, organisation, scanned):
    event = tonight(organisation=organisation)
    TicketFactory(event_id=event.id, code="URL12345")
    assert _scan(client, door_token, code=scanned)["status"] == "ok"


def test_unknown_codes_and_other_organisations_tickets_are_unknown(client, door_token):
    foreign = tonight()
    TicketFactory(event_id=foreign.id, code="FOREIGN1")
    for code in ("NOPE0000", "FOREIGN1"):
        verdict = _scan(client, door_token, code=code)
        assert verdict["ok"] is False and verdict["status"] == "unknown"
        assert verdict["eventId"] == "" and verdict["holder"] == ""
    assert _scan(client, door_token, code="FOREIGN1")["status"] == "unknown"


def test_a_ticket_for_another_event_is_wrong_event(client, door_token, organisation):
    tonight_event = tonight(organisation=organisation)
    other = tonight(organisation=organisation, title="Other night")
    TicketFactory(event_id=other.id, code="OTHER123")
    verdict = _scan(client, door_token, code="OTHER123", eventId=tonight_event.id)
    assert verdict["status"] == "wrong_event" and "Other night" in verdict["reason"]
    assert _scan(client, door_token, code="OTHER123", eventId=other.id)["status"] == "ok"


def test_a_void_ticket_is_refused(client, door_token, organisation):
    event = tonight(organisation=organisation)
    TicketFactory(event_id=event.id, code="VOID1234", status="void")
    assert _scan(client, door_token, code="VOID1234")["status"] == "void"


def test_a_ticket_for_another_day_is_not_today(client, door_token, organisation):
    event = EventFactory(organisation=organisation, date=day(3))
    TicketFactory(event_id=event.id, code="LATER123")
    verdict = _scan(client, door_token, code="LATER123")
    assert verdict["status"] == "not_today" and "doors open" in verdict["reason"]
    assert _scan(client, door_token, code="LATER123")["status"] == "not_today", "still valid"


def test_the_same_code_at_two_events_scans_tonights(client, door_token, organisation):
    last_week = EventFactory(organisation=organisation, date=day(-7))
    event = tonight(organisation=organisation)
    TicketFactory(event_id=last_week.id, code="SAME1234")
    TicketFactory(event_id=event.id, code="SAME1234")
    verdict = _scan(client, door_token, code="SAME1234")
    assert verdict["ok"] is True and verdict["eventId"] == event.id


def test_door_window_counts_from_six_hours_before_start_to_twelve_after_end():
    event = EventFactory.build(date=dt.date(2026, 11, 28), start="23:00", end="06:00",
                               end_date=None, timezone="Europe/Amsterdam")
    event.last_date = event.date
    opens, closes = door.door_window(event)
    assert opens == dt.datetime(2026, 11, 28, 17, 0, tzinfo=AMSTERDAM)
    assert closes == dt.datetime(2026, 11, 29, 18, 0, tzinfo=AMSTERDAM)


def test_a_missing_code_is_400_and_a_token_without_scan_is_403(client, door_token, make_token):
    response = client.post("/v1/scan", headers=door_token, json={})
    assert response.status_code == 400
    assert response.json()["error"]["details"]["params"][0]["name"] == "code"
    read_only = {"Authorization": f"Bearer {make_token('read')}"}
    assert client.post("/v1/scan", headers=read_only, json={"code": "X"}).status_code == 403


def test_two_doors_scanning_one_ticket_at_once_get_exactly_one_ok(app, database_url):
    """Real concurrent transactions on the run's database (committed, then removed)."""
    from sqlalchemy import delete

    from adapters.direct import DirectStatements
    from models.db import make_engine, make_sessionmaker, new_id, now
    from models.events import Event, denormalize
    from models.organisations import Organisation
    from models.tickets import Ticket
    from models.venues import Venue

    engine = make_engine(database_url)
    sessions = make_sessionmaker(engine)
    started = dt.datetime.now(AMSTERDAM) - dt.timedelta(hours=1)
    ids = {"org": new_id("org"), "ven": new_id("ven"), "evt": new_id("evt")}
    with sessions.begin() as session:
        organisation = Organisation(id=ids["org"], name=ids["org"], since=2020, created_at=now())
        venue = Venue(id=ids["ven"], name="V", name_key="v", city="A", city_key="a",
                      country="NL", lat=52.0, lng=4.0, updated_at=now())
        event = Event(id=ids["evt"], slug=ids["evt"], title="Race", date=started.date(),
                      start=started.strftime("%H:%M"),
                      end=(started + dt.timedelta(hours=5)).strftime("%H:%M"),
                      venue=venue, organisation=organisation, updated_at=now())
        denormalize(event)
        session.add(event)
        session.flush()
        session.add(Ticket(id=new_id("tkt"), event_id=event.id, code="RACE0001", created_at=now()))
    verdicts, barrier, direct = [], threading.Barrier(2), DirectStatements(engine).execute

    def door_scan():
        with sessions() as session:
            barrier.wait()
            verdict = door.scan(direct, door.within(session), organisation_id=ids["org"],
                                scanned="RACE0001", event_id=None, now=now())
            session.commit()
            verdicts.append(verdict.status)

    try:
        for _round in range(5):
            with sessions.begin() as session:
                session.execute(Ticket.__table__.update().where(Ticket.code == "RACE0001")
                                .values(status="valid", scanned_at=None))
            verdicts.clear()
            doors = [threading.Thread(target=door_scan) for _ in range(2)]
            for thread in doors:
                thread.start()
            for thread in doors:
                thread.join(timeout=30)
            assert sorted(verdicts) == ["ok", "used"]
    finally:
        with sessions.begin() as session:
            session.execute(delete(Ticket).where(Ticket.event_id == ids["evt"]))
            session.execute(delete(Event).where(Event.id == ids["evt"]))
            session.execute(delete(Venue).where(Venue.id == ids["ven"]))
            session.execute(delete(Organisation).where(Organisation.id == ids["org"]))
        engine.dispose()

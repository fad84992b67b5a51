"""Demo people: a deterministic pool with histories, and the demo organisation's nights to try."""

import datetime as dt

import pytest
from sqlalchemy import func, select

from agenda.demo import catalogue as demo_data
from agenda.demo import people as demo_people
from models.db import now
from models.events import Event
from models.people import PROVINCES, Mark, Membership, Person
from models.tickets import Ticket

PAST = dt.date(2026, 11, 25)
# Tonight's doors are checked against the clock, so those tests build today's demo.
TODAY = demo_data.today_in_amsterdam()
EVENTS = 100


def _people(events: int, seed: int, today: dt.date = PAST) -> dict[str, list[dict]]:
    builder = demo_data.Builder(events=events, seed=seed, today=today)
    calendar = demo_people.Calendar(today)
    for table, rows in demo_data.generate(events=events, seed=seed, today=today):
        calendar.take(table.name, rows)
    people = demo_people.People(builder=builder, calendar=calendar,
                                organisation={"id": "org-demo", "name": "Demo Nights"})
    made: dict[str, list[dict]] = {}
    for table, rows, _parent in people.tables():
        made.setdefault(table.name, []).extend(rows)
    return made


def _count(db, model, seed: int) -> int:
    column = model.id if hasattr(model, "id") else model.person_id
    return db.scalar(select(func.count()).where(column.like(f"demo{seed}-%")))


@pytest.fixture(scope="module")
def made() -> dict[str, list[dict]]:
    return _people(2000, 3)


def test_the_same_seed_and_day_give_the_same_people():
    first = _people(EVENTS, 5)
    assert first == _people(EVENTS, 5)
    assert first["people"][0]["id"] == "demo5-per-0"
    assert [person["name"] for person in _people(EVENTS, 6)["people"]] != \
        [person["name"] for person in first["people"]]


def test_the_pool_grows_with_the_agenda_and_extends_a_smaller_one(made):
    assert demo_data.Sizes.of(100).people == demo_people.CROWD
    assert demo_data.Sizes.of(1_000_000).people == 30_000
    assert len(made["people"]) == 400
    assert made["people"][:300] == _people(EVENTS, 3)["people"]


def test_people_look_like_members(made):
    people = made["people"]
    assert len({person["handle"] for person in people}) == len(people)
    assert len({person["email_key"] for person in people}) == len(people)
    assert all(person["email"].endswith(".example") for person in people)
    shares = {visibility: sum(person["visibility"] == visibility for person in people)
              for visibility in ("public", "private", "suspended")}
    assert shares["public"] > len(people) * 0.7 and shares["private"] and shares["suspended"]
    assert {person["region"] for person in people} - {None} <= set(PROVINCES)
    assert any(person["region"] is None for person in people)
    assert any(person["birth_year"] is None for person in people)


def test_histories_are_door_scans_of_past_nights_and_some_are_rich(made):
    tickets = [ticket for ticket in made["tickets"] if "-dn-" not in ticket["event_id"]]
    assert {ticket["status"] for ticket in tickets} == {"used", "void"}
    assert all((ticket["scanned_at"] is None) == (ticket["status"] == "void")
               for ticket in tickets)
    per_person: dict[str, set[str]] = {}
    for ticket in tickets:
        per_person.setdefault(ticket["person_id"], set()).add(ticket["event_id"])
    assert max(len(events) for events in per_person.values()) >= 40
    assert {mark["kind"] for mark in made["marks"]} == {"going", "interested"}


def test_running_it_twice_adds_nothing_and_a_new_day_brings_only_tonight(db):
    first = demo_data.add_demo_data(db, events=EVENTS, seed=21, today=PAST)
    assert first.added["people"] == 300 and first.added["tickets"] > 1000
    models = (Person, Ticket, Event)
    counts = {model: _count(db, model, 21) for model in models}
    again = demo_data.add_demo_data(db, events=EVENTS, seed=21, today=PAST)
    assert sum(again.added.values()) == 0
    assert {model: _count(db, model, 21) for model in models} == counts
    later = demo_data.add_tonight(db, seed=21, today=PAST + dt.timedelta(days=1))
    assert later.added["events"] == 2 and later.added["people"] == 0
    assert _count(db, Event, 21) == counts[Event] + 2
    assert _count(db, Ticket, 21) == counts[Ticket] + later.added["tickets"]
    assert sum(demo_data.add_tonight(db, seed=21, today=PAST + dt.timedelta(days=1))
               .added.values()) == 0


def test_a_taken_handle_gets_the_seed(db):
    person = _people(EVENTS, 22)["people"][0]
    db.add(Person(id="per-taken", email="taken@mail.example", email_key="taken@mail.example",
                  handle=person["handle"], name="Someone", created_at=0))
    db.flush()
    demo_data.add_demo_data(db, events=EVENTS, seed=22, today=PAST)
    assert db.get(Person, "demo22-per-0").handle == f"{person['handle']}-22"


@pytest.fixture
def demo(db):
    """Today's demo agenda (seed 23): the demo organisation and what to try on it."""
    demo_data.add_demo_data(db, events=EVENTS, seed=23, today=TODAY)
    organisation = demo_people.demo_organisation(db)
    return organisation, demo_people.showcase(db, organisation_id=organisation.id, now=now())


def test_the_coming_night_shows_an_audience_in_every_breakdown(client, make_token, demo):
    organisation, shown = demo
    assert shown.coming == "demo23-evt-dn-next"
    headers = {"Authorization": f"Bearer {make_token('attendance', organisation=organisation)}"}
    response = client.get(f"/v1/events/{shown.coming}/attendance", headers=headers)
    assert response.status_code == 200, response.text
    audience = response.json()["data"]["audience"]
    assert audience["total"] >= 200 and 0 < audience["returning"] < audience["total"]
    for name in ("regions", "ages", "genres"):
        breakdown = audience[name]
        assert breakdown["rows"], name
        assert sum(row["count"] for row in breakdown["rows"]) + (breakdown["other"] or 0) \
            + breakdown["hidden"] == audience["total"]
    assert audience["regions"]["hidden"] > 0


def test_a_ticket_of_tonight_scans_once(client, make_token, demo, db):
    organisation, shown = demo
    assert shown.ticket
    headers = {"Authorization": f"Bearer {make_token('scan', organisation=organisation)}"}
    first = client.post("/v1/scan", headers=headers, json={"code": shown.ticket})
    assert first.status_code == 200 and first.json()["data"]["status"] == "ok", first.text
    again = client.post("/v1/scan", headers=headers, json={"code": shown.ticket})
    assert again.json()["data"]["status"] == "used"


def test_the_externally_sold_event_has_a_delivery_and_a_sales_count(client, make_token, demo):
    organisation, shown = demo
    assert shown.external == "demo23-evt-dn-ext"
    token = make_token("tickets", "attendance", organisation=organisation)
    headers = {"Authorization": f"Bearer {token}"}
    tickets = client.get(f"/v1/events/{shown.external}/external-tickets", headers=headers)
    assert tickets.status_code == 200, tickets.text
    status = tickets.json()["data"]
    assert status["counts"]["delivered"] == status["counts"]["linked"] > 0
    assert len(status["batches"]) == 1
    sales = client.get(f"/v1/events/{shown.external}/external-sales", headers=headers)
    assert sales.status_code == 200 and sales.json()["data"]["sold"] > 0


def test_members_hold_their_roles_in_the_demo_organisation(db, demo):
    organisation, _shown = demo
    roles = db.scalars(select(Membership.role).where(
        Membership.organisation_id == organisation.id,
        Membership.person_id.like("demo23-%"))).all()
    assert sorted(roles) == ["door", "door", "editor", "owner", "viewer"]
    assert db.scalar(select(func.count()).select_from(Mark).where(
        Mark.event_id == "demo23-evt-dn-ext", Mark.kind == "going")) > 0

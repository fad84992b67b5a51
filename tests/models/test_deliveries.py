"""Delivery of external tickets in the domain: verdicts, idempotency, linking on sign-in."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from sqlalchemy import func, select

from models import deliveries, outbox
from models.errors import Conflict
from models.people import Mark
from models.tickets import DeliveryBatch, OutboxMail, Ticket
from tests.factories import EventFactory, MarkFactory, PersonFactory
from tests.models.test_outbox import mailers, sessions, smtp  # noqa: F401 - fixtures

SECRET = "domain-secret"
NOW = 1_800_000_000


@pytest.fixture
def event(db):
    return EventFactory(external_ticketing=True, title="Dockyard")


def _deliver(db, event, items, *, invite=True, source="other"):
    return deliveries.deliver_tickets(db, event=event, source=source, items=items, invite=invite,
                                      secret_key=SECRET, site_url="https://agenda.example",
                                      now=NOW)


def _tickets(db, event) -> dict[str, Ticket]:
    db.expire_all()
    return {t.code: t for t in db.scalars(select(Ticket).where(Ticket.event_id == event.id))}


def test_the_address_hash_is_hmac_sha256_of_the_lower_cased_address():
    expected = hmac.new(b"k", b"mixed@case.example", hashlib.sha256).hexdigest()
    assert deliveries.address_hash("k", "Mixed@Case.EXAMPLE") == expected
    assert deliveries.address_hash("other", "mixed@case.example") != expected


def test_delivery_flushes_and_leaves_the_commit_to_the_caller(db, event):
    savepoint = db.begin_nested()
    delivery = _deliver(db, event, [{"code": "FLUSH-001", "email": "f@mail.example"}])
    assert delivery.added == 1 and len(_tickets(db, event)) == 1
    savepoint.rollback()
    assert _tickets(db, event) == {}
    assert db.get(DeliveryBatch, delivery.batch_id) is None


def test_a_delivery_records_its_batch_and_queues_its_mails(db, event):
    member = PersonFactory()
    delivery = _deliver(db, event, [
        {"code": "MEM-0001", "email": member.email.upper()},
        {"code": "WAIT-0001", "email": "w@mail.example", "name": "W", "price": 0},
        {"code": "WAIT-0002", "email": "W@mail.example"},
        {"code": "MEM-0001", "email": member.email},
        {"code": "no"},
    ], source="ticketmaster")
    assert [(r.code, r.status, r.member, r.reason) for r in delivery.results] == [
        ("MEM-0001", "added", True, None), ("WAIT-0001", "added", False, None),
        ("WAIT-0002", "added", False, None), ("MEM-0001", "duplicate", None, None),
        ("no", "refused", None, "invalid_code")]
    assert (delivery.received, delivery.added, delivery.duplicates, delivery.refused,
            delivery.matched) == (5, 3, 1, 1, 1)
    batch = db.get(DeliveryBatch, delivery.batch_id)
    assert (batch.source, batch.via, batch.received, batch.added, batch.duplicates,
            batch.refused, batch.linked, batch.created_at) == (
        "ticketmaster", "api", 5, 3, 1, 1, 1, NOW)
    mails = db.scalars(select(OutboxMail).join(Ticket, Ticket.id == OutboxMail.ticket_id)
                       .where(Ticket.batch_id == batch.id).order_by(OutboxMail.kind)).all()
    assert [(m.kind, m.to_address, m.status) for m in mails] == [
        ("ticket_added", member.email, "pending"), ("ticket_waiting", "w@mail.example", "pending")]
    assert "2 tickets" in mails[1].subject and "Dockyard" in mails[1].subject
    tickets = _tickets(db, event)
    assert tickets["WAIT-0001"].buyer_email_hash == tickets["WAIT-0002"].buyer_email_hash
    assert tickets["WAIT-0001"].price == 0 and tickets["WAIT-0002"].price is None
    assert tickets["WAIT-0002"].type == deliveries.DEFAULT_TYPE
    assert db.get(Mark, (member.id, event.id)).kind == "going"


def test_batch_ids_sort_by_creation():
    assert deliveries._batch_id(1_700_000_000_000) < deliveries._batch_id(1_700_000_000_001)


def test_an_event_without_external_ticketing_takes_no_delivery(db):
    event = EventFactory(external_ticketing=False)
    with pytest.raises(Conflict):
        _deliver(db, event, [{"code": "NOPE-001", "email": "n@mail.example"}])


def test_a_ticket_sold_through_the_service_with_the_same_code_is_a_duplicate(db, event):
    db.add(Ticket(id="tkt_own", event_id=event.id, code="SAME-0001", person_id=None,
                  created_at=NOW))
    db.flush()
    delivery = _deliver(db, event, [{"code": "SAME-0001", "email": "s@mail.example"}])
    assert delivery.results[0].status == "duplicate"
    assert _tickets(db, event)["SAME-0001"].id == "tkt_own", "the sold ticket is untouched"
    assert db.scalar(select(func.count(OutboxMail.id))
                     .where(OutboxMail.ticket_id == "tkt_own")) == 0


def test_a_scrubbed_address_is_found_again_through_the_hash_when_it_signs_up(
        db, event, sessions, smtp, mailers):  # noqa: F811 - fixtures
    delivery = _deliver(db, event, [{"code": "LATER-001", "email": "Late.Comer@mail.example"},
                                    {"code": "LATER-002", "email": "late.comer@mail.example"},
                                    {"code": "OTHER-001", "email": "other@mail.example"}])
    outbox.send_due(sessions, mailer=mailers(smtp.url), now=NOW + 1)
    tickets = _tickets(db, event)
    assert tickets["LATER-001"].buyer_email is None and tickets["LATER-002"].buyer_email is None
    assert db.scalar(select(func.count(OutboxMail.id))
                     .where(OutboxMail.to_address.contains("comer"))) == 0, "no address kept"

    person = PersonFactory(email="LATE.COMER@Mail.Example", email_key="late.comer@mail.example")
    MarkFactory(person_id=person.id, event_id=event.id, kind="interested")
    linked = deliveries.link_waiting_tickets(db, person=person, secret_key=SECRET, now=NOW + 60)
    assert linked == 2
    tickets = _tickets(db, event)
    assert {tickets[c].person_id for c in ("LATER-001", "LATER-002")} == {person.id}
    assert tickets["LATER-001"].linked_at == NOW + 60
    assert tickets["OTHER-001"].person_id is None, "another address's ticket stays waiting"
    assert db.get(Mark, (person.id, event.id)).kind == "going"
    assert db.get(DeliveryBatch, delivery.batch_id).linked == 2
    assert deliveries.link_waiting_tickets(db, person=person, secret_key=SECRET,
                                           now=NOW + 120) == 0, "linked once"
    status = deliveries.delivery_status(db, event=event)
    assert (status.delivered, status.linked, status.pending, status.todo) == (3, 2, 1, 0)


def test_linking_before_the_mail_went_out_cancels_the_mail_and_drops_the_address(db, event):
    _deliver(db, event, [{"code": "EARLY-001", "email": "early@mail.example"}])
    person = PersonFactory(email="early@mail.example")
    assert deliveries.link_waiting_tickets(db, person=person, secret_key=SECRET, now=NOW) == 1
    ticket = _tickets(db, event)["EARLY-001"]
    assert ticket.person_id == person.id and ticket.buyer_email is None
    mail = db.scalars(select(OutboxMail).where(OutboxMail.ticket_id == ticket.id)).one()
    assert (mail.status, mail.to_address) == ("cancelled", outbox.REDACTED)
    assert deliveries.delivery_status(db, event=event).todo == 0


def test_a_hash_made_with_another_key_finds_nothing(db, event):
    _deliver(db, event, [{"code": "KEYED-001", "email": "keyed@mail.example"}], invite=False)
    person = PersonFactory(email="keyed@mail.example")
    assert deliveries.link_waiting_tickets(db, person=person, secret_key="rotated",
                                           now=NOW) == 0


def test_invite_false_queues_no_waiting_mail_but_still_notifies_members(db, event):
    member = PersonFactory()
    delivery = _deliver(db, event, [{"code": "QUIET-001", "email": "q@mail.example"},
                                    {"code": "QUIET-002", "email": member.email}], invite=False)
    assert delivery.processed.skipped == 1 and delivery.processed.linked == 1
    kinds = db.scalars(select(OutboxMail.kind).join(Ticket, Ticket.id == OutboxMail.ticket_id)
                       .where(Ticket.batch_id == delivery.batch_id)).all()
    assert kinds == ["ticket_added"]


@pytest.mark.parametrize(("item", "reason"), [
    ({"code": "GOOD-001", "email": "a@b.co"}, None),
    ({"code": "GOOD-001", "email": "a@b.c"}, "invalid_email"),
    ({"code": "GOOD-001", "email": "a@xn--p1ai.xn--p1ai"}, None),
    ({"code": "GOOD-001", "email": "ä@mail.example"}, "invalid_email"),
    ({"code": "GOOD-001", "email": ".a@mail.example"}, "invalid_email"),
    ({"code": "GOOD-001", "email": "a.@mail.example"}, "invalid_email"),
    ({"code": "GOOD-001", "email": "a@mail.example."}, "invalid_email"),
    ({"code": "GOOD-001", "email": "a@mail_x.example"}, "invalid_email"),
    ({"code": "GOOD-001", "email": "a@" + "l" * 64 + ".example"}, "invalid_email"),
    ({"code": "GOOD-001", "email": "a@mail.example", "price": float("inf")}, "invalid_field"),
    ({"code": "GOOD-001", "email": "a@mail.example", "price": 10**30}, None),
    ({"code": "GOOD-001", "email": "a@mail.example", "name": "A\x00B"}, "invalid_field"),
    ({"code": "GOOD-001", "email": "a@mail.example", "type": "\x00"}, "invalid_field"),
    ({"code": "GOOD\x00001", "email": "a@mail.example"}, "invalid_code"),
    ({"code": "GOOD-001", "email": "a\x00@mail.example"}, "invalid_email"),
])
def test_refusal_rules(item, reason):
    assert deliveries.refusal(item) == reason

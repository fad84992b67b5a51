"""Delivery of an external shop's ticket list: tickets onto members' accounts, or waiting.

Each item is checked on its own (decisions.md, External tickets) and answered
`added`, `duplicate` or `refused`. Idempotency on the code within the event is
the unique constraint `(event_id, code)`: the tickets are inserted with ON
CONFLICT DO NOTHING and the statement returns which codes it inserted, so the
same list sent ten times at once adds each ticket exactly once. Rows are
inserted in code order, so concurrent deliveries of overlapping lists wait on
each other's codes in the same order and cannot deadlock.

A ticket whose address belongs to a member (`Person.email_key`) lands on the
account at once: linked, the member marked going, one notice per member and
delivery. Any other ticket waits with the address and its keyed hash
(HMAC-SHA256 with the secret key over the lower-cased address); one mail per
address and delivery tells the buyer, unless `invite` is false, in which case
the address is not even stored: only the hash, through which
`link_waiting_tickets` finds the tickets when that address signs in.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import math
import re
import secrets
import time
from collections import defaultdict

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from models import badges, outbox
from models.db import insert_rows, new_id
from models.errors import Conflict, NotFound
from models.events import Event, get_own_event
from adapters.mail import Mailer
from models.people import Mark, Person
from models.tickets import DeliveryBatch, Ticket
from models.unit_of_work import UnitOfWork

MAX_ITEMS = 500
# Seconds a delivering request may take in all, from its arrival: reading and checking
# the list, the tickets, then its own mails with what is left of it; the worker (`agenda
# worker`) sends the rest. Tests set it to 0 or raise it.
SEND_BUDGET_SECONDS = 0.8
BATCHES_SHOWN = 20
DEFAULT_TYPE = "Regular"

CODE = re.compile(r"[A-Za-z0-9_-]{4,64}")
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
# An ASCII address: dot-atom local part, a domain of at least two labels and a
# top-level label that is letters (or an IDNA `xn--` label).
_TOP = r"(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})"
EMAIL = re.compile(rf"{_ATOM}(?:\.{_ATOM})*@(?:{_LABEL}\.)+{_TOP}")
MAX_EMAIL = 254
MAX_LOCAL_PART = 64
MAX_TYPE = 80
MAX_NAME = 120


@dataclasses.dataclass(frozen=True)
class ItemResult:
    """The verdict on one item: `member` only on added, `reason` only on refused."""

    index: int
    code: str
    status: str
    member: bool | None = None
    reason: str | None = None


@dataclasses.dataclass
class Processed:
    """What the delivering request got through after its commit, within its budget."""

    linked: int = 0
    mailed: int = 0
    skipped: int = 0
    failed: int = 0
    left: int = 0
    budget_out: bool = False


@dataclasses.dataclass
class Delivery:
    """The outcome of one delivery (the `DeliveryResult` of the API)."""

    batch_id: str
    event_id: str
    results: list[ItemResult]
    received: int = 0
    added: int = 0
    duplicates: int = 0
    refused: int = 0
    matched: int = 0
    processed: Processed = dataclasses.field(default_factory=Processed)


@dataclasses.dataclass(frozen=True)
class DeliveryStatus:
    """Delivered tickets of one event by state, and its last deliveries."""

    event_id: str
    delivered: int
    linked: int
    pending: int
    todo: int
    batches: list[DeliveryBatch]


def address_hash(secret_key: str, address: str) -> str:
    """The keyed hash under which a buyer's address is kept: HMAC-SHA256, hex."""
    return hmac.new(secret_key.encode(), address.lower().encode(), hashlib.sha256).hexdigest()


def refusal(item: dict) -> str | None:
    """Why an item is refused (`invalid_code`, `invalid_email`, `invalid_field`), or None."""
    code = item.get("code")
    if not isinstance(code, str) or not CODE.fullmatch(code):
        return "invalid_code"
    email = item.get("email")
    if (not isinstance(email, str) or len(email) > MAX_EMAIL or not EMAIL.fullmatch(email)
            or len(email.rpartition("@")[0]) > MAX_LOCAL_PART):
        return "invalid_email"
    # Optional fields: absent and null mean "not given".
    kind, name, price = item.get("type"), item.get("name"), item.get("price")
    for value, longest in ((kind, MAX_TYPE), (name, MAX_NAME)):
        # PostgreSQL text cannot hold NUL.
        if value is not None and (not isinstance(value, str) or len(value) > longest
                                  or "\x00" in value):
            return "invalid_field"
    if price is not None and (isinstance(price, bool) or not isinstance(price, (int, float))
                              or not math.isfinite(price) or price < 0):
        return "invalid_field"
    return None


def _batch_id(now_ms: int) -> str:
    """A batch id that sorts by creation time (milliseconds), then 8 random characters."""
    return f"dlv_{now_ms:012x}{secrets.token_hex(4)}"


def _check_items(items: list[dict]) -> tuple[list, dict[str, tuple[int, dict]]]:
    """Verdicts for refused and repeated items; the first valid item of each code by code."""
    results: list[ItemResult | None] = [None] * len(items)
    first: dict[str, tuple[int, dict]] = {}
    for index, item in enumerate(items):
        code = item.get("code")
        reason = refusal(item)
        if reason is not None:
            shown = code if isinstance(code, str) else ""
            results[index] = ItemResult(index, shown, "refused", reason=reason)
        elif code in first:
            results[index] = ItemResult(index, code, "duplicate")
        else:
            first[code] = (index, item)
    return results, first


def _ticket_row(item: dict, *, code: str, event: Event, batch: DeliveryBatch, source: str,
                member: Person | None, invite: bool, secret_key: str, now: int) -> dict:
    """The ticket row for a valid item: on the member's account, or waiting."""
    return {
        "id": new_id("tkt"), "event_id": event.id, "code": code,
        "person_id": member.id if member else None,
        "type": item.get("type") or DEFAULT_TYPE,
        "holder": item.get("name") or (member.name if member else ""),
        "price": item.get("price"), "source": source, "status": "valid", "created_at": now,
        "batch_id": batch.id, "invite": invite, "linked_at": now if member else None,
        # A waiting ticket keeps the address only for its mail (none when invite is false).
        "buyer_email": item["email"] if not member and invite else None,
        "buyer_email_hash": None if member else address_hash(secret_key, item["email"]),
    }


def deliver_tickets(session: Session, *, event: Event, source: str, items: list[dict],
                    invite: bool, secret_key: str, site_url: str, now: int,
                    via: str = "api") -> Delivery:
    """Add an external shop's tickets to `event`, one verdict per item; flushes, never commits.

    Only events with external ticketing take deliveries (`Conflict` otherwise).
    Mails are queued in the outbox of this transaction, not sent.
    """
    if not event.external_ticketing:
        raise Conflict("This event does not use external ticketing; only events sold by an "
                       "external shop take delivered tickets.")
    results, first = _check_items(items)
    keys = {item["email"].lower() for _index, item in first.values()}
    members = {person.email_key: person for person in session.scalars(
        select(Person).where(Person.email_key.in_(keys)))} if keys else {}

    batch = DeliveryBatch(id=_batch_id(time.time_ns() // 1_000_000), event_id=event.id,
                          source=source, via=via, received=len(items), created_at=now)
    session.add(batch)
    session.flush()

    # In code order: concurrent deliveries of overlapping lists wait on each other's
    # codes in the same order, so they cannot deadlock.
    rows = [_ticket_row(first[code][1], code=code, event=event, batch=batch, source=source,
                        member=members.get(first[code][1]["email"].lower()), invite=invite,
                        secret_key=secret_key, now=now)
            for code in sorted(first)]
    inserted = {}
    if rows:
        statement, parameters = insert_rows(session, Ticket.__table__, rows)
        statement = (statement.on_conflict_do_nothing(index_elements=["event_id", "code"])
                     .returning(Ticket.__table__.c.id, Ticket.__table__.c.code))
        inserted = dict((code, ticket_id)
                        for ticket_id, code in session.execute(statement, parameters).all())

    delivery = Delivery(batch_id=batch.id, event_id=event.id, results=[], received=len(items))
    added_for: dict[str, list[str]] = defaultdict(list)  # member id -> ticket ids
    waiting_for: dict[str, list[tuple[str, str]]] = defaultdict(list)  # hash -> (id, address)
    for code, (index, item) in first.items():
        if code not in inserted:
            results[index] = ItemResult(index, code, "duplicate")
            continue
        member = members.get(item["email"].lower())
        results[index] = ItemResult(index, code, "added", member=member is not None)
        if member:
            added_for[member.id].append(inserted[code])
        else:
            waiting_for[address_hash(secret_key, item["email"])].append(
                (inserted[code], item["email"]))
    delivery.results = results
    for result in results:
        delivery.added += result.status == "added"
        delivery.duplicates += result.status == "duplicate"
        delivery.refused += result.status == "refused"
    delivery.matched = sum(len(ids) for ids in added_for.values())

    people = {member.id: member for member in members.values()}
    _mark_going(session, person_ids=list(added_for), event_id=event.id, now=now)
    mails = [_added_mail(event, people[person_id], ticket_ids, source, site_url)
             for person_id, ticket_ids in added_for.items()]
    if invite:
        mails += [_waiting_mail(event, tickets, source, site_url)
                  for tickets in waiting_for.values()]
    outbox.queue(session, mails, now=now, batch_id=batch.id)

    batch.added, batch.duplicates, batch.refused = (delivery.added, delivery.duplicates,
                                                    delivery.refused)
    batch.linked = delivery.matched
    session.flush()
    delivery.processed = Processed(linked=delivery.matched,
                                   skipped=0 if invite else len(waiting_for))
    return delivery


def deliver_and_send(unit: UnitOfWork, *, organisation_id: str, event_key: str,
                     source: str, items: list[dict], invite: bool, secret_key: str,
                     site_url: str, mailer: Mailer, budget: float, now: int) -> Delivery:
    """Deliver in `unit`, commit that step, then send this delivery's mails with what the
    delivery left of `budget` seconds.

    The delivery is a step committed before any mail, on purpose: a mail must never
    tell about a ticket whose transaction could still roll back, and the answer must
    report what was sent. So the tickets, the batch and the queued mails are
    committed first (all or nothing); then each mail is claimed, sent and recorded
    in its own short step (models.outbox); whatever the budget leaves is still
    queued, safely, for the worker. A failure after the commit cannot undo the
    delivery, and sending the same list again only yields duplicates.
    """
    started = time.monotonic()
    event = get_own_event(unit.session, event_key, organisation_id=organisation_id)
    delivery = deliver_tickets(unit.session, event=event, source=source, items=items,
                               invite=invite, secret_key=secret_key, site_url=site_url, now=now)
    unit.commit_step()
    try:
        sent = outbox.send_due(unit.sessions, mailer=mailer, now=now, batch_id=delivery.batch_id,
                               budget=max(0.0, budget - (time.monotonic() - started)))
    finally:
        mailer.close()
    delivery.processed.mailed = sent.mailed
    delivery.processed.failed = sent.failed + sent.dead
    delivery.processed.left = sent.left
    delivery.processed.budget_out = sent.budget_out
    return delivery


def _mark_going(session: Session, *, person_ids: list[str], event_id: str, now: int) -> None:
    """List the ticket holders as going (an `interested` mark becomes `going`)."""
    if not person_ids:
        return
    statement, parameters = insert_rows(session, Mark.__table__, [
        {"person_id": person_id, "event_id": event_id, "kind": "going", "created_at": now}
        for person_id in sorted(person_ids)])
    session.execute(statement.on_conflict_do_update(
        index_elements=["person_id", "event_id"], set_={"kind": "going"}), parameters)


def _when(event: Event) -> str:
    return f"{event.date.isoformat()} {event.start}, {event.venue.name} ({event.venue.city})"


def _added_mail(event: Event, person: Person, ticket_ids: list[str], source: str,
                site_url: str) -> dict:
    count = len(ticket_ids)
    tickets = "1 ticket" if count == 1 else f"{count} tickets"
    return {
        "kind": outbox.ADDED, "to_address": person.email, "ticket_id": ticket_ids[0],
        "subject": f"{event.title}: {tickets} added to your account",
        "body": (f"Hi {person.name},\n\n"
                 f"{tickets} for {event.title} ({_when(event)}), bought at {source}, "
                 f"are now on your account under Tickets, with the barcode you scan at the "
                 f"door.\n\n{site_url}/tickets\n"),
    }


def _waiting_mail(event: Event, tickets: list[tuple[str, str]], source: str,
                  site_url: str) -> dict:
    count = len(tickets)
    what = "A ticket" if count == 1 else f"{count} tickets"
    return {
        "kind": outbox.WAITING, "to_address": tickets[0][1], "ticket_id": tickets[0][0],
        "subject": f"{event.title}: {what.lower()} waiting for you",
        "body": (f"Hello,\n\n{what} for {event.title} ({_when(event)}), bought at {source}, "
                 f"{'is' if count == 1 else 'are'} waiting for you. Sign in or create an "
                 f"account with this address and {'it lands' if count == 1 else 'they land'} "
                 f"on your account, ready to scan at the door.\n\n{site_url}\n\n"
                 f"We keep this address only until this mail is sent.\n"),
    }


def link_waiting_tickets(session: Session, *, person: Person, secret_key: str,
                         now: int) -> int:
    """Attach the tickets waiting for this member's address; returns how many. Flushes only.

    Called when a member signs in. The tickets are found through the keyed hash of
    the address and taken with one conditional UPDATE (still unlinked), so two
    sign-ins at once link each ticket once.
    """
    email_hash = address_hash(secret_key, person.email_key)
    linked = session.execute(
        update(Ticket)
        .where(Ticket.buyer_email_hash == email_hash, Ticket.person_id.is_(None))
        .values(person_id=person.id, linked_at=now, buyer_email=None)
        .returning(Ticket.id, Ticket.event_id, Ticket.batch_id)
        .execution_options(synchronize_session=False)).all()
    if not linked:
        return 0
    for event_id in sorted({row.event_id for row in linked}):
        _mark_going(session, person_ids=[person.id], event_id=event_id, now=now)
    per_batch: dict[str, int] = defaultdict(int)
    for row in linked:
        if row.batch_id:
            per_batch[row.batch_id] += 1
    for batch_id, count in sorted(per_batch.items()):
        session.execute(update(DeliveryBatch).where(DeliveryBatch.id == batch_id)
                        .values(linked=DeliveryBatch.linked + count)
                        .execution_options(synchronize_session=False))
    outbox.cancel_waiting_mails(session, ticket_ids=[row.id for row in linked])
    # A waiting ticket may have been scanned at the door already: that night counts now.
    badges.award(session, [person.id])
    session.flush()
    return len(linked)


def link_by_address(session: Session, *, email: str, secret_key: str,
                    now: int) -> tuple[Person, int]:
    """Link the tickets waiting for the member with this address; `NotFound` without one."""
    key = email.strip().lower()
    person = session.scalars(select(Person).where(Person.email_key == key)).first()
    if person is None:
        raise NotFound("member with this address")
    return person, link_waiting_tickets(session, person=person, secret_key=secret_key, now=now)


def delivery_status(session: Session, *, event: Event) -> DeliveryStatus:
    """Delivered tickets of `event` (delivered, linked, pending), mails to do, last batches."""
    delivered, linked = session.execute(
        select(func.count(Ticket.id), func.count(Ticket.person_id))
        .where(Ticket.event_id == event.id, Ticket.batch_id.is_not(None))).one()
    batches = list(session.scalars(
        select(DeliveryBatch).where(DeliveryBatch.event_id == event.id)
        .order_by(DeliveryBatch.created_at.desc(), DeliveryBatch.id.desc())
        .limit(BATCHES_SHOWN)))
    return DeliveryStatus(event_id=event.id, delivered=delivered, linked=linked,
                          pending=delivered - linked,
                          todo=outbox.queued_for_event(session, event.id), batches=batches)

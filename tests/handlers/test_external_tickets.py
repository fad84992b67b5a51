"""POST and GET /events/{id}/external-tickets: delivery of an external shop's ticket list.

Mail goes to a real SMTP server (`smtp`, from tests/models/test_outbox.py).
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import threading
import time

import httpx
import pytest
from sqlalchemy import func, select

from agenda.app import create_app
from handlers import organiser
from models import deliveries, outbox, tokens
from adapters.mail import mailer_for
from models.people import Mark
from models.tickets import DeliveryBatch, OutboxMail, Ticket
from tests.factories import EventFactory, MarkFactory, OrganisationFactory, PersonFactory
from tests.models.test_outbox import smtp  # noqa: F401 - the fixture
from tests.servers import committing, free_port, served_in_thread

SECRET = "test-secret"  # the `app` fixture's secret key


@pytest.fixture
def mailing(app, smtp, monkeypatch):  # noqa: F811 - the fixture
    """The app sends its mail to the test SMTP server."""
    monkeypatch.setattr(app.service, "settings",
                        dataclasses.replace(app.service.settings, smtp_url=smtp.url))
    return smtp


@pytest.fixture
def organisation(db):
    return OrganisationFactory(ticket_shop_url="https://shop.example")


@pytest.fixture
def event(organisation):
    return EventFactory(organisation=organisation, external_ticketing=True,
                        title="Warehouse Night")


@pytest.fixture
def headers(make_token, organisation):
    return {"Authorization": f"Bearer {make_token('tickets', organisation=organisation)}"}


def _deliver(client, headers, event, items, **body):
    return client.post(f"/v1/events/{event.id}/external-tickets", headers=headers,
                       json={"items": items, **body})


def _item(code, email="buyer@mail.example", **fields):
    return {"code": code, "email": email, **fields}


def _hash(address: str) -> str:
    return hmac.new(SECRET.encode(), address.lower().encode(), hashlib.sha256).hexdigest()


def _ticket(db, event, code) -> Ticket:
    db.expire_all()
    return db.scalars(select(Ticket).where(Ticket.event_id == event.id, Ticket.code == code)).one()


def _count(db, event) -> int:
    return db.scalar(select(func.count(Ticket.id)).where(Ticket.event_id == event.id))


# --- members and waiting tickets ---------------------------------------------------------


def test_a_members_ticket_lands_on_the_account_and_the_member_is_notified(
        client, db, headers, event, mailing):
    member = PersonFactory(email="Mira@Mail.example", name="Mira")
    response = _deliver(client, headers, event,
                        [_item("MEMBER-0001", "mira@MAIL.example", type="Early bird",
                               price=17.5)], source="paylogic")
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert data["results"] == [{"index": 0, "code": "MEMBER-0001", "status": "added",
                                "member": True}]
    assert data["totals"] == {"received": 1, "added": 1, "duplicates": 0, "refused": 0,
                              "matched": 1}
    assert data["processed"] == {"linked": 1, "mailed": 1, "skipped": 0, "failed": 0,
                                 "left": 0, "budgetOut": False}
    ticket = _ticket(db, event, "MEMBER-0001")
    assert ticket.person_id == member.id and ticket.linked_at is not None
    assert (ticket.status, ticket.source, ticket.type, ticket.price) == (
        "valid", "paylogic", "Early bird", 17.5)
    assert ticket.holder == "Mira", "the member's name when the shop gave none"
    assert ticket.buyer_email is None and ticket.batch_id == data["batchId"]
    mark = db.get(Mark, (member.id, event.id))
    assert mark.kind == "going"
    [notice] = mailing.to("Mira@Mail.example")
    assert "Warehouse Night" in notice["Subject"] and "added to your account" in notice["Subject"]


def test_a_member_marked_interested_becomes_going(client, db, headers, event, mailing):
    member = PersonFactory()
    MarkFactory(person_id=member.id, event_id=event.id, kind="interested")
    _deliver(client, headers, event, [_item("MARK-0001", member.email)])
    db.expire_all()
    assert db.get(Mark, (member.id, event.id)).kind == "going"


def test_a_waiting_ticket_keeps_only_the_hash_once_its_mail_went_out(client, db, headers,
                                                                      event, mailing):
    response = _deliver(client, headers, event,
                        [_item("WAIT-0001", "New.Buyer@Mail.example", name="New Buyer")])
    data = response.json()["data"]
    assert data["results"][0] == {"index": 0, "code": "WAIT-0001", "status": "added",
                                  "member": False}
    assert data["totals"]["matched"] == 0
    assert data["processed"] == {"linked": 0, "mailed": 1, "skipped": 0, "failed": 0,
                                 "left": 0, "budgetOut": False}
    [mail] = mailing.to("New.Buyer@Mail.example")
    assert "waiting for you" in mail["Subject"]
    assert "Sign in or create an account" in mail.get_payload(decode=True).decode()
    ticket = _ticket(db, event, "WAIT-0001")
    assert ticket.person_id is None and ticket.holder == "New Buyer"
    assert ticket.buyer_email is None, "the address is forgotten after the mail went out"
    assert ticket.buyer_email_hash == _hash("new.buyer@mail.example")
    queued = db.scalars(select(OutboxMail).where(OutboxMail.ticket_id == ticket.id)).one()
    assert (queued.kind, queued.status, queued.to_address) == (
        "ticket_waiting", "sent", outbox.REDACTED)


def test_one_mail_per_address_and_delivery(client, db, headers, event, mailing):
    items = [_item(f"GROUP-{n:04d}", "group@mail.example") for n in range(3)]
    items.append(_item("SOLO-0001", "solo@mail.example"))
    data = _deliver(client, headers, event, items).json()["data"]
    assert data["processed"]["mailed"] == 2
    [group] = mailing.to("group@mail.example")
    assert "3 tickets" in group["Subject"]
    assert len(mailing.to("solo@mail.example")) == 1
    assert all(_ticket(db, event, f"GROUP-{n:04d}").buyer_email is None for n in range(3))


def test_invite_false_sends_no_mail_and_stores_no_address(client, db, headers, event, mailing):
    data = _deliver(client, headers, event, [_item("QUIET-0001", "quiet@mail.example")],
                    invite=False).json()["data"]
    assert data["processed"] == {"linked": 0, "mailed": 0, "skipped": 1, "failed": 0,
                                 "left": 0, "budgetOut": False}
    assert mailing.messages == []
    ticket = _ticket(db, event, "QUIET-0001")
    assert ticket.buyer_email is None and ticket.buyer_email_hash == _hash("quiet@mail.example")
    assert ticket.invite is False


def test_members_are_notified_even_when_invite_is_false(client, headers, event, mailing):
    member = PersonFactory()
    data = _deliver(client, headers, event, [_item("NOTIFY-0001", member.email)],
                    invite=False).json()["data"]
    assert data["processed"]["mailed"] == 1 and data["processed"]["skipped"] == 0
    assert len(mailing.to(member.email)) == 1


# --- item rules at their edges -----------------------------------------------------------

LOCAL = "a" * 64
# 64 + 1 + 189 = 254 characters: labels of 63 characters at most.
DOMAIN_189 = ".".join(["d" * 62, "e" * 61, "f" * 61, "nl"])
assert len(f"{LOCAL}@{DOMAIN_189}") == 254


@pytest.mark.parametrize(("item", "reason"), [
    ({"code": "abc", "email": "x@mail.example"}, "invalid_code"),
    ({"code": "abcd", "email": "x@mail.example"}, None),
    ({"code": "A" * 64, "email": "x@mail.example"}, None),
    ({"code": "A" * 65, "email": "x@mail.example"}, "invalid_code"),
    ({"code": "az_AZ-09", "email": "x@mail.example"}, None),
    ({"code": "bad code", "email": "x@mail.example"}, "invalid_code"),
    ({"code": "bad/code", "email": "x@mail.example"}, "invalid_code"),
    ({"code": "bad.code", "email": "x@mail.example"}, "invalid_code"),
    ({"code": "kaartjé", "email": "x@mail.example"}, "invalid_code"),
    ({"code": "code\n123", "email": "x@mail.example"}, "invalid_code"),
    ({"code": 12345678, "email": "x@mail.example"}, "invalid_code"),
    ({"email": "x@mail.example"}, "invalid_code"),
    ({"code": "EDGE-0001", "email": f"{LOCAL}@{DOMAIN_189}"}, None),
    ({"code": "EDGE-0001", "email": f"{LOCAL}@g{DOMAIN_189}"}, "invalid_email"),
    ({"code": "EDGE-0001", "email": f"{LOCAL}a@mail.example"}, "invalid_email"),
    ({"code": "EDGE-0001"}, "invalid_email"),
    ({"code": "EDGE-0001", "email": None}, "invalid_email"),
    ({"code": "EDGE-0001", "email": ""}, "invalid_email"),
    ({"code": "EDGE-0001", "email": "no-at-sign.example"}, "invalid_email"),
    ({"code": "EDGE-0001", "email": "two@@mail.example"}, "invalid_email"),
    ({"code": "EDGE-0001", "email": "x@localhost"}, "invalid_email"),
    ({"code": "EDGE-0001", "email": "x@-mail.example"}, "invalid_email"),
    ({"code": "EDGE-0001", "email": "x..y@mail.example"}, "invalid_email"),
    ({"code": "EDGE-0001", "email": " x@mail.example"}, "invalid_email"),
    ({"code": "EDGE-0001", "email": "x@mail.example\nBcc: y@mail.example"}, "invalid_email"),
    ({"code": "EDGE-0001", "email": "first.o'neil+tag@sub.mail.example"}, None),
    ({"code": "EDGE-0001", "email": "x@mail.example", "type": "T" * 80}, None),
    ({"code": "EDGE-0001", "email": "x@mail.example", "type": "T" * 81}, "invalid_field"),
    ({"code": "EDGE-0001", "email": "x@mail.example", "type": 3}, "invalid_field"),
    ({"code": "EDGE-0001", "email": "x@mail.example", "name": "N" * 120}, None),
    ({"code": "EDGE-0001", "email": "x@mail.example", "name": "N" * 121}, "invalid_field"),
    ({"code": "EDGE-0001", "email": "x@mail.example", "name": "N\x00"}, "invalid_field"),
    ({"code": "EDGE\x000001", "email": "x@mail.example"}, "invalid_code"),
    ({"code": "EDGE-0001", "email": "x@mail.example", "price": 0}, None),
    ({"code": "EDGE-0001", "email": "x@mail.example", "price": -0.01}, "invalid_field"),
    ({"code": "EDGE-0001", "email": "x@mail.example", "price": "12"}, "invalid_field"),
    ({"code": "EDGE-0001", "email": "x@mail.example", "price": True}, "invalid_field"),
    ({"code": "EDGE-0001", "email": "x@mail.example", "type": None, "name": None,
      "price": None, "seat": "B12"}, None),
    ({"code": "abc", "email": "bad", "price": -1}, "invalid_code"),
    ({"code": "EDGE-0001", "email": "bad", "price": -1}, "invalid_email"),
])
def test_each_item_rule_at_its_edge(client, db, headers, event, item, reason):
    response = _deliver(client, headers, event, [item], invite=False)
    assert response.status_code == 200, response.text
    [result] = response.json()["data"]["results"]
    if reason is None:
        assert result["status"] == "added", result
        assert _count(db, event) == 1
    else:
        code = item.get("code")
        assert result == {"index": 0, "code": code if isinstance(code, str) else "",
                          "status": "refused", "reason": reason}
        assert _count(db, event) == 0, "a refused item is not stored"


def test_a_refused_item_does_not_spoil_the_others(client, headers, event):
    data = _deliver(client, headers, event, [
        _item("GOOD-0001"), _item("x"), _item("GOOD-0002", "not-an-address")],
        invite=False).json()["data"]
    assert [r["status"] for r in data["results"]] == ["added", "refused", "refused"]
    assert data["totals"] == {"received": 3, "added": 1, "duplicates": 0, "refused": 2,
                              "matched": 0}


def test_500_items_are_accepted_and_501_are_a_400(client, db, headers, event):
    items = [_item(f"BULK-{n:05d}", f"b{n}@mail.example") for n in range(501)]
    refused = _deliver(client, headers, event, items, invite=False)
    assert refused.status_code == 400
    assert [p["name"] for p in refused.json()["error"]["details"]["params"]] == ["items"]
    assert _count(db, event) == 0
    accepted = _deliver(client, headers, event, items[:500], invite=False)
    assert accepted.status_code == 200
    assert accepted.json()["data"]["totals"]["added"] == 500
    assert _count(db, event) == 500


@pytest.mark.parametrize("body", [
    {"items": []},
    {"items": [{"code": "GOOD-0001", "email": "x@mail.example"}], "source": "shopify"},
    {"items": [{"code": "GOOD-0001", "email": "x@mail.example"}], "invite": "yes"},
    {"items": ["GOOD-0001"]},
    {"source": "other"},
])
def test_a_request_wrong_as_a_whole_is_a_400(client, db, headers, event, body):
    response = client.post(f"/v1/events/{event.id}/external-tickets", headers=headers, json=body)
    assert response.status_code == 400
    assert response.json()["error"]["details"]["params"]
    assert _count(db, event) == 0


# --- idempotency -------------------------------------------------------------------------


def test_a_code_repeated_in_one_request_is_a_duplicate_after_the_first(client, db, headers,
                                                                       event):
    data = _deliver(client, headers, event, [
        _item("BAD", "x@mail.example"), _item("TWICE-0001", "bad"),
        _item("TWICE-0001", "one@mail.example"), _item("TWICE-0001", "two@mail.example")],
        invite=False).json()["data"]
    assert [r["status"] for r in data["results"]] == ["refused", "refused", "added", "duplicate"]
    assert data["results"][3] == {"index": 3, "code": "TWICE-0001", "status": "duplicate"}
    assert _ticket(db, event, "TWICE-0001").buyer_email_hash == _hash("one@mail.example")


def test_sending_the_same_list_again_adds_nothing_twice(client, db, headers, event, mailing):
    items = [_item("AGAIN-0001", "a@mail.example"), _item("AGAIN-0002", "b@mail.example")]
    first = _deliver(client, headers, event, items).json()["data"]
    items.append(_item("AGAIN-0003", "c@mail.example"))
    second = _deliver(client, headers, event, items).json()["data"]
    assert first["totals"]["added"] == 2
    assert [r["status"] for r in second["results"]] == ["duplicate", "duplicate", "added"]
    assert second["totals"] == {"received": 3, "added": 1, "duplicates": 2, "refused": 0,
                                "matched": 0}
    assert second["batchId"] != first["batchId"]
    assert _count(db, event) == 3
    assert len(mailing.to("a@mail.example")) == 1, "no second mail for a duplicate"


def test_a_code_of_another_event_is_not_a_duplicate(client, db, headers, event, organisation):
    other = EventFactory(organisation=organisation, external_ticketing=True)
    _deliver(client, headers, other, [_item("SHARED-0001")], invite=False)
    data = _deliver(client, headers, event, [_item("SHARED-0001")], invite=False).json()["data"]
    assert data["results"][0]["status"] == "added"


# --- sending within the budget, failures, the worker -------------------------------------


def test_a_zero_budget_leaves_every_mail_to_the_worker(client, db, headers, event, mailing,
                                                       monkeypatch):
    monkeypatch.setattr(deliveries, "SEND_BUDGET_SECONDS", 0)
    items = [_item(f"LATER-{n:04d}", f"later{n}@mail.example") for n in range(3)]
    data = _deliver(client, headers, event, items).json()["data"]
    assert data["processed"] == {"linked": 0, "mailed": 0, "skipped": 0, "failed": 0,
                                 "left": 3, "budgetOut": True}
    assert mailing.messages == []
    assert _ticket(db, event, "LATER-0000").buyer_email == "later0@mail.example"
    status = client.get(f"/v1/events/{event.id}/external-tickets", headers=headers).json()
    assert status["data"]["counts"] == {"delivered": 3, "linked": 0, "pending": 3, "todo": 3}


def test_the_budget_counts_from_the_requests_arrival(client, headers, event, mailing,
                                                    monkeypatch):
    # As if reading and checking the list had taken the whole budget: no mail goes out.
    monkeypatch.setattr(organiser, "seconds_since_arrival",
                        lambda: deliveries.SEND_BUDGET_SECONDS)
    items = [_item(f"SLOW-{n:04d}", f"slow{n}@mail.example") for n in range(2)]
    data = _deliver(client, headers, event, items).json()["data"]
    assert data["processed"]["budgetOut"] is True
    assert (data["processed"]["mailed"], data["processed"]["left"]) == (0, 2)
    assert mailing.messages == []


def test_smtp_down_fails_the_mail_and_the_worker_sends_it_later(client, app, db, headers,
                                                                event, mailing):
    mailing.stop()
    data = _deliver(client, headers, event, [_item("DOWN-0001", "down@mail.example"),
                                             _item("DOWN-0002", "down2@mail.example")]).json()
    assert data["data"]["processed"] == {"linked": 0, "mailed": 0, "skipped": 0, "failed": 1,
                                         "left": 1, "budgetOut": False}
    assert _ticket(db, event, "DOWN-0001").buyer_email == "down@mail.example"
    mailing.start()
    # What `agenda worker` does once the failed mail's backoff has passed.
    sender = mailer_for(mailing.url, sender_name="Agenda", sender_address="a@agenda.example")
    try:
        report = outbox.send_due(app.service.sessions, mailer=sender,
                                 now=int(time.time()) + outbox.RETRY_DELAYS[1])
    finally:
        sender.close()
    assert report.mailed == 2
    assert len(mailing.to("down@mail.example")) == 1
    assert _ticket(db, event, "DOWN-0001").buyer_email is None


def test_without_an_smtp_server_configured_mail_goes_to_the_log(client, db, headers, event,
                                                                caplog):
    with caplog.at_level("INFO", logger="agenda.mail"):
        data = _deliver(client, headers, event, [_item("LOG-0001", "log@mail.example")]).json()
    assert data["data"]["processed"]["mailed"] == 1
    assert "l***@mail.example" in caplog.text and "log@mail.example" not in caplog.text
    assert _ticket(db, event, "LOG-0001").buyer_email is None


# --- status ------------------------------------------------------------------------------


def test_the_status_counts_tickets_and_lists_the_last_20_batches_newest_first(
        client, db, headers, event):
    member = PersonFactory()
    first = _deliver(client, headers, event, [_item("ST-0001", member.email),
                                              _item("ST-0002", "w@mail.example"), _item("x")],
                     source="weeztix", invite=False).json()["data"]
    for n in range(20):
        _deliver(client, headers, event, [_item(f"ST-1{n:03d}")], invite=False)
    response = client.get(f"/v1/events/{event.id}/external-tickets", headers=headers)
    assert response.status_code == 200
    status = response.json()["data"]
    assert status["ok"] is True and status["eventId"] == event.id
    assert status["counts"] == {"delivered": 22, "linked": 1, "pending": 21, "todo": 0}
    batches = status["batches"]
    assert len(batches) == 20
    assert first["batchId"] not in [b["id"] for b in batches], "only the last twenty"
    assert batches[0]["createdAt"] >= batches[-1]["createdAt"]
    assert [b["id"] for b in batches] == sorted((b["id"] for b in batches), reverse=True)
    assert batches[-1] == {**batches[-1], "source": "other", "via": "api", "received": 1,
                           "added": 1, "duplicates": 0, "refused": 0, "linked": 0}
    db.expire_all()
    oldest = db.get(DeliveryBatch, first["batchId"])
    assert (oldest.source, oldest.received, oldest.added, oldest.refused, oldest.linked) == (
        "weeztix", 3, 2, 1, 1)


def test_the_status_of_an_event_without_deliveries_is_all_zero(client, headers, organisation):
    event = EventFactory(organisation=organisation)
    data = client.get(f"/v1/events/{event.slug}/external-tickets", headers=headers).json()["data"]
    assert data == {"ok": True, "eventId": event.id, "batches": [],
                    "counts": {"delivered": 0, "linked": 0, "pending": 0, "todo": 0}}


# --- who may deliver where ---------------------------------------------------------------


@pytest.mark.parametrize("method", ["get", "post"])
def test_another_organisations_event_is_a_404_like_a_missing_one(client, headers, method):
    foreign = EventFactory(external_ticketing=True)
    body = {"json": {"items": [_item("FOREIGN-01")]}} if method == "post" else {}
    for key in (foreign.id, foreign.slug, "evt_missing"):
        response = getattr(client, method)(f"/v1/events/{key}/external-tickets",
                                           headers=headers, **body)
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
        assert foreign.title not in response.text


def test_another_organisations_delivery_adds_nothing(client, db, headers):
    foreign = EventFactory(external_ticketing=True)
    client.post(f"/v1/events/{foreign.id}/external-tickets", headers=headers,
                json={"items": [_item("FOREIGN-01")]})
    assert _count(db, foreign) == 0


@pytest.mark.parametrize("method", ["get", "post"])
def test_a_token_without_the_tickets_scope_is_a_403(client, make_token, organisation, event,
                                                    method):
    token = make_token("read", "scan", "attendance", organisation=organisation)
    body = {"json": {"items": [_item("SCOPE-0001")]}} if method == "post" else {}
    response = getattr(client, method)(f"/v1/events/{event.id}/external-tickets",
                                       headers={"Authorization": f"Bearer {token}"}, **body)
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"


def test_an_event_without_external_ticketing_is_a_409_and_adds_nothing(client, db, headers,
                                                                       organisation):
    own = EventFactory(organisation=organisation, external_ticketing=False)
    response = _deliver(client, headers, own, [_item("NOEXT-0001")])
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "conflict"
    assert _count(db, own) == 0
    assert db.scalar(select(func.count()).select_from(DeliveryBatch)
                     .where(DeliveryBatch.event_id == own.id)) == 0


def test_answers_are_private_and_never_cached(client, headers, event):
    for response in (_deliver(client, headers, event, [_item("PRIV-0001")], invite=False),
                     client.get(f"/v1/events/{event.id}/external-tickets", headers=headers)):
        assert response.status_code == 200
        assert response.headers["cache-control"] == "private, no-store"
        assert "etag" not in response.headers
        assert "attribution" not in response.json()["meta"]
        assert response.headers["x-request-id"] == response.json()["meta"]["request_id"]


def test_an_unreachable_smtp_port_is_reported_not_raised(client, app, headers, event,
                                                         monkeypatch):
    monkeypatch.setattr(app.service, "settings", dataclasses.replace(
        app.service.settings, smtp_url=f"smtp://127.0.0.1:{free_port()}"))
    response = _deliver(client, headers, event, [_item("PORT-0001", "p@mail.example")])
    assert response.status_code == 200
    assert response.json()["data"]["processed"]["failed"] == 1


# --- the same list ten times at once, on a served app (PostgreSQL) -----------------------


@pytest.fixture
def committed(database_url):
    """A session that really commits (no test transaction), and removes what it made."""
    if not database_url.startswith("postgresql"):
        pytest.skip("concurrent delivery is checked on PostgreSQL")
    with committing(database_url) as (session, made):
        yield session, made


@pytest.fixture
def served(database_url, smtp):  # noqa: F811 - the fixture
    """The application with its own database sessions, served by uvicorn on loopback."""
    settings = {"database_url": database_url, "validate_responses": True,
                "secret_key": SECRET, "smtp_url": smtp.url}
    with served_in_thread(lambda _site: create_app(settings), lifespan="off") as (app, site):
        yield f"{site}/v1"
    app.service.close()


def test_the_same_500_items_sent_ten_times_at_once_add_each_ticket_once(committed, served,
                                                                        smtp):  # noqa: F811
    session, made = committed
    organisation = OrganisationFactory(ticket_shop_url="https://shop.example")
    event = EventFactory(organisation=organisation, external_ticketing=True)
    member = PersonFactory()
    record, token = tokens.create_token(session, organisation=organisation, name="race",
                                        scopes=["tickets"])
    made += [organisation, record, event.venue, member, event]
    session.commit()
    items = [_item(f"RACE-{n:05d}", f"race{n}@mail.example") for n in range(499)]
    items.append(_item("RACE-MEMBER", member.email))
    start, answers = threading.Barrier(10), [None] * 10

    def deliver(slot: int) -> None:
        with httpx.Client(timeout=120) as http:
            start.wait()
            began = time.perf_counter()
            response = http.post(f"{served}/events/{event.id}/external-tickets",
                                 headers={"Authorization": f"Bearer {token}"},
                                 json={"items": items, "source": "eventbrite"})
            answers[slot] = (response, time.perf_counter() - began)

    threads = [threading.Thread(target=deliver, args=(n,)) for n in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert [answer[0].status_code for answer in answers] == [200] * 10
    results = [answer[0].json()["data"] for answer in answers]
    assert sum(r["totals"]["added"] for r in results) == 500
    for result in results:
        assert result["totals"]["added"] + result["totals"]["duplicates"] == 500
    winners = [r for r in results if r["totals"]["added"]]
    assert len(winners) == 1, "the unique constraint lets one delivery add every code"
    assert winners[0]["totals"]["matched"] == 1
    session.expire_all()
    codes = session.scalars(select(Ticket.code).where(Ticket.event_id == event.id)).all()
    assert sorted(codes) == sorted(item["code"] for item in items)
    assert session.scalar(select(func.count(DeliveryBatch.id))
                          .where(DeliveryBatch.event_id == event.id)) == 10
    mails = session.scalars(select(OutboxMail).join(Ticket, Ticket.id == OutboxMail.ticket_id)
                            .where(Ticket.event_id == event.id)).all()
    assert len(mails) == 500, "one mail per added ticket's address, none for duplicates"
    sent = [m for m in mails if m.status == "sent"]
    assert len(sent) == winners[0]["processed"]["mailed"]
    recipients = [m["To"] for m in smtp.messages]
    assert len(recipients) == len(set(recipients)) == len(sent), "no mail sent twice"
    print(f"\n10 x 500 items at once: slowest answer {max(a[1] for a in answers):.2f} s, "
          f"winner mailed {len(sent)} within its budget")

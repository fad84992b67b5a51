"""The outbox: claiming, sending over real SMTP, retries with backoff, forgetting addresses.

`smtp` (also used by the delivery and worker tests) is a real SMTP server
(aiosmtpd) on a free loopback port; `smtp.messages` is what it received, and
`smtp.refuse` makes it refuse recipients for good (550).
"""

from __future__ import annotations

import email
import threading

import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import select

from models import outbox
from adapters.mail import LogMailer, MailError, SmtpMailer, mailer_for
from models.tickets import DeliveryBatch, OutboxMail, Ticket
from tests.factories import EventFactory, TicketFactory
from tests.servers import free_port


class _Sink:
    """The aiosmtpd handler: keeps every message, refuses the addresses in `refuse`."""

    def __init__(self):
        self.messages: list[email.message.Message] = []
        self.refuse: set[str] = set()
        self.lock = threading.Lock()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # noqa: N802
        if address.lower() in self.refuse:
            return "550 5.1.1 No such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):  # noqa: N802
        message = email.message_from_bytes(envelope.original_content)
        with self.lock:
            self.messages.append(message)
        return "250 Message accepted for delivery"


class SmtpServer:
    """A real SMTP server on loopback that can be stopped and started again on its port."""

    def __init__(self):
        self.port = free_port()
        self.sink = _Sink()
        self._controller: Controller | None = None

    @property
    def url(self) -> str:
        """The `AGENDA_SMTP_URL` of this server."""
        return f"smtp://127.0.0.1:{self.port}"

    @property
    def messages(self) -> list:
        """The messages received so far."""
        with self.sink.lock:
            return list(self.sink.messages)

    @property
    def refuse(self) -> set[str]:
        """Recipients refused with 550."""
        return self.sink.refuse

    def to(self, address: str) -> list:
        """The messages received for `address`."""
        return [m for m in self.messages if m["To"].lower() == address.lower()]

    def start(self) -> None:
        """Listen (again) on the port."""
        self._controller = Controller(self.sink, hostname="127.0.0.1", port=self.port)
        self._controller.start()

    def stop(self) -> None:
        """Stop listening: connections are refused until `start`."""
        if self._controller is not None:
            self._controller.stop()
            self._controller = None


@pytest.fixture
def smtp():
    """A running SMTP server on a free loopback port, stopped after the test."""
    server = SmtpServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def sessions(app, db):
    """The application's sessionmaker (joined to the test's transaction by `db`)."""
    return app.service.sessions


@pytest.fixture
def mailers():
    """`mailers(url)`: SMTP mailers that are closed after the test."""
    made = []

    def make(url: str) -> SmtpMailer:
        made.append(SmtpMailer(url, sender="Agenda <api@agenda.example>", timeout=5))
        return made[-1]

    yield make
    for mailer in made:
        mailer.close()


def _queue(db, *, to="buyer@mail.example", kind=outbox.WAITING, ticket=None, now=1_800_000_000):
    ticket = ticket or TicketFactory(person_id=None, buyer_email=to, buyer_email_hash="h" * 64,
                                     batch_id=None, source="other")
    outbox.queue(db, [{"kind": kind, "to_address": to, "subject": "A ticket is waiting",
                       "body": "Sign in.", "ticket_id": ticket.id}], now=now,
                 batch_id=ticket.batch_id)
    db.flush()
    return db.scalars(select(OutboxMail).where(OutboxMail.ticket_id == ticket.id)).one()


def _fresh(db, model, key):
    db.expire_all()
    return db.get(model, key)


def test_a_sent_mail_arrives_over_smtp_and_its_address_is_forgotten(db, sessions, smtp,
                                                                    mailers):
    mail = _queue(db)
    report = outbox.send_due(sessions, mailer=mailers(smtp.url), now=1_800_000_010)
    assert (report.mailed, report.failed, report.left, report.budget_out) == (1, 0, 0, False)
    [received] = smtp.to("buyer@mail.example")
    assert received["Subject"] == "A ticket is waiting"
    assert received["From"] == "Agenda <api@agenda.example>"
    assert received.get_payload(decode=True).decode().strip() == "Sign in."
    mail = _fresh(db, OutboxMail, mail.id)
    assert (mail.status, mail.attempts, mail.sent_at) == ("sent", 1, 1_800_000_010)
    assert mail.to_address == outbox.REDACTED
    ticket = db.get(Ticket, mail.ticket_id)
    assert ticket.buyer_email is None and ticket.buyer_email_hash == "h" * 64


def test_a_mail_is_sent_once_even_when_two_senders_run(db, sessions, smtp, mailers):
    _queue(db)
    first = outbox.send_due(sessions, mailer=mailers(smtp.url), now=1_800_000_010)
    second = outbox.send_due(sessions, mailer=mailers(smtp.url), now=1_800_000_020)
    assert (first.mailed, second.mailed) == (1, 0)
    assert len(smtp.messages) == 1


def test_a_claim_taken_meanwhile_is_not_sent_again(db, sessions, smtp, mailers):
    mail = _queue(db)
    # Another sender claimed it between our read and our claim: attempts moved on.
    with sessions() as session, session.begin():
        outcome = outbox._send_one(session, mailer=mailers(smtp.url), mail_id=mail.id,
                                   attempts=mail.attempts + 1, now=1_800_000_010)
    assert outcome == ("taken", False)
    assert smtp.messages == []


def test_an_unreachable_server_fails_one_mail_stops_the_run_and_keeps_the_address(db, sessions,
                                                                              mailers):
    first, second = _queue(db, to="one@mail.example"), _queue(db, to="two@mail.example")
    mailer = mailers(f"smtp://127.0.0.1:{free_port()}")
    report = outbox.send_due(sessions, mailer=mailer, now=1_800_000_010)
    assert (report.mailed, report.failed, report.left, report.unreachable) == (0, 1, 1, True)
    first, second = _fresh(db, OutboxMail, first.id), db.get(OutboxMail, second.id)
    assert (first.status, first.attempts, first.to_address) == ("failed", 1, "one@mail.example")
    assert "cannot reach the SMTP server" in first.last_error
    assert (second.status, second.attempts) == ("pending", 0)
    assert db.get(Ticket, first.ticket_id).buyer_email == "one@mail.example"


def test_a_failed_mail_is_retried_after_its_backoff(db, sessions, smtp, mailers):
    mail = _queue(db)
    smtp.stop()
    outbox.send_due(sessions, mailer=mailers(smtp.url), now=1_800_000_010)
    smtp.start()
    too_soon = outbox.send_due(sessions, mailer=mailers(smtp.url), now=1_800_000_010 + 59)
    assert too_soon.mailed == 0 and smtp.messages == []
    later = outbox.send_due(sessions, mailer=mailers(smtp.url), now=1_800_000_010 + 60)
    assert later.mailed == 1 and len(smtp.to("buyer@mail.example")) == 1
    mail = _fresh(db, OutboxMail, mail.id)
    assert (mail.status, mail.attempts, mail.last_error) == ("sent", 2, None)


def test_the_backoff_doubles_and_has_a_ceiling():
    assert [outbox.RETRY_DELAYS[n] for n in range(1, outbox.MAX_ATTEMPTS)] == [
        60, 120, 240, 480, 960, 1920, 3840]


def test_a_mail_is_given_up_after_the_last_attempt_and_its_address_forgotten(db, sessions,
                                                                             mailers):
    mail = _queue(db)
    mail.status, mail.attempts, mail.sent_at = "failed", outbox.MAX_ATTEMPTS - 1, 1_800_000_000
    db.flush()
    mailer = mailers(f"smtp://127.0.0.1:{free_port()}")
    report = outbox.send_due(sessions, mailer=mailer, now=1_800_100_000)
    assert report.failed == 0 and report.dead == 1
    mail = _fresh(db, OutboxMail, mail.id)
    assert (mail.status, mail.attempts, mail.to_address) == ("dead", 8, outbox.REDACTED)
    assert db.get(Ticket, mail.ticket_id).buyer_email is None
    assert outbox.send_due(sessions, mailer=mailer, now=1_900_000_000).failed == 0


def test_a_recipient_refused_for_good_is_not_retried(db, sessions, smtp, mailers):
    smtp.refuse.add("gone@mail.example")
    refused, fine = _queue(db, to="gone@mail.example"), _queue(db, to="fine@mail.example")
    report = outbox.send_due(sessions, mailer=mailers(smtp.url), now=1_800_000_010)
    assert (report.mailed, report.dead, report.failed) == (1, 1, 0)
    assert _fresh(db, OutboxMail, refused.id).status == "dead"
    assert "550" in db.get(OutboxMail, refused.id).last_error
    assert db.get(OutboxMail, fine.id).status == "sent"


def test_the_budget_stops_the_run_and_leaves_the_rest_queued(db, sessions, smtp, mailers):
    for n in range(3):
        _queue(db, to=f"b{n}@mail.example")
    ticks = iter([0.0, 0.5, 1.5, 2.5, 3.0])
    report = outbox.send_due(sessions, mailer=mailers(smtp.url), now=1_800_000_010, budget=2.0,
                             clock=lambda: next(ticks))
    assert (report.mailed, report.left, report.budget_out) == (2, 1, True)


def test_a_run_can_be_limited_to_one_delivery(db, sessions, smtp, mailers):
    event = EventFactory()
    db.add(DeliveryBatch(id="dlv_test", event_id=event.id, source="other", created_at=1))
    db.flush()
    mine = TicketFactory(event_id=event.id, person_id=None, batch_id="dlv_test")
    _queue(db, to="mine@mail.example", ticket=mine)
    other = _queue(db, to="other@mail.example")
    report = outbox.send_due(sessions, mailer=mailers(smtp.url), now=1_800_000_010,
                             batch_id="dlv_test")
    assert (report.mailed, report.left) == (1, 0)
    assert [m["To"] for m in smtp.messages] == ["mine@mail.example"]
    assert _fresh(db, OutboxMail, other.id).status == "pending"


def test_without_an_smtp_url_mail_goes_to_the_log_with_the_address_redacted(caplog):
    mailer = mailer_for(None, sender_name="Agenda", sender_address="api@agenda.example")
    assert isinstance(mailer, LogMailer)
    with caplog.at_level("INFO", logger="agenda.mail"):
        mailer.send(to="someone@mail.example", subject="Hello", body="Body text")
    assert "s***@mail.example" in caplog.text and "Hello" in caplog.text
    assert "someone@mail.example" not in caplog.text


def test_smtp_urls_are_checked():
    with pytest.raises(ValueError):
        SmtpMailer("http://127.0.0.1:25", sender="a@agenda.example")
    mailer = SmtpMailer("smtps://user:p%40ss@mail.example", sender="a@agenda.example")
    assert (mailer.port, mailer.username, mailer.password, mailer.implicit_tls) == (
        465, "user", "p@ss", True)
    assert SmtpMailer("smtp://mail.example:2525?starttls=1", sender="a@x.example").starttls


def test_an_unreachable_server_is_a_connection_error(mailers):
    mailer = mailers(f"smtp://127.0.0.1:{free_port()}")
    with pytest.raises(MailError) as raised:
        mailer.send(to="x@mail.example", subject="s", body="b")
    assert raised.value.connection and not raised.value.permanent

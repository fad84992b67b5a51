"""`agenda worker` sends the outbox over real SMTP; `agenda person link` attaches waiting tickets.

These commands commit, so the tests make their data in committed sessions and
remove it afterwards.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from sqlalchemy import select, update

from agenda.cli import main
from models import deliveries, outbox
from models.tickets import OutboxMail, Ticket
from tests.factories import EventFactory, OrganisationFactory, PersonFactory
from tests.models.test_outbox import smtp  # noqa: F401 - the fixture
from tests.servers import committing, free_port

SECRET = "worker-secret"


def _run(database_url, *args, smtp_url=None, secret=SECRET):
    env = {"AGENDA_DATABASE_URL": database_url, "AGENDA_SMTP_URL": smtp_url,
           "AGENDA_SECRET_KEY": secret}
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


@pytest.fixture
def committed(database_url):
    """A really committing session; what the test lists in `made` is removed afterwards."""
    with committing(database_url) as (session, made):
        yield session, made


@pytest.fixture
def delivered(committed):
    """An event with two waiting tickets for one address and one for a member, committed."""
    session, made = committed
    organisation = OrganisationFactory()
    event = EventFactory(organisation=organisation, external_ticketing=True, title="Harbour Rave")
    member = PersonFactory()
    made += [organisation, event.venue, member, event]
    delivery = deliveries.deliver_tickets(
        session, event=event, source="weeztix", invite=True, secret_key=SECRET,
        site_url="https://agenda.example", now=1_800_000_000, items=[
            {"code": "HARBOUR-01", "email": "Wait.Ing@mail.example"},
            {"code": "HARBOUR-02", "email": "wait.ing@mail.example"},
            {"code": "HARBOUR-03", "email": member.email}])
    session.commit()
    return session, made, event, member, delivery


def _mails(session, delivery) -> list[OutboxMail]:
    session.expire_all()
    return session.scalars(select(OutboxMail).join(Ticket, Ticket.id == OutboxMail.ticket_id)
                           .where(Ticket.batch_id == delivery.batch_id)
                           .order_by(OutboxMail.id)).all()


def _tickets(session, event) -> dict[str, Ticket]:
    session.expire_all()
    return {t.code: t for t in session.scalars(select(Ticket).where(Ticket.event_id == event.id))}


def test_the_worker_sends_the_queue_once_and_forgets_the_addresses(database_url, delivered,
                                                                   smtp):  # noqa: F811
    session, _made, event, member, delivery = delivered
    result = _run(database_url, "worker", "--once", smtp_url=smtp.url)
    assert result.exit_code == 0, result.output
    assert "mailed 2, failed 0, given up 0, still queued 0" in result.output
    [waiting] = smtp.to("Wait.Ing@mail.example")
    assert "2 tickets waiting for you" in waiting["Subject"]
    assert len(smtp.to(member.email)) == 1
    assert {(m.status, m.to_address) for m in _mails(session, delivery)} == {
        ("sent", outbox.REDACTED)}
    tickets = _tickets(session, event)
    assert tickets["HARBOUR-01"].buyer_email is None and tickets["HARBOUR-02"].buyer_email is None
    again = _run(database_url, "worker", "--once", smtp_url=smtp.url)
    assert "mailed 0" in again.output and len(smtp.messages) == 2, "nothing is sent twice"


def test_smtp_down_fails_then_the_worker_retries_after_the_backoff(database_url, delivered,
                                                                   smtp):  # noqa: F811
    session, _made, _event, _member, delivery = delivered
    smtp.stop()
    down = _run(database_url, "worker", "--once", smtp_url=smtp.url)
    assert down.exit_code == 1
    assert "could not be reached" in down.output
    mails = _mails(session, delivery)
    assert [(m.status, m.attempts) for m in mails] == [("failed", 1), ("pending", 0)]
    assert "cannot reach the SMTP server" in mails[0].last_error
    assert mails[0].to_address != outbox.REDACTED, "kept until the mail went out"

    smtp.start()
    soon = _run(database_url, "worker", "--once", smtp_url=smtp.url)
    assert soon.exit_code == 0
    assert [m.status for m in _mails(session, delivery)] == ["failed", "sent"], "backoff"
    # A minute later (the first backoff) the failed mail is due again.
    session.execute(update(OutboxMail).where(OutboxMail.id == mails[0].id)
                    .values(sent_at=OutboxMail.sent_at - outbox.RETRY_DELAYS[1]))
    session.commit()
    later = _run(database_url, "worker", "--once", smtp_url=smtp.url)
    assert "mailed 1" in later.output
    assert [(m.status, m.attempts, m.last_error) for m in _mails(session, delivery)] == [
        ("sent", 2, None), ("sent", 1, None)]
    assert len(smtp.messages) == 2


def test_person_link_finds_a_scrubbed_address_through_the_hash(database_url, delivered,
                                                               smtp):  # noqa: F811
    session, made, event, _member, _delivery = delivered
    _run(database_url, "worker", "--once", smtp_url=smtp.url)
    assert _tickets(session, event)["HARBOUR-01"].buyer_email is None
    newcomer = PersonFactory(email="Wait.Ing@Mail.Example", email_key="wait.ing@mail.example")
    made.insert(-1, newcomer)
    session.commit()
    result = _run(database_url, "person", "link", "WAIT.ING@mail.example")
    assert result.exit_code == 0, result.output
    assert f"linked 2 waiting tickets to {newcomer.handle}" in result.output
    tickets = _tickets(session, event)
    assert {tickets[c].person_id for c in ("HARBOUR-01", "HARBOUR-02")} == {newcomer.id}
    assert "linked 0 waiting tickets" in _run(database_url, "person", "link",
                                              "wait.ing@mail.example").output


def test_person_link_needs_a_member_and_the_secret_key(database_url):
    unknown = _run(database_url, "person", "link", "nobody@mail.example")
    assert unknown.exit_code != 0 and "No such member" in unknown.output
    keyless = CliRunner().invoke(main, ["person", "link", "x@mail.example"],
                                 env={"AGENDA_DATABASE_URL": database_url,
                                      "AGENDA_SECRET_KEY": None})
    assert keyless.exit_code != 0 and "AGENDA_SECRET_KEY" in keyless.output


def test_without_an_smtp_url_the_worker_writes_mail_to_the_log(database_url, delivered,
                                                               caplog):
    session, _made, _event, _member, delivery = delivered
    with caplog.at_level("INFO", logger="agenda.mail"):
        result = _run(database_url, "worker", "--once")
    assert "mailed 2" in result.output
    assert "W***@mail.example" in caplog.text and "Wait.Ing@mail.example" not in caplog.text
    assert {m.status for m in _mails(session, delivery)} == {"sent"}


def test_an_unreachable_port_is_reported(database_url, delivered):
    result = _run(database_url, "worker", "--once",
                  smtp_url=f"smtp://127.0.0.1:{free_port()}")
    assert result.exit_code == 1

"""The outbox: mails queued in the same transaction as what they are about, sent afterwards.

A mail is `pending` until a sender claims it. Claiming is one conditional
UPDATE (status still queued, `attempts` still what the sender saw): two senders
(the delivering request and the worker, or two workers) never both send a mail.
Each mail is claimed, sent and recorded in its own short transaction, so on
PostgreSQL the claimed row stays locked only while its one mail is on the wire,
and a sender that dies mid-send rolls its claim back: the mail is sent again
later (at least once, never silently lost).

After a mail went out (or was given up) its address is no longer kept: the
outbox row holds `REDACTED`, and for a waiting-ticket mail the tickets it was
about keep only the keyed hash of the buyer's address (spec: "the address
itself is kept only until that mail went out").

States: `pending` -> `sent`; a failed try -> `failed` (retried with backoff) ->
`sent`, or `dead` after a permanent refusal or MAX_ATTEMPTS tries; `cancelled`
when the mail became pointless (the waiting ticket was linked first).
`sent_at` is when the mail last went to the SMTP server: the send time of a
sent mail, the last try of a failed one (the backoff counts from it).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from sqlalchemy import and_, bindparam, case, func, or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from models.db import insert_rows
from adapters.mail import Mailer, MailError
from models.tickets import OutboxMail, Ticket
from models.unit_of_work import unit_of_work

QUEUED = ("pending", "failed")
WAITING = "ticket_waiting"
ADDED = "ticket_added"
REDACTED = "[redacted]"
MAX_ATTEMPTS = 8
# Seconds to wait after the n-th failed try: 1, 2, 4, ... minutes, at most 2 hours.
RETRY_DELAYS = {n: min(60 * 2 ** (n - 1), 7200) for n in range(1, MAX_ATTEMPTS)}


# The statements of each mail sent, built once (a few are sent within each delivery's time).
_outbox, _tickets = OutboxMail.__table__.c, Ticket.__table__.c
# Claiming a mail: conditional, so that of two senders exactly one sends it.
_CLAIM = (update(OutboxMail.__table__)
          .where(_outbox.id == bindparam("mail_id"), _outbox.status.in_(QUEUED),
                 _outbox.attempts == bindparam("seen_attempts"))
          .values(attempts=_outbox.attempts + 1, sent_at=bindparam("tried_at"))
          .returning(_outbox.kind, _outbox.to_address, _outbox.subject, _outbox.body,
                     _outbox.ticket_id))
_RECORD = (update(OutboxMail.__table__).where(_outbox.id == bindparam("mail_id"))
           .values(status=bindparam("outcome"), last_error=bindparam("error")))
_RECORD_FORGETTING = _RECORD.values(to_address=REDACTED)
# One waiting mail covers the tickets of one delivery bought with one address; the two
# subqueries run once, then the hash index finds the tickets.
_mail_ticket = Ticket.__table__.alias("mail_ticket")
_about = select(_mail_ticket).where(_mail_ticket.c.id == bindparam("ticket_id"))
_FORGET_BUYER = (
    update(Ticket.__table__)
    .where(_tickets.buyer_email_hash == _about.with_only_columns(
               _mail_ticket.c.buyer_email_hash).scalar_subquery(),
           _tickets.batch_id.is_not_distinct_from(
               _about.with_only_columns(_mail_ticket.c.batch_id).scalar_subquery()),
           _tickets.buyer_email.is_not(None))
    .values(buyer_email=None))


@dataclasses.dataclass
class SendReport:
    """What one run of `send_due` got through."""

    mailed: int = 0
    failed: int = 0
    dead: int = 0
    left: int = 0
    budget_out: bool = False
    # The SMTP server could not be reached: the run stopped, the rest waits.
    unreachable: bool = False


def queue(session: Session, mails: list[dict], *, now: int, batch_id: str | None = None) -> None:
    """Queue mails (`kind`, `to_address`, `subject`, `body`, `ticket_id`) in this transaction,
    as those of delivery `batch_id` when given."""
    if mails:
        session.execute(*insert_rows(session, OutboxMail.__table__, [
            {**mail, "batch_id": batch_id, "status": "pending", "attempts": 0,
             "created_at": now} for mail in mails]))


def _due(now: int):
    """Pending mails, and failed ones whose backoff has passed."""
    delay = case(RETRY_DELAYS, value=OutboxMail.attempts, else_=max(RETRY_DELAYS.values()))
    return or_(OutboxMail.status == "pending",
               and_(OutboxMail.status == "failed", OutboxMail.sent_at + delay <= now))


def _scope(statement, batch_id: str | None):
    if batch_id is None:
        return statement
    # Not through the tickets: joined, the planner chose by the outbox's statistics, which a
    # burst of deliveries leaves stale, and counted one delivery's mails left by reading
    # every pending mail once for each of its tickets (0.4 s after four deliveries of 500).
    return statement.where(OutboxMail.batch_id == batch_id)


def send_due(sessions: sessionmaker, *, mailer: Mailer, now: int, batch_id: str | None = None,
             budget: float | None = None, limit: int | None = None,
             clock: Callable[[], float] = time.monotonic) -> SendReport:
    """Send the due mails (of one delivery when `batch_id` is given), oldest first.

    Stops when `budget` seconds are used up (`budget_out`), or when the SMTP server
    cannot be reached (`unreachable`). Each mail is its own transaction (module doc).
    """
    started = clock()
    report = SendReport()
    # One connection for the run; each mail is a step committed as it is sent.
    with unit_of_work(sessions) as unit:
        session = unit.session
        todo = session.execute(_scope(
            select(OutboxMail.id, OutboxMail.attempts).where(_due(now)), batch_id)
            .order_by(OutboxMail.id).limit(limit)).all()
        unit.commit_step()
        for mail_id, attempts in todo:
            if budget is not None and clock() - started >= budget:
                report.budget_out = True
                break
            outcome, unreachable = _send_one(session, mailer=mailer, mail_id=mail_id,
                                             attempts=attempts, now=now)
            unit.commit_step()
            report.mailed += outcome == "sent"
            report.failed += outcome == "failed"
            report.dead += outcome == "dead"
            if unreachable:
                report.unreachable = True
                break
        report.left = session.scalar(_scope(
            select(func.count(OutboxMail.id)).where(OutboxMail.status == "pending"), batch_id))
    return report


def _send_one(session: Session, *, mailer: Mailer, mail_id: int, attempts: int,
              now: int) -> tuple[str, bool]:
    """Claim, send and record one mail, inside the caller's transaction for it.

    Returns what became of it (`sent`, `failed`, `dead`, or `taken` by another
    sender) and whether the SMTP server could not be reached at all.
    """
    claimed = session.execute(_CLAIM, {"mail_id": mail_id, "seen_attempts": attempts,
                                       "tried_at": now}).first()
    if claimed is None:
        return "taken", False  # sent, cancelled or claimed by another sender meanwhile
    try:
        mailer.send(to=claimed.to_address, subject=claimed.subject, body=claimed.body)
    except MailError as error:
        given_up = error.permanent or attempts + 1 >= MAX_ATTEMPTS
        _record(session, mail_id, status="dead" if given_up else "failed",
                last_error=str(error)[:500], forget=given_up, kind=claimed.kind,
                ticket_id=claimed.ticket_id)
        return ("dead" if given_up else "failed"), error.connection
    _record(session, mail_id, status="sent", last_error=None, forget=True,
            kind=claimed.kind, ticket_id=claimed.ticket_id)
    return "sent", False


def _record(session: Session, mail_id: int, *, status: str, last_error: str | None,
            forget: bool, kind: str, ticket_id: str | None) -> None:
    """Record what became of a mail; once it is done with, keep its address nowhere."""
    session.execute(_RECORD_FORGETTING if forget else _RECORD,
                    {"mail_id": mail_id, "outcome": status, "error": last_error})
    if forget and kind == WAITING and ticket_id is not None:
        session.execute(_FORGET_BUYER, {"ticket_id": ticket_id})


def cancel_waiting_mails(session: Session, *, ticket_ids: list[str]) -> int:
    """Cancel the queued waiting-ticket mails about these tickets (they were linked first)."""
    if not ticket_ids:
        return 0
    result = session.execute(
        update(OutboxMail)
        .where(OutboxMail.kind == WAITING, OutboxMail.status.in_(QUEUED),
               OutboxMail.ticket_id.in_(ticket_ids))
        .values(status="cancelled", to_address=REDACTED)
        .execution_options(synchronize_session=False))
    return result.rowcount


def queued_for_event(session: Session, event_id: str) -> int:
    """Mails about the event's tickets that still have to go out (pending or to retry)."""
    return session.scalar(
        select(func.count(OutboxMail.id)).join(Ticket, Ticket.id == OutboxMail.ticket_id)
        .where(Ticket.event_id == event_id, OutboxMail.status.in_(QUEUED)))

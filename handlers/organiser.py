"""The organiser endpoints: attendance, external sales, the door, external tickets.

Every answer is about the token's own organisation: private, never cached, and
an event of another organisation is a 404 exactly like a missing one.
"""

from adapters import mail
from edge.context import caller, seconds_since_arrival, service, session, settings, unit
from handlers import envelope
from models import attendance, deliveries, door, events, sales
from models.db import now
from models.tokens import Caller
from openapi.schemas.organiser import (AttendanceSchema, DeliveryResultSchema, ExternalSalesSchema,
                                       ExternalTicketsStatusSchema, ScanResultSchema)

sales_schema = ExternalSalesSchema()
scan_schema = ScanResultSchema()
attendance_schema = AttendanceSchema()
delivery_schema = DeliveryResultSchema()
delivery_status_schema = ExternalTicketsStatusSchema()


def _own_event(id_: str):
    return events.get_own_event(session(), id_, organisation_id=caller().organisation_id)


def get_external_sales(id_: str):
    """The last external sales count reported for one of the organisation's events."""
    report = sales.external_sales(session(), event=_own_event(id_))
    return envelope.private(sales_schema.dump(report))


def report_external_sales(id_: str, body: dict):
    """Report how many tickets the organisation's own shop sold so far."""
    report = sales.report_external_sales(session(), event=_own_event(id_), sold=body["sold"],
                                         now=now())
    return envelope.private(sales_schema.dump(report))


def scan_ticket(body: dict):
    """Validate a ticket code at the door and mark the ticket used."""
    return envelope.private(scan(service().direct, door.within(session()), caller(), body))


def scan(direct, transaction, who: Caller, body: dict) -> dict:
    """The scan of POST /scan's `body` for `who`, as the answer's data: what the handler
    answers, and the door's lane before the framework (edge/door_lane.py)."""
    return scan_schema.dump(door.scan(direct, transaction, organisation_id=who.organisation_id,
                                      scanned=body["code"], event_id=body.get("eventId"),
                                      now=now()))


def get_attendance(id_: str):
    """Attendance counts and audience groups of one of the organisation's events."""
    report = attendance.get_attendance(session(), event_key=id_,
                                       organisation_id=caller().organisation_id, now=now())
    return envelope.private(attendance_schema.dump(report))


def get_external_tickets(id_: str):
    """How many delivered tickets are linked, pending or to do, and the last deliveries."""
    status = deliveries.delivery_status(session(), event=_own_event(id_))
    return envelope.private(delivery_status_schema.dump(status))


def deliver_external_tickets(id_: str, body: dict):
    """Deliver an external shop's ticket list; its mails go out within what is left of the
    request's time budget (counted from its arrival: reading and checking 500 items is part
    of the answer's time)."""
    current = settings()
    budget = deliveries.SEND_BUDGET_SECONDS - seconds_since_arrival()
    mailer = mail.mailer_for(current.smtp_url, sender_name=current.provider_name,
                             sender_address=current.contact,
                             timeout=max(deliveries.SEND_BUDGET_SECONDS, 1.0))
    delivery = deliveries.deliver_and_send(
        unit(), organisation_id=caller().organisation_id, event_key=id_,
        source=body.get("source", "other"), items=body["items"], invite=body.get("invite", True),
        secret_key=current.secret_key, site_url=current.site_url, mailer=mailer, budget=budget,
        now=now())
    return envelope.private(delivery_schema.dump(delivery))

"""Tickets: sold through the service or delivered from an external shop, scanned at the door.

One table holds both, so a delivered ticket scans like any other. A delivered
ticket waits for its buyer (`person_id` null) until a member with the buyer's
address signs in; the address itself is kept only until the waiting-ticket mail
went out, then only its keyed hash (`buyer_email_hash`).
"""

from __future__ import annotations

from sqlalchemy import (Boolean, Float, ForeignKey, Index, Integer, String, Text,
                        UniqueConstraint, select)
from sqlalchemy.orm import Mapped, Session, mapped_column

from models.db import Base, Timestamp
from models.errors import NotFound
from models.events import Event

TICKET_STATES = ("valid", "used", "void")
# Where a ticket was sold: the service itself, or one of the external shops.
SOURCES = ("service", "eventbrite", "ticketmaster", "paylogic", "weeztix", "other")
EXTERNAL_SOURCES = SOURCES[1:]


class Ticket(Base):
    """A ticket for one event; `code` is its barcode, unique within the event."""

    __tablename__ = "tickets"
    __table_args__ = (
        UniqueConstraint("event_id", "code", name="uq_tickets_event_code"),
        Index("ix_tickets_code", "code"),
        Index("ix_tickets_person", "person_id", "event_id"),
        Index("ix_tickets_buyer_email_hash", "buyer_email_hash"),
        Index("ix_tickets_batch", "batch_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    event_id: Mapped[str] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"))
    code: Mapped[str] = mapped_column(String(64))
    person_id: Mapped[str | None] = mapped_column(ForeignKey("people.id"), nullable=True)
    type: Mapped[str] = mapped_column(String(80), default="Regular")
    holder: Mapped[str] = mapped_column(String(120), default="")
    price: Mapped[float | None] = mapped_column(Float, nullable=True)
    source: Mapped[str] = mapped_column(String(20), default="service")
    status: Mapped[str] = mapped_column(String(10), default="valid")
    scanned_at: Mapped[int | None] = mapped_column(Timestamp, nullable=True)
    created_at: Mapped[int] = mapped_column(Timestamp)
    # Delivered tickets only: the delivery, and the buyer until the ticket is linked.
    batch_id: Mapped[str | None] = mapped_column(ForeignKey("delivery_batches.id"),
                                                 nullable=True)
    buyer_email: Mapped[str | None] = mapped_column(String(254), nullable=True)
    buyer_email_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    invite: Mapped[bool] = mapped_column(Boolean, default=True)
    linked_at: Mapped[int | None] = mapped_column(Timestamp, nullable=True)


class DeliveryBatch(Base):
    """One delivery of an external shop's ticket list."""

    __tablename__ = "delivery_batches"
    __table_args__ = (Index("ix_delivery_batches_event", "event_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    event_id: Mapped[str] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"))
    source: Mapped[str] = mapped_column(String(20))
    via: Mapped[str] = mapped_column(String(20), default="api")
    received: Mapped[int] = mapped_column(Integer, default=0)
    added: Mapped[int] = mapped_column(Integer, default=0)
    duplicates: Mapped[int] = mapped_column(Integer, default=0)
    refused: Mapped[int] = mapped_column(Integer, default=0)
    linked: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[int] = mapped_column(Timestamp)


class ExternalSales(Base):
    """The last count an organisation reported for its own shop's sales of an event."""

    __tablename__ = "external_sales"

    event_id: Mapped[str] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"),
                                          primary_key=True)
    sold: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[int] = mapped_column(Timestamp)


class OutboxMail(Base):
    """A mail to send, queued in the same transaction as what it is about."""

    __tablename__ = "outbox"
    __table_args__ = (Index("ix_outbox_status", "status", "id"),
                      Index("ix_outbox_batch", "batch_id", "status"),
                      # Deleting a ticket deletes its mails.
                      Index("ix_outbox_ticket", "ticket_id"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(30))
    to_address: Mapped[str] = mapped_column(String(254))
    subject: Mapped[str] = mapped_column(String(300))
    body: Mapped[str] = mapped_column(Text)
    ticket_id: Mapped[str | None] = mapped_column(ForeignKey("tickets.id", ondelete="CASCADE"),
                                                  nullable=True)
    # The delivery that queued it: its mails are found without a join, whose plan depends on
    # statistics that a burst of deliveries leaves behind (models/outbox.py `_scope`).
    batch_id: Mapped[str | None] = mapped_column(
        ForeignKey("delivery_batches.id", ondelete="CASCADE"), nullable=True)
    status: Mapped[str] = mapped_column(String(10), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(String(500), nullable=True)
    created_at: Mapped[int] = mapped_column(Timestamp)
    sent_at: Mapped[int | None] = mapped_column(Timestamp, nullable=True)


def holders_ticket(session: Session, *, code: str, person_id: str) -> tuple[Ticket, Event]:
    """The person's ticket with this code and its event; `NotFound` for a code that is
    someone else's, waits for its buyer, or does not exist (the three look the same)."""
    if "\x00" in code:
        # No ticket holds a NUL (PostgreSQL cannot even compare one).
        raise NotFound("ticket")
    found = session.execute(
        select(Ticket, Event).join(Event, Event.id == Ticket.event_id)
        .where(Ticket.code == code, Ticket.person_id == person_id)
        .order_by(Event.date.desc(), Ticket.id)
    ).first()
    if found is None:
        raise NotFound("ticket")
    return found.Ticket, found.Event

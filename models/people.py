"""People: members with a profile, their memberships of organisations, their marks.

A person's profile is `public`, `private` or `suspended`; only public profiles
are shown (GET /users/{id}/badges answers the other two like a missing one).
"""

from __future__ import annotations

from sqlalchemy import ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from models.db import Base, Timestamp

VISIBILITIES = ("public", "private", "suspended")
# What each role in an organisation may do (OAuth consent maps roles to scopes).
ROLES = ("owner", "editor", "door", "viewer")
MARKS = ("going", "interested")
# The provinces of the Netherlands and Belgium (the attendance `regions` breakdown).
PROVINCES = (
    "Drenthe", "Flevoland", "Friesland", "Gelderland", "Groningen", "Limburg (NL)",
    "Noord-Brabant", "Noord-Holland", "Overijssel", "Utrecht", "Zeeland", "Zuid-Holland",
    "Antwerpen", "Brussel", "Henegouwen", "Limburg (BE)", "Luik", "Luxemburg", "Namen",
    "Oost-Vlaanderen", "Vlaams-Brabant", "Waals-Brabant", "West-Vlaanderen",
)


class Person(Base):
    """A member of the service; `email_key` is the lower-cased address for sign-in."""

    __tablename__ = "people"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    email: Mapped[str] = mapped_column(String(254))
    email_key: Mapped[str] = mapped_column(String(254), unique=True)
    handle: Mapped[str] = mapped_column(String(40), unique=True)
    name: Mapped[str] = mapped_column(String(120))
    visibility: Mapped[str] = mapped_column(String(10), default="public")
    region: Mapped[str | None] = mapped_column(String(40), nullable=True)
    birth_year: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[int] = mapped_column(Timestamp)
    last_login_at: Mapped[int | None] = mapped_column(Timestamp, nullable=True)
    # An argon2 hash; null for a person who cannot sign in with a password.
    password_hash: Mapped[str | None] = mapped_column(String(200), nullable=True)


class SignInSession(Base):
    """A browser signed in as a person (the hash of its cookie's secret); signing out deletes
    it, so a copy of the cookie stops working too."""

    __tablename__ = "sign_in_sessions"

    secret_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    person_id: Mapped[str] = mapped_column(ForeignKey("people.id", ondelete="CASCADE"),
                                           index=True)
    created_at: Mapped[int] = mapped_column(Timestamp)
    expires_at: Mapped[int] = mapped_column(Timestamp)


class Membership(Base):
    """A person's role in an organisation."""

    __tablename__ = "memberships"

    person_id: Mapped[str] = mapped_column(ForeignKey("people.id"), primary_key=True)
    organisation_id: Mapped[str] = mapped_column(ForeignKey("organisations.id"),
                                                 primary_key=True, index=True)
    role: Mapped[str] = mapped_column(String(10))


class Mark(Base):
    """A person marking an event `going` or `interested`."""

    __tablename__ = "marks"
    __table_args__ = (Index("ix_marks_event_kind", "event_id", "kind"),)

    person_id: Mapped[str] = mapped_column(ForeignKey("people.id"), primary_key=True)
    event_id: Mapped[str] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"),
                                          primary_key=True)
    kind: Mapped[str] = mapped_column(String(12))
    created_at: Mapped[int] = mapped_column(Timestamp)

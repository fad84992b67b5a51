"""Organisations: who publishes events and owns API tokens."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, Integer, String, Text, func, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from models.db import Base, Timestamp, new_id, now
from models.errors import BadRequest, NotFound


class Organisation(Base):
    """An organisation on the agenda; `suspended` ones are refused everywhere."""

    __tablename__ = "organisations"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    bio: Mapped[str] = mapped_column(Text, default="")
    website: Mapped[str] = mapped_column(String(500), default="")
    verified: Mapped[bool] = mapped_column(Boolean, default=False)
    since: Mapped[int] = mapped_column(Integer)
    # A link to the organisation's own ticket shop is what allows the `tickets` scope.
    ticket_shop_url: Mapped[str | None] = mapped_column(String(500), nullable=True)
    suspended: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[int] = mapped_column(Timestamp)


def create_organisation(session: Session, *, name: str, ticket_shop_url: str | None = None,
                        suspended: bool = False, verified: bool = False, bio: str = "",
                        website: str = "", since: int | None = None) -> Organisation:
    """A new organisation; names are unique (case-insensitively)."""
    name = name.strip()
    if not name:
        raise BadRequest([{"name": "name", "in": "body", "message": "must not be empty"}])
    if find_organisation(session, name) is not None:
        raise BadRequest([{"name": "name", "in": "body",
                           "message": f"an organisation named {name!r} exists"}])
    created = now()
    organisation = Organisation(
        id=new_id("org"), name=name, bio=bio, website=website, verified=verified,
        since=since or _year(created), ticket_shop_url=ticket_shop_url,
        suspended=suspended, created_at=created,
    )
    session.add(organisation)
    session.flush()
    return organisation


def find_organisation(session: Session, id_or_name: str) -> Organisation | None:
    """The organisation with this id, or else with this name (case-insensitive)."""
    organisation = session.get(Organisation, id_or_name)
    if organisation is not None:
        return organisation
    return session.scalars(
        select(Organisation).where(func.lower(Organisation.name) == id_or_name.strip().lower())
    ).first()


def get_organisation(session: Session, id_or_name: str) -> Organisation:
    """Like `find_organisation`, but a missing one is a `NotFound`."""
    organisation = find_organisation(session, id_or_name)
    if organisation is None:
        raise NotFound("organisation", id_or_name)
    return organisation


def _year(timestamp: int) -> int:
    return dt.datetime.fromtimestamp(timestamp, dt.timezone.utc).year


def count_events(session: Session, organisation_id: str) -> int:
    """The organisation's approved events on the agenda.

    Events arrive with the catalogue (issue 3); until then an organisation has none.
    """
    return 0

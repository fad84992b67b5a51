"""Venues: where events happen, with their practical profile."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
from typing import Any

from sqlalchemy import (JSON, Float, Index, Integer, Select, String, Text, bindparam, exists,
                        func, select)
from sqlalchemy.orm import Mapped, Session, mapped_column

from adapters.direct import planned_once, session_rows
from models.db import Base, Timestamp
from models.errors import NotFound
from models.paging import (Filters, Page, basis_of, keyset_rows, keyset_statement,
                           position_params, row_version)
from models.text import fold, like_pattern

# The keys of `facts` (decisions.md); an absent key is unknown.
FACT_KEYS = ("capacity", "rooms", "lockers", "cashless", "smoking", "cloakroom", "parking")


class Venue(Base):
    """A venue; `city_key` and `name_key` are folded copies for search."""

    __tablename__ = "venues"
    __table_args__ = (
        Index("ix_venues_name_key_id", "name_key", "id"),
        Index("ix_venues_city_key_name_key", "city_key", "name_key", "id"),
        # A city's name as its venues spell it (the city facet's top 50), from the index.
        Index("ix_venues_city_key_city", "city_key", "city"),
        # Each city's name, country and middle (models/cities.py `_places`), from the index.
        Index("ix_venues_places", "city_key", "country",
              postgresql_include=["city", "lat", "lng"]),
        # The venues of a radius search (models/events.py `_NEAR_VENUES`).
        Index("ix_venues_lat_lng", "lat", "lng"),
    )

    id: Mapped[str] = mapped_column(String(80), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    name_key: Mapped[str] = mapped_column(String(200))
    city: Mapped[str] = mapped_column(String(100))
    city_key: Mapped[str] = mapped_column(String(100))
    country: Mapped[str] = mapped_column(String(2))
    area: Mapped[str] = mapped_column(String(100), default="")
    address: Mapped[str] = mapped_column(String(300), default="")
    website: Mapped[str] = mapped_column(String(500), default="")
    image_url: Mapped[str] = mapped_column(String(500), default="")
    lat: Mapped[float] = mapped_column(Float)
    lng: Mapped[float] = mapped_column(Float)
    tags: Mapped[list] = mapped_column(JSON, default=list)
    rating: Mapped[float] = mapped_column(Float, default=0.0)
    reviews_count: Mapped[int] = mapped_column(Integer, default=0)
    info: Mapped[str] = mapped_column(Text, default="")
    accessibility: Mapped[str] = mapped_column(Text, default="")
    rules: Mapped[list] = mapped_column(JSON, default=list)
    rules_url: Mapped[str] = mapped_column(String(500), default="")
    facts: Mapped[dict] = mapped_column(JSON, default=dict)
    source: Mapped[str] = mapped_column(String(100), default="")
    source_url: Mapped[str] = mapped_column(String(500), default="")
    updated_at: Mapped[int] = mapped_column(Timestamp)

    @property
    def known_facts(self) -> dict:
        """The facts that are known: only the fixed keys, never a null."""
        return known_facts(self.facts)


@dataclasses.dataclass(frozen=True)
class VenueProfile:
    """A venue with the number of its upcoming events (GET /venues/{id}): `venue` is the row
    of its columns (`get_venue`), whose fields read as the venue's own."""

    venue: Any
    upcoming_events: int
    # What it was built from (`venue_basis`, PostgreSQL): kept with its answer (edge/cache.py).
    basis: bytes | None = None

    @property
    def known_facts(self) -> dict:
        return known_facts(self.venue.facts)

    def __getattr__(self, name):
        return getattr(self.venue, name)


def known_facts(facts: dict) -> dict:
    """The facts that are known: only the fixed keys, never a null."""
    return {key: facts[key] for key in FACT_KEYS if facts.get(key) is not None}


@dataclasses.dataclass(frozen=True)
class VenueFilters(Filters):
    """The filters of GET /venues, all ANDed."""

    kind = "venues"

    city: str | None = None
    q: str | None = None
    with_events: bool | None = None


def upcoming(today, span_from=None) -> tuple:
    """Conditions on `Event`: public and from `today` on, running ones too (as GET /events).
    `today` a date, or with `span_from` the bound parameters of a prebuilt statement."""
    # models.events imports this module for its `venue` relationship.
    from models.events import PUBLIC, Event

    if span_from is None:
        span_from = running_since(today)
    return PUBLIC, Event.date >= span_from, Event.last_date >= today


def running_since(today: dt.date) -> dt.date:
    """The first day an event running on `today` can have begun: the span bound lets an index
    on (..., date) start its range near today."""
    from models.events import MAX_SPAN_DAYS

    return today - dt.timedelta(days=MAX_SPAN_DAYS)


def list_venues(session: Session, *, filters: VenueFilters, today: dt.date,
                after: list | None, limit: int) -> Page:
    """Venues matching `filters`, by name (folded) then id, one page: plain rows of a
    statement built once for each shape of the filters (not mapped venues of a query built
    at each request)."""
    params: dict = {}
    if filters.city is not None:
        params["city_key"] = fold(filters.city)
    if filters.q is not None:
        params["name_like"] = like_pattern(fold(filters.q))
    statement = _listed(frozenset(params), filters.with_events, after=after is not None)
    if filters.with_events is not None:
        params |= {"today": today, "span_from": running_since(today)}
    if after is not None:
        params |= position_params(tuple(after))
    return keyset_rows(session, statement, params=params, limit=limit,
                       key_of=lambda venue: (venue.name_key, venue.id))


@functools.cache
def _listed(given: frozenset[str], with_events: bool | None, *, after: bool) -> Select:
    """The venues' columns by the filters `given` (their parameters' names), with or without
    events coming (`with_events`, None: either), in the list's order from `after`."""
    # models.events imports this module for its `venue` relationship.
    from models.events import Event

    query = select(*Venue.__table__.c)
    if "city_key" in given:
        query = query.where(Venue.city_key == bindparam("city_key"))
    if "name_like" in given:
        query = query.where(Venue.name_key.like(bindparam("name_like"), escape="\\"))
    if with_events is not None:
        coming = exists(select(Event.id).where(
            Event.venue_id == Venue.id, *upcoming(bindparam("today"), bindparam("span_from"))))
        query = query.where(coming if with_events else ~coming)
    return keyset_statement(query, [Venue.name_key, Venue.id], after=after)


def get_venue(session: Session, venue_id: str, *, today: dt.date) -> VenueProfile:
    """The venue with this id and its number of upcoming events; `NotFound` otherwise. One
    statement of plain rows, planned once (not the mapped `Venue` and a count of its own:
    ~2 ms of a worker's CPU a request at a million events). On PostgreSQL with its basis."""
    postgres = session.get_bind().dialect.name == "postgresql"
    found = session_rows(session, _detail(postgres=postgres), _detail_params(venue_id, today))
    if not found:
        raise NotFound("venue", venue_id)
    return VenueProfile(venue=found[0], upcoming_events=found[0].upcoming_events,
                        basis=_basis(found[0]) if postgres else None)


def venue_basis(session: Session, venue_id: str, *, today: dt.date) -> bytes | None:
    """What `get_venue` would build the venue's profile from now, as its
    `VenueProfile.basis`: the venue's row version and the number of its upcoming events,
    read by the same statement without the venue's columns (edge/cache.py). When no venue
    has the id, a basis no profile has. None on SQLite (no row versions)."""
    if session.get_bind().dialect.name != "postgresql":
        return None
    found = session_rows(session, _detail(postgres=True, versions=True),
                         _detail_params(venue_id, today))
    return _basis(found[0] if found else None)


def _detail_params(venue_id: str, today: dt.date) -> dict:
    return {"id": venue_id, "today": today, "span_from": running_since(today)}


# A venue's row version (PostgreSQL, `row_version`): with the number of its upcoming
# events, what its profile was built from.
_VERSION = row_version("venues").label("version")


def _basis(row) -> bytes:
    """The basis of a venue's profile: its id, version and upcoming events, or none."""
    return basis_of(None) if row is None else basis_of(row.id, row.version,
                                                        row.upcoming_events)


@functools.cache
def _detail(*, postgres: bool, versions: bool = False) -> Select:
    """A venue's columns (with `versions`, its id alone) and the number of its upcoming events
    (`upcoming`, with the day and the span's first day as parameters), by the venue's id:
    the same plan for any; on PostgreSQL its row's version too."""
    # models.events imports this module for its `venue` relationship.
    from models.events import Event

    coming = select(func.count(Event.id)).where(
        Event.venue_id == Venue.id, *upcoming(bindparam("today"), bindparam("span_from"))
    ).scalar_subquery()
    columns = [Venue.__table__.c.id] if versions else list(Venue.__table__.c)
    return planned_once(select(*columns, *([_VERSION] if postgres else []),
                               coming.label("upcoming_events"))
                        .where(Venue.id == bindparam("id")))

"""Events: the agenda itself.

Copies of venue fields (`city_key`, `lat`, `lng`, the venue name inside
`search_key`) live on the event so that every hot filter of GET /events is one
index range scan in the list's order (`date`, `start`, `id`), and copies of what its
venue's and organisation's references show, so that a list reads no other table.
`models.records` writes the first (and its genres' copies) whenever an event or its
venue changes; database triggers keep the event's copies of its venue and organisation
whoever writes, plain SQL too (migration 0024).
"""

from __future__ import annotations

import datetime as dt

import dataclasses
import functools
import logging
import math
from collections.abc import Callable
from typing import NamedTuple

from sqlalchemy import (JSON, Boolean, Column, ColumnElement, CompoundSelect, Date, Float,
                        ForeignKey, Index, Integer, MetaData, Select, String, Table, Text, and_,
                        bindparam, all_, case, func, lateral, not_, null, or_, select, text,
                        true, type_coerce, union_all)
from sqlalchemy.dialects import postgresql
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Mapped, Session, mapped_column, relationship
from sqlalchemy.types import NullType

from adapters.direct import BINARY_PARAMETERS, PLANNED_ONCE_RUNNER, planned_once, session_rows
from models import words
from models.db import Base, Timestamp, among, arrays_insert
from models.errors import BadRequest, NotFound
from models.paging import (Filters, Page, basis_of, keyset_rows, keyset_statement, keyset_union,
                           position_params, row_version)
from models.organisations import Organisation
from models.text import fold, like_pattern
from models.venues import Venue

log = logging.getLogger("agenda.events")
STATUSES = ("draft", "pending", "approved", "rejected")
# Longest event (end_date - date) the agenda accepts; bounds the scan of GET /events.
MAX_SPAN_DAYS = 31
# The first day a list can start or end on: long before any night out of the agenda, and
# late enough that the date arithmetic of a list (`from` minus MAX_SPAN_DAYS) cannot overflow.
FIRST_DAY = dt.date(1900, 1, 1)
# The columns a facet count reads besides its filter's (PUBLIC, the dates, the city).
COUNTED = ["status", "city_key", "end_date", "last_date"]
# What a radius search's walk of each venue reads besides its keys (`_at_venues`): the
# public condition's organisation and the distance's coordinates.
AT_VENUE = ["organisation_id", "lat", "lng"]
# What a walk of the agenda's order for free text or a radius reads (the public condition,
# the words, the coordinates), carried by its index (migrations 0020, 0023): the walk reads no
# event rows.
IN_ORDER = ["status", "organisation_id", "search_key", "lat", "lng"]


class Event(Base):
    """An event on a date (and up to `end_date`) at a venue, by an organisation."""

    __tablename__ = "events"
    __table_args__ = (
        Index("ix_events_order", "date", "start", "id", postgresql_include=IN_ORDER),
        Index("ix_events_city_order", "city_key", "date", "start", "id"),
        # With what the facet counts of one venue's or organisation's events read
        # (models/facets.py), and a radius search's walk of a venue: read from the index
        # alone, not from thousands of rows.
        Index("ix_events_venue_order", "venue_id", "date", "start", "id",
              postgresql_include=[*COUNTED, *AT_VENUE]),
        Index("ix_events_organisation_order", "organisation_id", "date", "start", "id",
              postgresql_include=COUNTED),
        Index("ix_events_lat_lng", "lat", "lng"),
        Index("ix_events_festival", "festival_key", "season"),
        # Multi-day events only: those still running on a day they did not begin.
        Index("ix_events_running", "date", "start", "id",
              postgresql_where=text("end_date IS NOT NULL"),
              sqlite_where=text("end_date IS NOT NULL")),
    )

    id: Mapped[str] = mapped_column(String(80), primary_key=True)
    slug: Mapped[str] = mapped_column(String(200), unique=True)
    title: Mapped[str] = mapped_column(String(300))
    date: Mapped[dt.date] = mapped_column(Date)
    end_date: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    # end_date or date: the last day the event runs.
    last_date: Mapped[dt.date] = mapped_column(Date)
    start: Mapped[str] = mapped_column(String(5))
    end: Mapped[str] = mapped_column(String(5))
    timezone: Mapped[str] = mapped_column(String(60), default="Europe/Amsterdam")
    status: Mapped[str] = mapped_column(String(10), default="approved")
    cancelled: Mapped[bool] = mapped_column(Boolean, default=False)
    cancel_reason: Mapped[str | None] = mapped_column(String(500), nullable=True)
    postponed_to: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    price: Mapped[float | None] = mapped_column(Float, nullable=True)
    price_max: Mapped[float | None] = mapped_column(Float, nullable=True)
    currency: Mapped[str] = mapped_column(String(3), default="EUR")
    age: Mapped[int] = mapped_column(Integer, default=18)
    ticket_url: Mapped[str | None] = mapped_column(String(500), nullable=True)
    artwork_url: Mapped[str] = mapped_column(String(500), default="")
    venue_id: Mapped[str] = mapped_column(ForeignKey("venues.id"))
    organisation_id: Mapped[str] = mapped_column(ForeignKey("organisations.id"))
    description: Mapped[str] = mapped_column(Text, default="")
    # {stage: [[HH:MM, act], ...]}
    timetable: Mapped[dict] = mapped_column(JSON, default=dict)
    # [{label, image_url, source}]
    maps: Mapped[list] = mapped_column(JSON, default=list)
    rules: Mapped[list] = mapped_column(JSON, default=list)
    dress: Mapped[str | None] = mapped_column(String(300), nullable=True)
    source: Mapped[str] = mapped_column(String(100), default="")
    source_url: Mapped[str] = mapped_column(String(500), default="")
    updated_at: Mapped[int] = mapped_column(Timestamp)
    # Festivals (token prices): the festival across editions, and this edition's year.
    festival_key: Mapped[str | None] = mapped_column(String(100), nullable=True)
    season: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # Tickets sold by an external shop (external sales count, ticket delivery).
    external_ticketing: Mapped[bool] = mapped_column(Boolean, default=False)
    # Copies for the hot filters (see the module docstring).
    city_key: Mapped[str] = mapped_column(String(100))
    lat: Mapped[float] = mapped_column(Float)
    lng: Mapped[float] = mapped_column(Float)
    search_key: Mapped[str] = mapped_column(String(600))
    # The names of its genres in their order, as a list shows them: a copy kept by the
    # triggers of `event_genres` (migration 0022), whoever writes them; None for none.
    # Written by those triggers alone (and the demo data's bulk load): deferred, so that an
    # event loaded or saved here never holds a stale copy.
    listed_genres: Mapped[list[str] | None] = mapped_column(
        postgresql.ARRAY(String(60)).with_variant(JSON(), "sqlite"), nullable=True,
        deferred=True)
    # What its venue's and organisation's references show, as a list shows them: copies kept
    # by triggers whoever writes (migration 0024), set as the event is written and written
    # again as its venue or organisation changes (with its `city_key`, `lat` and `lng`).
    # Deferred like `listed_genres`: an event loaded or saved here never holds a stale copy.
    venue_name: Mapped[str | None] = mapped_column(String(200), nullable=True, deferred=True)
    venue_city: Mapped[str | None] = mapped_column(String(100), nullable=True, deferred=True)
    venue_address: Mapped[str | None] = mapped_column(String(300), nullable=True,
                                                      deferred=True)
    venue_country: Mapped[str | None] = mapped_column(String(2), nullable=True, deferred=True)
    organisation_name: Mapped[str | None] = mapped_column(String(200), nullable=True,
                                                          deferred=True)

    venue: Mapped[Venue] = relationship(lazy="joined", innerjoin=True)
    organisation: Mapped[Organisation] = relationship(lazy="joined", innerjoin=True)
    genres: Mapped[list[EventGenre]] = relationship(
        order_by="EventGenre.position", cascade="all, delete-orphan", lazy="selectin")
    lineup: Mapped[list[EventArtist]] = relationship(
        order_by="EventArtist.position", cascade="all, delete-orphan", lazy="selectin")

    @property
    def genre_names(self) -> list[str]:
        """The event's genres, as the genre list spells them."""
        return [genre.genre for genre in self.genres]


# What makes an event public, on every surface (lists, detail, counts, pages, feeds, MCP):
# approved, and of an organisation that is not suspended. The change feed's triggers
# (migration 0010) and the kept day counts (models/facets.py) write the same rule in SQL.
# NOT EXISTS (an anti-join the planner estimates from the statistics of `suspended`; a
# NOT IN is guessed to keep half the rows, which turned index walks into table scans),
# probing the partial index ix_organisations_suspended: a handful of rows, usually none.
_suspender = Organisation.__table__.alias("suspender")
PUBLIC: ColumnElement[bool] = and_(
    Event.status == "approved",
    ~select(_suspender.c.id).where(_suspender.c.id == Event.organisation_id,
                                   _suspender.c.suspended).correlate(Event.__table__).exists())
# The same rule with the suspended organisations read once for the whole statement (an
# array PostgreSQL computes once, an InitPlan) rather than probed for each row, for a
# statement planned once that tests many rows of short walks: a radius around its few
# venues (`_at_venues`), whose generic plan scanned the organisations' table again for
# each row walked (780 rows for 10 km around Amsterdam at 10k events: 1.8 ms of 2.2), and
# a word's few words (`_by_words`).
# Estimated as keeping most rows (ten values of an unknown array), not from `suspended`'s
# statistics: for walks whose index the venue's key chooses. PostgreSQL only.
_SUSPENDED = func.array(select(_suspender.c.id).where(_suspender.c.suspended).scalar_subquery())
PUBLIC_SUSPENDED_READ_ONCE: ColumnElement[bool] = and_(
    Event.status == "approved", Event.organisation_id != all_(_SUSPENDED))


class EventGenre(Base):
    """A genre of an event; `date`, `start` and `city_key` are copies so that the genre
    filter, alone or with a city, scans in order."""

    __tablename__ = "event_genres"
    __table_args__ = (Index("ix_event_genres_order", "genre", "date", "start", "event_id"),
                      Index("ix_event_genres_city_order", "genre", "city_key", "date", "start",
                            "event_id"))

    event_id: Mapped[str] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"),
                                          primary_key=True)
    genre: Mapped[str] = mapped_column(String(60), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, default=0)
    date: Mapped[dt.date] = mapped_column(Date)
    start: Mapped[str] = mapped_column(String(5))
    city_key: Mapped[str] = mapped_column(String(100))


class EventArtist(Base):
    """An act on an event's bill; `order` in the API is `position` here (from 0)."""

    __tablename__ = "event_artists"
    __table_args__ = (Index("ix_event_artists_artist_order", "artist_id", "date", "event_id"),)

    event_id: Mapped[str] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"),
                                          primary_key=True)
    artist_id: Mapped[str] = mapped_column(ForeignKey("artists.id"), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    position: Mapped[int] = mapped_column(Integer, default=0)
    date: Mapped[dt.date] = mapped_column(Date)


def denormalize(event: Event) -> None:
    """Write the event's copies of its venue and dates (call after any change to either)."""
    venue = event.venue
    event.last_date = event.end_date or event.date
    event.city_key = venue.city_key
    event.lat = venue.lat
    event.lng = venue.lng
    event.search_key = fold(f"{event.title} {venue.name}")
    for genre in event.genres:
        genre.date, genre.start, genre.city_key = event.date, event.start, event.city_key
    for act in event.lineup:
        act.date = event.date


@dataclasses.dataclass(frozen=True)
class EventFilters(Filters):
    """The filters of GET /events (and the MCP search tool), all ANDed."""

    kind = "events"

    date_from: dt.date | None = None
    date_to: dt.date | None = None
    city: str | None = None
    genre: str | None = None
    venue_id: str | None = None
    artist_id: str | None = None
    organisation_id: str | None = None
    q: str | None = None
    has_tickets: bool | None = None
    max_price: float | None = None
    min_price: float | None = None
    lat: float | None = None
    lng: float | None = None
    radius_km: int | None = None
    # Not a parameter of the API: a city's page keeps the events of its own country.
    country: str | None = None
    # Not a filter: the facet counts asked for with the list (models/facets.py), bound to its
    # cursors like the filters.
    facets: tuple[str, ...] | None = None

    @classmethod
    def of(cls, *, date_from: dt.date | str | None = None, date_to: dt.date | str | None = None,
           **others) -> EventFilters:
        """The filters from a caller's arguments by their domain names, the dates as `date`s
        (MCP) or as ISO text (REST's query)."""
        return cls(date_from=_date(date_from), date_to=_date(date_to), **others)

    def check(self) -> None:
        """Refuse combinations no query can answer, naming every bad field."""
        params = self.problems()
        if params:
            raise BadRequest(params)

    def problems(self) -> list[dict]:
        """Every combination no query can answer, and every day before the agenda's first:
        one entry per bad field."""
        params = []
        if (self.lat is None) != (self.lng is None):
            missing = "lng" if self.lng is None else "lat"
            params.append({"name": missing, "in": "query",
                           "message": "lat and lng go together"})
        if self.radius_km is not None and self.lat is None and self.lng is None:
            params.append({"name": "radius_km", "in": "query", "message": "needs lat and lng"})
        for name in ("date_from", "date_to"):
            day = getattr(self, name)
            if day is not None and day < FIRST_DAY:
                params.append({"name": name, "in": "query",
                               "message": f"must not be before {FIRST_DAY}"})
        if self.date_from and self.date_to and self.date_to < self.date_from:
            params.append({"name": "date_to", "in": "query", "message": "is before date_from"})
        if (self.min_price is not None and self.max_price is not None
                and self.min_price > self.max_price):
            params.append({"name": "min_price", "in": "query", "message": "is above max_price"})
        return params


def _date(value: dt.date | str | None) -> dt.date | None:
    return dt.date.fromisoformat(value) if isinstance(value, str) else value


DEFAULT_RADIUS_KM = 25
KM_PER_DEGREE = 111.32


class VenueRef(NamedTuple):
    """The venue of a listed event: the fields of its reference, and its country."""

    id: str
    name: str
    city: str
    address: str
    lat: float
    lng: float
    country: str


class OrganisationRef(NamedTuple):
    """The organisation of a listed event."""

    id: str
    name: str


class EventSummary(NamedTuple):
    """An event as a list shows it: no bill, set times, maps or long texts.

    Lists read these as plain rows (one statement a page, its genres in it on PostgreSQL)
    rather than as `Event` objects: loading mapped objects with their venue,
    organisation and genres was most of the cost of a page. Named tuples, as its venue and
    organisation: made in C, 5-10x faster than frozen dataclasses.
    """

    id: str
    slug: str
    title: str
    date: dt.date
    end_date: dt.date | None
    last_date: dt.date
    start: str
    end: str
    timezone: str
    status: str
    cancelled: bool
    cancel_reason: str | None
    postponed_to: dt.date | None
    price: float | None
    price_max: float | None
    currency: str
    age: int
    ticket_url: str | None
    artwork_url: str
    updated_at: int
    venue: VenueRef
    organisation: OrganisationRef
    genre_names: tuple[str, ...]


class Listed(NamedTuple):
    """An event of a page read with the summaries kept as JSON (`list_events` given a
    `rendering`): the summary's JSON as kept for that rendering (`fragment`), else the
    summary itself, to be rendered (and kept: `keep_summaries`); its id and, on PostgreSQL,
    its row's version (None on SQLite, which keeps none)."""

    id: str
    version: str | None
    fragment: str | None
    summary: EventSummary | None


# Each event's summary as the service last rendered it (its JSON: marshmallow's, by
# openapi/schemas/events.py), with the row version and the rendering (the schema and the
# site it was rendered for) it was made from; PostgreSQL only (migration 0025). A list
# reads the JSON instead of the summary's columns while both are the event's current ones,
# so that a page of events rendered before (by any list that showed them, on any worker or
# host) reads 25 texts, not 25 rows of 30-odd columns each made Python objects, dumped and
# serialized again: a list's miss costs the workers a fifth to a third less (bench/RESULTS.md).
# A change to an event, through the service or plain SQL, and to the copies of its venue,
# organisation and genres that its row carries (triggers), is a new row version: its kept
# JSON is no longer read, and the next list showing it renders and keeps it again. Unlogged:
# a cache, not data (after a crash PostgreSQL empties it; nothing is lost but renderings).
KEPT_SUMMARIES = Table("event_summaries", MetaData(),
                       Column("event_id", String(80), primary_key=True),
                       Column("version", Text, nullable=False),
                       Column("rendering", Text, nullable=False),
                       Column("json", Text, nullable=False))
_kept = KEPT_SUMMARIES.c

# Each word of each event's words (`search_key` split at its spaces) with the event's
# position and public condition's columns, in the agenda's order by word; and every word it
# has held, with a trigram index. PostgreSQL only, written by triggers (migration 0026): a
# free-text list of a word a few words hold walks theirs (`_by_words`).
EVENT_WORDS = Table("event_words", MetaData(), Column("word", String(600)), Column("date", Date),
                    Column("start", String(5)), Column("event_id", String(80)),
                    Column("status", String(10)), Column("organisation_id", String(80)))
VOCABULARY = Table("event_vocabulary", MetaData(), Column("word", String(600)))
_word = EVENT_WORDS.c
# The columns a page reads of an event whose kept JSON it reads (the rest read as NULL):
# the list's position, for the next page's cursor.
_POSITION = ("id", "date", "start")


# Lists read plain rows through the tables: no mapped objects on their path.
_event, _genre, _act = Event.__table__.c, EventGenre.__table__.c, EventArtist.__table__.c
_venue = Venue.__table__.c
_EVENT_FIELDS = list(EventSummary._fields[:-3])
# The fields of its venue's and organisation's references, in their order, as the event
# carries them (its copies: migration 0024).
_VENUE_COLUMNS = [_event.venue_id, _event.venue_name, _event.venue_city, _event.venue_address,
                  _event.lat, _event.lng, _event.venue_country]
_ORGANISATION_COLUMNS = [_event.organisation_id, _event.organisation_name]
_EVENT_COLUMNS = (*(_event[name] for name in _EVENT_FIELDS), *_VENUE_COLUMNS,
                  *_ORGANISATION_COLUMNS, _event.listed_genres)
_VENUE_AT = len(_EVENT_FIELDS)
_ORGANISATION_AT = _VENUE_AT + len(VenueRef._fields)
_GENRES_AT = _ORGANISATION_AT + len(OrganisationRef._fields)


def _genre_names(column, postgres: bool):
    """An event's copy of its genres' names (`Event.listed_genres`) as `genre_names`. On
    PostgreSQL typed as nothing: psycopg answers a list already, and a column with a result
    processor (SQLAlchemy's ARRAY has one) would send every value of every row through
    Python. SQLite's is JSON text, read by its type."""
    return (type_coerce(column, NullType()) if postgres else column).label("genre_names")


def _summaries(page, postgres: bool, kept: bool = False) -> Select:
    """The columns of `EventSummary` of the rows of `page` (a subquery of events' columns in
    the list's order), in order, and on PostgreSQL each row's `version`. Each event carries
    its venue's and organisation's references and its genres' names (copies kept by
    triggers): a page reads no other table but, with `kept` (PostgreSQL), the summaries
    kept as JSON (`KEPT_SUMMARIES`) for the row's version and the `rendering` given, as
    `fragment`; the summary's columns of a row that has one are read as NULL but its
    position. (Each row's venue read by its key, and the organisations, were a quarter of a
    page's time in PostgreSQL at a million events; migration 0024.)"""
    columns = [page.c[column.name] for column in _EVENT_COLUMNS[:_GENRES_AT]]
    genres = _genre_names(page.c.listed_genres, postgres)
    order = (page.c.date, page.c.start, page.c.id)
    if not kept:
        return select(*columns, genres, *([page.c.version] if postgres else [])).order_by(*order)
    # Each row's kept JSON looked up by its event's id, row by row (through the id's hash,
    # migration 0030: two pages a row, five through the key): a lateral subquery with a
    # LIMIT is not flattened into a join, so that its plan, made once (`planned_once`), is
    # the id's lookup whatever the table held when it was made (a join planned on an empty
    # table read the whole table for every page once it had filled: 9 ms of PostgreSQL's
    # CPU a request at 100k events, where a lookup costs ~5 µs a row).
    found = lateral(select(_kept.json).where(
        _kept.event_id == page.c.id, _kept.version == page.c.version,
        _kept.rendering == bindparam("rendering")).limit(1)).alias("kept")
    unread = found.c.json.is_(None)
    return (select(*(column if column.name in _POSITION
                     else case((unread, column)).label(column.name) for column in columns),
                   type_coerce(case((unread, page.c.listed_genres)), NullType()
                               ).label("genre_names"),
                   page.c.version, found.c.json.label("fragment"))
            .select_from(page.outerjoin(found, true()))
            .order_by(*order))


# An event's row version (PostgreSQL, `row_version`): a page's summaries are its rows'
# columns alone, so the same rows at the same versions are the same page (`list_basis`).
_VERSION = row_version("events").label("version")


def list_events(session: Session, *, filters: EventFilters, today: dt.date,
                after: list | None, limit: int, rendering: str | None = None) -> Page:
    """Approved events matching `filters`, soonest first (date, start, id), one page of
    `EventSummary`.

    The list is two ranges, one after the other: events that began before `from` and
    still run (multi-day ones only, found through the small partial index
    `ix_events_running`), then events from `from` on, each an index scan in the list's
    order, limited to the page, in one statement (`keyset_union`: one round trip). (One
    range from `from` minus the longest span would read every event of that month
    before reaching today's: thousands of rows at a million events.) The statement is
    built once for each shape of the filters (which are given, not their values) and
    takes the values as parameters; each event's genres come with it (`listed_genres`). A
    radius search first reads the venues within it (`NEAR_VENUES_AT_MOST`); a word alone
    is first told rare or common by its share (models/words.py).

    With a `rendering` (the summaries' schema and site, openapi/schemas/events.py), the
    items are `Listed`: on PostgreSQL each event's summary as kept in that rendering, if it
    is kept for the event's row as it is (`KEPT_SUMMARIES`), else its summary to render.
    """
    postgres = session.get_bind().dialect.name == "postgresql"
    kept = postgres and rendering is not None
    page = _page(session, filters, today, after, limit, postgres=postgres, versions=False,
                 rendering=rendering if kept else None)
    if rendering is None:
        items = [_summary(row) for row in page.items]
    elif kept:
        items = [Listed(row.id, row.version, row.fragment,
                        None if row.fragment is not None else _summary(row))
                 for row in page.items]
    else:
        items = [Listed(row.id, None, None, _summary(row)) for row in page.items]
    return Page(items=items, next_key=page.next_key, basis=_basis(page) if postgres else None)


def keep_summaries(session: Session, rendering: str, rendered: list[tuple[str, str, str]]
                   ) -> None:
    """Keep the summaries a page rendered, each (event id, row version, JSON), for the
    lists that show those events next (`list_events` with the same `rendering`). On the
    public answers' sessions only (PostgreSQL's, which run such a statement in a
    transaction of its own: `PLANNED_ONCE_RUNNER`); elsewhere nothing is kept. Two workers
    rendering the same event keep the same JSON; one kept for a version gone already is
    never read. A failure is logged: the answer does not depend on it."""
    if not rendered or session.info.get(PLANNED_ONCE_RUNNER) is None:
        return
    ids, versions, texts = (list(values) for values in zip(*rendered))
    try:
        session_rows(session, _KEEP, {"event_id_values": ids, "version_values": versions,
                                      "rendering_values": [rendering] * len(ids),
                                      "json_values": texts})
    except DBAPIError as error:
        log.warning("summaries not kept: %s", error.__class__.__name__)


_KEPT_ROWS = arrays_insert(KEPT_SUMMARIES, ("event_id", "version", "rendering", "json"))
# A row kept already as it is (two workers rendering the same event) is not written again.
_KEEP = planned_once(_KEPT_ROWS.on_conflict_do_update(
    index_elements=["event_id"], set_={"version": _KEPT_ROWS.excluded.version,
                                       "rendering": _KEPT_ROWS.excluded.rendering,
                                       "json": _KEPT_ROWS.excluded.json},
    where=or_(_kept.version != _KEPT_ROWS.excluded.version,
              _kept.rendering != _KEPT_ROWS.excluded.rendering))
).execution_options(**{BINARY_PARAMETERS: True})


def list_basis(session: Session, *, filters: EventFilters, today: dt.date,
               after: list | None, limit: int) -> bytes | None:
    """What `list_events` would build its page from now, as its `Page.basis`: the page's
    events, each by its id and version (`_VERSION`), and whether a page follows. The same
    statement reading those columns only: on PostgreSQL, so that a page kept while the
    catalogue changed (elsewhere) is known to be built the same again without reading and
    rendering its events (edge/cache.py). None on SQLite (no row versions)."""
    if session.get_bind().dialect.name != "postgresql":
        return None
    return _basis(_page(session, filters, today, after, limit, postgres=True, versions=True))


def _page(session: Session, filters: EventFilters, today: dt.date, after: list | None,
          limit: int, *, postgres: bool, versions: bool, rendering: str | None = None) -> Page:
    """The rows of the page (`_statement`'s) of `list_events`, with `versions` theirs alone,
    with a `rendering` their summaries kept in it."""
    filters.check()
    given = shape(filters)[0]
    params = _params(filters, today)
    if rendering is not None:
        params["rendering"] = rendering
    if "lat" in given:
        near = [venue.id for venue in session_rows(session, _NEAR_VENUES, params)]
        if len(near) <= NEAR_VENUES_AT_MOST:
            given |= {"near_venues"}
            params["near_venues"] = near
    if after is not None:
        params |= position_params((dt.date.fromisoformat(after[0]), after[1], after[2]))
    if postgres and _by_words_alone(given, filters.has_tickets, params["word"]):
        held = [row.word for row in session_rows(session, _HOLDING_WORDS, params)]
        if len(held) <= HOLDING_WORDS_AT_MOST:
            given |= {"holding_words"}
            params["holding_words"] = held
    if (postgres and _word_alone(given) and "holding_words" not in given
            and words.rare(session, params["word"], limit + 1)):
        given |= {"rare_word"}
    return keyset_rows(session, _statement(given, filters.has_tickets, after is not None,
                                           postgres, versions, rendering is not None),
                       params=params, limit=limit,
                       key_of=lambda row: (row.date, row.start, row.id))


def _basis(page: Page) -> bytes:
    """The basis of a page of rows with their `version`: each row's id and version in order,
    and whether a page follows."""
    return basis_of(page.next_key is not None,
                    *(f"{row.id}\x1e{row.version}" for row in page.items))


# A radius search around at most this many venues also names them (`near_venues`): from a
# box and a distance the planner cannot tell how few events match (a 2 km circle at a
# million events walked 100k events of the list's order to find a page); from their venues'
# ids it can, and reads those venues' events instead when they are few. The venues are read
# through their box's index whatever its values: planned once. Around more venues, walking
# the agenda's order from its index alone (it carries the coordinates: migration 0023) costs
# less than walking each venue's events for a page: at a million events (3,000 venues) the
# two crossed at 25-35 venues (below it, 1 venue: 0.2 ms named, 20 walking the order; above
# it, 65 venues: 4.7 against 2.1 for a page of 100; bench/RESULTS.md).
NEAR_VENUES_AT_MOST = 32
_NEAR_VENUES = planned_once(select(_venue.id).where(
    _venue.lat.between(bindparam("lat_min"), bindparam("lat_max")),
    _venue.lng.between(bindparam("lng_min"), bindparam("lng_max")),
    func.haversine_km(bindparam("lat", type_=Float), bindparam("lng", type_=Float),
                      _venue.lat, _venue.lng) <= bindparam("radius_km", type_=Float),
).limit(NEAR_VENUES_AT_MOST + 1))
# A free-text list of a word that at most this many words of the events hold (the word
# itself, its compounds: `VOCABULARY`) names them (`holding_words`) and walks each one's
# events in the agenda's order, a page at most (`_by_words`): ~0.5 ms at a million events
# whatever the word's share, where walking the agenda's order or reading every event holding
# it through the trigram index took 1-114 ms near their crossing (bench/RESULTS.md). A word
# more words hold (a syllable) is read the way its share makes cheaper (models/words.py):
# at a million events the two crossed between 16 and 24 words (16: 2.2 ms by the words
# against 6.5; 24: 2.2-2.5 against 1.4-1.6, a page of 25).
HOLDING_WORDS_AT_MOST = 16
_HOLDING_WORDS = planned_once(select(VOCABULARY.c.word).where(
    VOCABULARY.c.word.like(bindparam("search"), escape="\\")
).limit(HOLDING_WORDS_AT_MOST + 1))
# The filters whose presence changes a list's statements (with has_tickets' value, and
# min_price above 0); `lat` stands for the radius search.
_SHAPING = ("date_to", "city", "country", "genre", "venue_id", "artist_id", "organisation_id",
            "q", "max_price", "lat")


def _params(filters: EventFilters, today: dt.date) -> dict:
    """The values of the list's statements' parameters (those of absent filters unused)."""
    date_from = filters.date_from or today
    word = filters.q and fold(filters.q)
    params = {
        "date_from": date_from,
        "running_from": max(date_from, dt.date.min + dt.timedelta(days=MAX_SPAN_DAYS))
        - dt.timedelta(days=MAX_SPAN_DAYS),
        "date_to": filters.date_to, "today": today,
        "city_key": filters.city and fold(filters.city), "country": filters.country,
        "genre": filters.genre, "venue_id": filters.venue_id, "artist_id": filters.artist_id,
        "organisation_id": filters.organisation_id,
        "word": word, "search": filters.q and like_pattern(word),
        "max_price": filters.max_price, "min_price": filters.min_price,
    }
    if filters.lat is not None and filters.lng is not None:
        radius_km = filters.radius_km or DEFAULT_RADIUS_KM
        dlat = radius_km / KM_PER_DEGREE
        dlng = radius_km / (KM_PER_DEGREE * max(math.cos(math.radians(filters.lat)), 0.01))
        params |= {"lat": filters.lat, "lng": filters.lng, "radius_km": radius_km,
                   "lat_min": filters.lat - dlat, "lat_max": filters.lat + dlat,
                   "lng_min": filters.lng - dlng, "lng_max": filters.lng + dlng}
    return params


@functools.lru_cache(maxsize=256)
def _statement(given: frozenset[str], has_tickets: bool | None, after: bool,
               postgres: bool = False, versions: bool = False, kept: bool = False) -> Select:
    """The statement of a list with these filters: its two ranges (see `list_events`) in
    one; with `versions` (PostgreSQL), each row's position and version only (`list_basis`).
    On PostgreSQL a radius search's part from `from` on goes without the box: around its
    few venues venue by venue (`_at_venues`), around more in the agenda's order with the
    distance alone. (From the box, the planner cannot tell how many events it holds, and
    read and sorted all of them: 0.5-0.6 s for 25 km around Groningen or 5 km around Gent
    at a million events, 7 and 28 ms in the agenda's order.)"""
    if versions:
        rows = select(_event.date, _event.start, _event.id, _VERSION)
    else:
        rows = select(*_EVENT_COLUMNS, *([_VERSION] if postgres else []))
    running = _running(rows, given, has_tickets, postgres).where(
        _event.end_date.is_not(None), _event.date < bindparam("date_from"),
        _event.date >= bindparam("running_from"), _event.last_date >= bindparam("date_from"))
    if postgres and "near_venues" in given:
        started = _at_venues(rows, given, has_tickets, after)
    else:
        started = _started(rows, given, has_tickets, after, postgres)
        if "date_to" in given:
            running = running.where(_event.date <= bindparam("date_to"))
    page = keyset_union((keyset_statement(running, [_event.date, _event.start, _event.id],
                                          after=after), started),
                        ("date", "start", "id")).subquery()
    return _planned(select(page).order_by(page.c.date, page.c.start, page.c.id) if versions
                    else _summaries(page, postgres, kept), given)


def _started(rows: Select, given: frozenset[str], has_tickets: bool | None, after: bool,
             postgres: bool) -> Select:
    """The list's range from `from` on, a page at most, in the list's order: the walk of the
    agenda's order or of a filter's own ordered index (the genre's, the artist's)."""
    if postgres and "holding_words" in given:
        return _by_words(rows, given, after)
    word_alone = postgres and _word_alone(given)
    radius_in_order = postgres and "lat" in given and not given & (_OWN_WALKS - {"lat"})
    if postgres and "lat" in given:
        started = _narrowed(rows, given - {"lat"}, has_tickets).where(_within_radius())
    elif word_alone and "rare_word" not in given:
        started = _narrowed(rows, given - {"q"}, has_tickets).where(_holds_word())
    else:
        started = _narrowed(rows, given, has_tickets)
    order = [_event.date, _event.start, _event.id]
    if "genre" in given:
        # The genre's ordered index walked; with a city, the genre's events in that city
        # (each genre row carries its event's city: `ix_event_genres_city_order`), so a
        # page of a city's events of a genre reads those events only (at a million,
        # `city=Liège&genre=Latin&limit=100` walked 4,435 of the city's events, probing
        # each one's genres: 26 ms warm; the genre in the city, 1.8).
        walked = [_genre.event_id == _event.id, _genre.genre == bindparam("genre")]
        if "city" in given:
            walked.append(_genre.city_key == bindparam("city_key"))
        started = started.join(EventGenre.__table__, and_(*walked))
        order = [_genre.date, _genre.start, _genre.event_id]
    if "artist_id" in given:
        started = started.join(EventArtist.__table__, and_(
            _act.event_id == _event.id, _act.artist_id == bindparam("artist_id")))
        if order[0] is _event.date:
            # The artist's ordered index (artist, date) walked by its copy of the date, each
            # day's events sorted as they come (an incremental sort): the first page's
            # events only, not all of the artist's (594 events read and sorted for a page
            # of 11 at a million events: 4 ms; walked, 0.35).
            order = [_act.date, _event.start, _event.id]
    # The event's own date bounded too where the walk is the genre's or the artist's (its
    # copy): the other filters' indexes (a city's: city, date) then read the window, not
    # every day of it.
    dated = [order[0]] if order[0] is _event.date else [order[0], _event.date]
    started = started.where(*(column >= bindparam("date_from") for column in dated))
    if "date_to" in given:
        started = started.where(*(column <= bindparam("date_to") for column in dated))
    if word_alone or radius_in_order:
        # Free text alone, by the word's share (`rare_word`, models/words.py): a common
        # word walks the agenda's order testing each event's words, positions from the
        # order's index alone (`IN_ORDER`); a rare word's events are read through the
        # trigram index first (apart, so that the plan made once for any word keeps to it),
        # then sorted. A radius around more venues than it names walks that order testing
        # each event's distance, from the index alone too. Then the page's events by id.
        positions = started.with_only_columns(*order)
        if "rare_word" in given:
            fenced = positions.cte("worded").prefix_with("MATERIALIZED")
            positions, order = select(fenced), [fenced.c.date, fenced.c.start, fenced.c.id]
        return _by_position(keyset_statement(positions, order, after=after), rows)
    return keyset_statement(started, order, after=after)


def _running(rows: Select, given: frozenset[str], has_tickets: bool | None,
             postgres: bool) -> Select:
    """`rows` narrowed by every filter for the list's range of events still running (its
    dates added by the caller). That range reads the few multi-day events across `from`
    (`ix_events_running`) whatever the word: on PostgreSQL it tests a word by its position
    (`strpos`, the same test as LIKE's escaped pattern), which the planner does not estimate
    against search_key's 3,000-entry histogram as it does a LIKE (migration 0020): a
    word's planning at a million events took 1.7-2.8 ms, 1.2 without that estimate."""
    if not (postgres and "q" in given):
        return _billed(_narrowed(rows, given, has_tickets), given)
    return _billed(_narrowed(rows, given - {"q"}, has_tickets), given).where(
        _holds_word())


def _holds_word() -> ColumnElement[bool]:
    """PostgreSQL: the event's words hold `word`, tested by its position (`strpos`, the same
    test as LIKE's escaped pattern), which no trigram index serves."""
    return func.strpos(_event.search_key, bindparam("word")) > 0


def _planned(statement: Select, given: frozenset[str]) -> Select:
    """A list's `statement` marked to be planned once, unless its filters' values decide
    its plan: a word with a filter that walks an index of its own (`_OWN_WALKS`), where the
    word's share decides whether that walk or the trigram index reads fewer rows.

    Any other list walks the same indexes whatever its values: it is planned once
    (`planned_once`). So is a price (it has no index), a radius around more venues (walked
    in the agenda's order with the distance), now that requests start no parallel scans
    (models/db.py), a radius around its few venues (`near_venues`: each venue's walk,
    whatever their number, once the suspended organisations are read once rather than for
    each row walked, `PUBLIC_SUSPENDED_READ_ONCE`), and a word alone, walked word by word
    among the few words that hold it (`holding_words`) or read the way its share chose
    (`rare_word`, models/words.py): planning them at each run took as
    long as running them or longer (a price at a million events: 1.0-1.7 ms; a radius's
    few venues: 0.6-1.3 at 10k to 1M; a word, ~1.5)."""
    return statement if "q" in given and not _word_alone(given) else planned_once(statement)


# The filters whose own ordered index a list walks rather than the agenda's order.
_OWN_WALKS = frozenset({"city", "genre", "venue_id", "artist_id", "organisation_id", "lat"})


def _word_alone(given: frozenset[str]) -> bool:
    """Free text without a filter that walks an index of its own: the agenda's order is
    walked for it, or its word's events read through the trigram index (`rare_word`)."""
    return "q" in given and not given & _OWN_WALKS


def _by_words_alone(given: frozenset[str], has_tickets: bool | None, word: str | None) -> bool:
    """A word alone (with dates at most), one word (no space): the events that hold it are
    those of the words that hold it (`_by_words`)."""
    return bool(word) and " " not in word and has_tickets is None and given - {"date_to"} == {"q"}


def _by_words(rows: Select, given: frozenset[str], after: bool) -> Select:
    """The part from `from` on of a list of a word that a few words hold (`holding_words`),
    read word by word (`_by_each`): each word's events' positions through its ordered index
    (`EVENT_WORDS`, which carries the public condition's columns). PostgreSQL only."""
    def walk(word: ColumnElement) -> tuple[Select, list]:
        order = [_word.date, _word.start, _word.event_id]
        return select(*order).where(_word.word == word, _word.status == "approved",
                                    _word.organisation_id != all_(_SUSPENDED)), order
    return _by_each("holding_words", walk, given, after, rows, repeats=True)


def _by_each(name: str, walk: Callable[[ColumnElement], tuple[Select, list]],
             given: frozenset[str], after: bool, rows: Select, *, repeats: bool = False
             ) -> Select:
    """The columns of `rows` of a page read value by value of the list parameter `name`:
    each value's positions (date, start, id) from `walk` (its statement and order: a walk
    of an ordered index), within the list's dates, at most a page of them after the
    position, then the events of the page of all by id; each once where an event may come
    from two values (`repeats`: a word's words; a venue's events are its own, and the
    page's sort stays bounded, ~0.1 ms less for 10-35 venues at 100k). With the values as
    one list, the planner cannot tell how many events they hold, and reads and sorts them
    all. PostgreSQL only (`unnest` and `LATERAL`)."""
    each = func.unnest(bindparam(name, type_=postgresql.ARRAY(String()))
                       ).table_valued("value").render_derived("each")
    walked, order = walk(each.c.value)
    walked = walked.where(order[0] >= bindparam("date_from"))
    if "date_to" in given:
        walked = walked.where(order[0] <= bindparam("date_to"))
    date, start, id_ = keyset_statement(walked, order, after=after).lateral("walked").c
    positions = (select(date, start, id_.label("id")).select_from(each)
                 .join(date.table, true()).order_by(date, start, id_)
                 .limit(bindparam("count", type_=Integer)))
    return _by_position(positions.distinct() if repeats else positions, rows)


def _by_position(positions: Select, rows: Select) -> Select:
    """The columns of `rows` of the events of a page whose `positions` (date, start, id, in
    order) a walk of an index alone yields, read by id: the walk reads no event rows."""
    page = positions.subquery("positions")
    return select(*rows.selected_columns).join_from(page, Event.__table__,
                                                    _event.id == page.c.id)


def _at_venues(rows: Select, given: frozenset[str], has_tickets: bool | None,
               after: bool) -> Select:
    """The part from `from` on of a radius search around its few venues (`near_venues`),
    read venue by venue (`_by_each`): each venue's positions through its ordered index
    (venue, date, start, id, which carries the public condition's and the distance's
    columns: migration 0019). As one list, 44 venues within 2 km of a city centre held
    11,898 upcoming events at a million, read and sorted in full (126 ms, 11,420 pages from
    disk) for a page of 10; venue by venue, 44 short index walks, and a page of events read.
    PostgreSQL only."""
    # The distance without the box: the box's index would draw the planner away from the
    # venue's ordered one (it read 16,229 box entries for each venue, then sorted).
    one = given - {"near_venues", "lat"}
    order = [_event.date, _event.start, _event.id]

    def walk(venue: ColumnElement) -> tuple[Select, list]:
        return _billed(_narrowed(rows.with_only_columns(*order), one, has_tickets,
                                 PUBLIC_SUSPENDED_READ_ONCE), one).where(
            _event.venue_id == venue, _within_radius()), order
    return _by_each("near_venues", walk, given, after, rows)


def shape(filters: EventFilters) -> tuple[frozenset[str], bool | None]:
    """What a statement over these filters depends on: which are given (not their values),
    and has_tickets' value. Statements are built once a shape and run with `params`."""
    given = frozenset(name for name in _SHAPING if getattr(filters, name) is not None)
    if filters.min_price:
        given |= {"min_price"}
    return given, filters.has_tickets


def params(filters: EventFilters, today: dt.date) -> dict:
    """The values of the parameters of the statements over these filters."""
    return _params(filters, today)


@functools.lru_cache(maxsize=256)
def matching(shaped: tuple[frozenset[str], bool | None], columns: tuple,
             part: str = "all") -> Select | CompoundSelect:
    """`columns` of every public event the list of filters of this `shape` holds, unordered
    (facet counts); run with `params`. `part`: "started" (from `from` on), "running" (those
    that began before `from` and still run), "all" (the two, as one UNION ALL: each an
    index range of its own; one OR of the two reads a bitmap of both and then the table),
    or "multi_day" (every multi-day event still running on `from`)."""
    if part == "all":
        return union_all(matching(shaped, columns, "started"),
                         matching(shaped, columns, "running"))
    given, has_tickets = shaped
    query = _narrowed(select(*columns).select_from(Event.__table__), given, has_tickets)
    running = and_(_event.end_date.is_not(None), _event.date >= bindparam("running_from"),
                   _event.last_date >= bindparam("date_from"))
    if part == "running":
        query = query.where(running, _event.date < bindparam("date_from"))
    elif part == "multi_day":
        query = query.where(running)
    else:
        query = query.where(_event.date >= bindparam("date_from"))
    if "date_to" in given:
        query = query.where(_event.date <= bindparam("date_to"))
    return _billed(query, given)


def _billed(query: Select, given: frozenset[str]) -> Select:
    """`query` narrowed to the events of the genre and with the artist given (as subqueries,
    where the list's part from `from` on walks their ordered indexes instead)."""
    if "genre" in given:
        query = query.where(select(_genre.event_id).where(
            _genre.event_id == _event.id, _genre.genre == bindparam("genre")).exists())
    if "artist_id" in given:
        query = query.where(select(_act.event_id).where(
            _act.event_id == _event.id, _act.artist_id == bindparam("artist_id")).exists())
    return query


def _summary(row) -> EventSummary:
    # The named tuples made from their fields in order, as `_make` does, without the keyword
    # arguments of their constructors (0.6 µs a summary instead of 1.6).
    return _made(EventSummary, (*row[:_VENUE_AT], _made(VenueRef, row[_VENUE_AT:_ORGANISATION_AT]),
                                _made(OrganisationRef, row[_ORGANISATION_AT:_GENRES_AT]),
                                tuple(row[_GENRES_AT] or ())))


_made = tuple.__new__


def _narrowed(query: Select, given: frozenset[str], has_tickets: bool | None,
              public: ColumnElement[bool] = PUBLIC) -> Select:
    """`query` of public events (by `public`, one form of the rule) narrowed by every filter
    but the dates, genre and artist."""
    query = query.where(public)
    if "city" in given:
        query = query.where(_event.city_key == bindparam("city_key"))
    if "country" in given:
        query = query.where(_event.venue_country == bindparam("country"))
    if "venue_id" in given:
        query = query.where(_event.venue_id == bindparam("venue_id"))
    if "organisation_id" in given:
        query = query.where(_event.organisation_id == bindparam("organisation_id"))
    if "q" in given:
        query = query.where(_event.search_key.like(bindparam("search"), escape="\\"))
    if has_tickets is not None:
        sellable = and_(_event.ticket_url.is_not(None), _event.ticket_url != "",
                        _event.cancelled.is_(False), _event.last_date >= bindparam("today"))
        query = query.where(sellable if has_tickets else not_(sellable))
    if "max_price" in given:
        query = query.where(_event.price.is_not(None), _event.price <= bindparam("max_price"))
    if "min_price" in given:
        query = query.where(_event.price.is_not(None), _event.price >= bindparam("min_price"))
    if "lat" in given:
        # A bounding box (indexed), then the distance.
        query = query.where(
            _event.lat.between(bindparam("lat_min"), bindparam("lat_max")),
            _event.lng.between(bindparam("lng_min"), bindparam("lng_max")),
            _within_radius())
    if "near_venues" in given:
        query = query.where(among(_event.venue_id, "near_venues"))
    return query


def _within_radius() -> ColumnElement[bool]:
    """The event is within `radius_km` of (`lat`, `lng`)."""
    return func.haversine_km(bindparam("lat", type_=Float), bindparam("lng", type_=Float),
                             _event.lat, _event.lng) <= bindparam("radius_km", type_=Float)


class LineupEntry(NamedTuple):
    """An act on an event's bill, in `EventDetail`."""

    artist_id: str
    name: str
    position: int


# An event as its detail shows it (GET /events/{id}, the MCP tool `get_event`): the fields
# of its summary, then its bill, set times, maps, rules and origin. Read as plain rows like
# a list's summaries (`event_detail`), not as an `Event` with its relationships.
EventDetail = NamedTuple("EventDetail", [
    *EventSummary.__annotations__.items(), ("description", str),
    ("lineup", tuple[LineupEntry, ...]), ("timetable", dict), ("maps", list), ("rules", list),
    ("dress", str | None), ("source", str), ("source_url", str)])
_DETAIL_FIELDS = ["description", "timetable", "maps", "rules", "dress", "source", "source_url"]
_DETAIL_AT = _GENRES_AT + 1
_LINEUP = (select(_act.artist_id, _act.name, _act.position).where(_act.event_id == bindparam("id"))
           .order_by(_act.position))


@functools.cache
def _detail(postgres: bool) -> Select:
    """The statement of `event_detail`: the event with its venue's and organisation's
    references and its genres (its copies), and on PostgreSQL its bill in its order
    (SQLite reads that in one more) and the versions it was read at (`_detail_versions`)."""
    # psycopg answers JSON parsed: a list of [artist_id, name, position] per act.
    lineup = select(func.json_agg(postgresql.aggregate_order_by(
        func.json_build_array(_act.artist_id, _act.name, _act.position), _act.position),
        type_=NullType())).where(_act.event_id == _event.id)
    detail = (select(*_EVENT_COLUMNS[:_GENRES_AT], _genre_names(_event.listed_genres, postgres),
                     *(_event[name] for name in _DETAIL_FIELDS),
                     (lineup.scalar_subquery() if postgres else null()).label("lineup"),
                     *(_detail_versions() if postgres else ()))
              .where(_DETAIL_KEY, PUBLIC)
              .limit(1))
    return planned_once(detail)  # by one of two unique keys: the same plan for any


_DETAIL_KEY = or_(_event.id == bindparam("key"), _event.slug == bindparam("key"))


def _detail_versions() -> tuple:
    """An event's detail is its row's columns and its acts' rows: their versions (PostgreSQL,
    `_VERSION`; the acts' in the bill's order) are what it was built from."""
    acts = select(func.array_agg(postgresql.aggregate_order_by(
        row_version("event_artists"), _act.position), type_=NullType())).where(
        _act.event_id == _event.id)
    return _event.id.label("detail_id"), _VERSION, acts.scalar_subquery().label("acts")


class Detailed(NamedTuple):
    """An event's detail (`event_detail`), and on PostgreSQL what it was built from
    (`event_detail_basis`): kept with its answer (edge/cache.py)."""

    detail: EventDetail
    basis: bytes | None


def event_detail(session: Session, key: str) -> Detailed:
    """The public event (`PUBLIC`) with this id or slug as its detail shows it; `NotFound`
    otherwise. One statement on PostgreSQL (its bill in it), two on SQLite."""
    postgres = session.get_bind().dialect.name == "postgresql"
    found = session_rows(session, _detail(postgres), {"key": key})
    if not found:
        raise NotFound("event", key)
    row = found[0]
    lineup = (row.lineup or ()) if postgres else session_rows(session, _LINEUP, {"id": row.id})
    description, *rest = row[_DETAIL_AT:_DETAIL_AT + len(_DETAIL_FIELDS)]
    return Detailed(EventDetail(*_summary(row), description,
                                tuple(LineupEntry(*act) for act in lineup), *rest),
                    _detail_basis(row) if postgres else None)


def event_detail_basis(session: Session, key: str) -> bytes | None:
    """What `event_detail` would build the detail of `key` from now, as its
    `Detailed.basis`: the event's row version and its acts', read by the same key and rule
    without their columns, so that a detail kept while the catalogue changed (elsewhere) is
    known to be built the same again (edge/cache.py). When no public event has the key, a
    basis no detail has. None on SQLite (no row versions)."""
    if session.get_bind().dialect.name != "postgresql":
        return None
    found = session_rows(session, _DETAIL_BASIS, {"key": key})
    return _detail_basis(found[0] if found else None)


_DETAIL_BASIS = planned_once(select(*_detail_versions()).where(_DETAIL_KEY, PUBLIC).limit(1))


def _detail_basis(row) -> bytes:
    """The basis of an event's detail: its versions (`_detail_versions`), or none."""
    if row is None:
        return basis_of(None)
    return basis_of(row.detail_id, row.version, *(row.acts or ()))


def get_event(session: Session, key: str) -> Event:
    """The public event (`PUBLIC`) with this id or slug, mapped (the site's pages, festivals);
    `NotFound` otherwise. The API's detail reads plain rows: `event_detail`."""
    event = session.scalars(
        select(Event).where(or_(Event.id == key, Event.slug == key), PUBLIC)).first()
    if event is None:
        raise NotFound("event", key)
    return event


def upcoming_for_artist(session: Session, artist_id: str, *, today: dt.date,
                        limit: int = 10) -> Page:
    """The artist's next approved events in NL and BE (from today), soonest first: a page of
    `EventSummary`, with its basis on PostgreSQL (`upcoming_basis_for_artist`)."""
    return list_events(session, filters=EventFilters(artist_id=artist_id), today=today,
                       after=None, limit=limit)


def upcoming_basis_for_artist(session: Session, artist_id: str, *, today: dt.date,
                              limit: int = 10) -> bytes | None:
    """What `upcoming_for_artist` would build its page from now (`list_basis`)."""
    return list_basis(session, filters=EventFilters(artist_id=artist_id), today=today,
                      after=None, limit=limit)


def get_own_event(session: Session, key: str, *, organisation_id: str) -> Event:
    """The event with this id or slug if it belongs to the organisation; `NotFound` otherwise.

    An event of another organisation is answered exactly like a missing one.
    """
    event = session.scalars(
        select(Event).where(or_(Event.id == key, Event.slug == key),
                            Event.organisation_id == organisation_id)
    ).first()
    if event is None:
        raise NotFound("event", key)
    return event

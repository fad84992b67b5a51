"""Events: the agenda itself.

Copies of venue fields (`city_key`, `lat`, `lng`, the venue name inside
`search_key`) live on the event so that every hot filter of GET /events is one
index range scan in the list's order (`date`, `start`, `id`). They are written
by `models.catalogue` whenever an event or its venue changes.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import JSON, Boolean, Date, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from models.db import Base, Timestamp
from models.organisations import Organisation
from models.text import fold
from models.venues import Venue

STATUSES = ("draft", "pending", "approved", "rejected")
# Longest event (end_date - date) the agenda accepts; bounds the scan of GET /events.
MAX_SPAN_DAYS = 31


class Event(Base):
    """An event on a date (and up to `end_date`) at a venue, by an organisation."""

    __tablename__ = "events"
    __table_args__ = (
        Index("ix_events_order", "date", "start", "id"),
        Index("ix_events_city_order", "city_key", "date", "start", "id"),
        Index("ix_events_venue_order", "venue_id", "date", "start", "id"),
        Index("ix_events_organisation_order", "organisation_id", "date", "start", "id"),
        Index("ix_events_lat_lng", "lat", "lng"),
        Index("ix_events_festival", "festival_key", "season"),
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


class EventGenre(Base):
    """A genre of an event; `date`, `start` are copies so the genre filter scans in order."""

    __tablename__ = "event_genres"
    __table_args__ = (Index("ix_event_genres_order", "genre", "date", "start", "event_id"),)

    event_id: Mapped[str] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"),
                                          primary_key=True)
    genre: Mapped[str] = mapped_column(String(60), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, default=0)
    date: Mapped[dt.date] = mapped_column(Date)
    start: Mapped[str] = mapped_column(String(5))


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
        genre.date, genre.start = event.date, event.start
    for act in event.lineup:
        act.date = event.date

"""New music releases (singles, EPs, albums) by artists on the agenda."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools

from sqlalchemy import (Date, ForeignKey, Index, Integer, Select, String, and_, bindparam, exists,
                        func, select)
from sqlalchemy.orm import Mapped, Session, mapped_column, relationship

from adapters.direct import planned_once, session_rows
from models.artists import Artist
from models.db import Base, Timestamp
from models.errors import BadRequest
from models.events import MAX_SPAN_DAYS, Event, EventArtist
from models.paging import Filters, Page, keyset_page, row_version
from models.venues import Venue, upcoming

RELEASE_TYPES = ("single", "ep", "album")
# How far back the radar looks, in weeks (decisions.md).
RADAR_WEEKS = (1, 2, 4)


class Release(Base):
    """A release; its artists are in `release_artists`, in billing order."""

    __tablename__ = "releases"
    __table_args__ = (
        Index("ix_releases_release_date_id", "release_date", "id"),
        Index("ix_releases_genre_release_date", "genre", "release_date", "id"),
    )

    id: Mapped[str] = mapped_column(String(80), primary_key=True)
    title: Mapped[str] = mapped_column(String(300))
    type: Mapped[str] = mapped_column(String(10))
    release_date: Mapped[dt.date] = mapped_column(Date)
    genre: Mapped[str] = mapped_column(String(60))
    spotify_url: Mapped[str | None] = mapped_column(String(500), nullable=True)
    apple_music_url: Mapped[str | None] = mapped_column(String(500), nullable=True)
    cover_url: Mapped[str] = mapped_column(String(500), default="")
    source: Mapped[str] = mapped_column(String(100), default="")
    source_url: Mapped[str] = mapped_column(String(500), default="")
    updated_at: Mapped[int] = mapped_column(Timestamp)

    artists: Mapped[list[ReleaseArtist]] = relationship(
        order_by="ReleaseArtist.position", cascade="all, delete-orphan", lazy="selectin")

    @property
    def credited_artists(self) -> list[Artist]:
        """The release's artists, in billing order."""
        return [credit.artist for credit in self.artists]


class ReleaseArtist(Base):
    """An artist credited on a release."""

    __tablename__ = "release_artists"

    release_id: Mapped[str] = mapped_column(ForeignKey("releases.id", ondelete="CASCADE"),
                                            primary_key=True)
    artist_id: Mapped[str] = mapped_column(ForeignKey("artists.id"), primary_key=True,
                                           index=True)
    position: Mapped[int] = mapped_column(Integer, default=0)

    artist: Mapped[Artist] = relationship(lazy="joined", innerjoin=True)


@dataclasses.dataclass(frozen=True)
class NextEvent:
    """The soonest upcoming event of a release's artists (what the radar shows of it)."""

    id: str
    slug: str
    title: str
    date: dt.date
    city: str


@dataclasses.dataclass(frozen=True)
class RadarRelease:
    """A new release with the next event of its artists (GET /radar)."""

    release: Release
    next_event: NextEvent

    def __getattr__(self, name):
        return getattr(self.release, name)


def releases_of(session: Session, artist_id: str, *, versions: bool = False) -> list:
    """Every release crediting the artist, newest first (release date, then id): rows of the
    release's columns (a discography needs titles and dates, not mapped releases with their
    credits), on PostgreSQL with each row's `version`; with `versions`, the id and version
    alone (what an artist's profile was built from: `models.artists.artist_basis`)."""
    postgres = session.get_bind().dialect.name == "postgresql"
    return session_rows(session, _discography(postgres=postgres, versions=versions),
                        {"artist_id": artist_id})


_release, _credit = Release.__table__.c, ReleaseArtist.__table__.c


@functools.cache
def _discography(*, postgres: bool, versions: bool) -> Select:
    """Through the credits' index by artist, whatever the artist: planned once."""
    columns = [_release.id] if versions else list(_release)
    return planned_once(
        select(*columns, *([row_version("releases").label("version")] if postgres else []))
        .join(ReleaseArtist.__table__, and_(_credit.release_id == _release.id,
                                            _credit.artist_id == bindparam("artist_id")))
        .order_by(_release.release_date.desc(), _release.id.desc()))


def _upcoming_bookings(today: dt.date):
    """Conditions on `EventArtist` joined to `Event`: an approved event from today on."""
    # The span bound lets ix_event_artists_artist_order start its range near today.
    return (EventArtist.date >= today - dt.timedelta(days=MAX_SPAN_DAYS), *upcoming(today))


@dataclasses.dataclass(frozen=True)
class RadarFilters(Filters):
    """The filters of GET /radar."""

    kind = "radar"

    weeks: int = 4
    genre: str | None = None

    def binding(self) -> dict:
        """The filters a cursor is bound to: the weeks, and the genre when one is given."""
        return {"weeks": str(self.weeks), **({"genre": self.genre} if self.genre else {})}


def list_new_releases(session: Session, *, filters: RadarFilters, today: dt.date,
                      after: list | None, limit: int) -> Page:
    """Releases of the last `weeks` weeks (up to today) whose artists have an upcoming event.

    Newest first (release date, then id, both descending); each item carries the
    soonest upcoming event of any of its artists.
    """
    weeks, genre = filters.weeks, filters.genre
    if weeks not in RADAR_WEEKS:
        raise BadRequest([{"name": "weeks", "in": "query", "message": "must be 1, 2 or 4"}])
    booked = exists(
        select(ReleaseArtist.artist_id)
        .join(EventArtist, EventArtist.artist_id == ReleaseArtist.artist_id)
        .join(Event, Event.id == EventArtist.event_id)
        .where(ReleaseArtist.release_id == Release.id, *_upcoming_bookings(today)))
    query = select(Release).where(
        Release.release_date >= today - dt.timedelta(weeks=weeks),
        Release.release_date <= today, booked)
    if genre is not None:
        query = query.where(Release.genre == genre)
    after_key = None if after is None else (dt.date.fromisoformat(after[0]), after[1])
    page = keyset_page(session, query, order=[Release.release_date, Release.id],
                       after=after_key, limit=limit, descending=True,
                       key_of=lambda release: (release.release_date, release.id))
    soonest = _next_events(session, [release.id for release in page.items], today=today)
    # An event withdrawn between the two statements leaves its release out of this page.
    return Page(items=[RadarRelease(release=release, next_event=soonest[release.id])
                       for release in page.items if release.id in soonest],
                next_key=page.next_key)


def _next_events(session: Session, release_ids: list[str], *,
                 today: dt.date) -> dict[str, NextEvent]:
    """For each release, the soonest upcoming approved event of any of its artists."""
    if not release_ids:
        return {}
    ranked = (
        select(ReleaseArtist.release_id, Event.id.label("event_id"),
               func.row_number().over(partition_by=ReleaseArtist.release_id,
                                      order_by=(Event.date, Event.start, Event.id))
               .label("rank"))
        .join(EventArtist, EventArtist.artist_id == ReleaseArtist.artist_id)
        .join(Event, Event.id == EventArtist.event_id)
        .where(ReleaseArtist.release_id.in_(release_ids), *_upcoming_bookings(today))
        .subquery())
    rows = session.execute(
        select(ranked.c.release_id, Event.id, Event.slug, Event.title, Event.date, Venue.city)
        .select_from(ranked).join(Event, Event.id == ranked.c.event_id)
        .join(Venue, Venue.id == Event.venue_id)
        .where(ranked.c.rank == 1))
    return {row.release_id: NextEvent(id=row.id, slug=row.slug, title=row.title,
                                      date=row.date, city=row.city) for row in rows}

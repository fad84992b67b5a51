"""Artists: who plays, with links, aliases and releases."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from sqlalchemy import JSON, Boolean, Index, String, Text, bindparam, func, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from adapters.direct import planned_once, session_rows
from models.db import Base, Timestamp
from models.errors import NotFound
from models.events import upcoming_for_artist
from models.paging import Filters, Page, keyset_page
from models.text import fold, like_pattern


class Artist(Base):
    """An artist; `genre` is the primary genre (a name of the fixed list)."""

    __tablename__ = "artists"
    __table_args__ = (
        Index("ix_artists_name_key_id", "name_key", "id"),
        Index("ix_artists_genre_name_key", "genre", "name_key", "id"),
    )

    id: Mapped[str] = mapped_column(String(80), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    name_key: Mapped[str] = mapped_column(String(200))
    genre: Mapped[str] = mapped_column(String(60))
    country: Mapped[str] = mapped_column(String(100), default="")
    city: Mapped[str] = mapped_column(String(100), default="")
    image_url: Mapped[str] = mapped_column(String(500), default="")
    verified: Mapped[bool] = mapped_column(Boolean, default=False)
    links: Mapped[dict] = mapped_column(JSON, default=dict)
    bio: Mapped[str] = mapped_column(Text, default="")
    aliases: Mapped[list] = mapped_column(JSON, default=list)
    # None, or {"name": ..., "url": ...}.
    agency: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    source: Mapped[str] = mapped_column(String(100), default="")
    source_url: Mapped[str] = mapped_column(String(500), default="")
    updated_at: Mapped[int] = mapped_column(Timestamp)


@dataclasses.dataclass(frozen=True)
class ArtistFilters(Filters):
    """The filters of GET /artists, all ANDed."""

    kind = "artists"

    q: str | None = None
    genre: str | None = None
    country: str | None = None


@dataclasses.dataclass(frozen=True)
class ArtistProfile:
    """An artist with its releases (newest first) and next dates (GET /artists/{id}):
    `artist` is the row of its columns (`get_artist`), whose fields read as the artist's."""

    artist: Any
    releases: list
    upcoming_events: list

    def __getattr__(self, name):
        return getattr(self.artist, name)


def list_artists(session: Session, *, filters: ArtistFilters, after: list | None,
                 limit: int) -> Page:
    """Artists matching `filters`, by name (folded) then id, one page."""
    query = select(Artist)
    if filters.q is not None:
        query = query.where(Artist.name_key.like(like_pattern(fold(filters.q)), escape="\\"))
    if filters.genre is not None:
        query = query.where(Artist.genre == filters.genre)
    if filters.country is not None:
        # Country codes are ASCII, where SQL's lower() and Python's agree.
        query = query.where(func.lower(Artist.country) == filters.country.strip().lower())
    return keyset_page(session, query, order=[Artist.name_key, Artist.id], after=after,
                       limit=limit, key_of=lambda artist: (artist.name_key, artist.id))


def get_artist(session: Session, artist_id: str, *, today: dt.date) -> ArtistProfile:
    """The artist with this id, its releases and next dates; `NotFound` otherwise. Plain
    rows, each statement planned once (not the mapped `Artist` and its releases)."""
    # models.releases imports this module for the credits' `artist`.
    from models.releases import releases_of

    found = session_rows(session, _BY_ID, {"id": artist_id})
    if not found:
        raise NotFound("artist", artist_id)
    return ArtistProfile(artist=found[0], releases=releases_of(session, artist_id),
                         upcoming_events=upcoming_for_artist(session, artist_id, today=today))


_BY_ID = planned_once(select(*Artist.__table__.c).where(Artist.__table__.c.id == bindparam("id")))

"""Artists: who plays, with links, aliases and releases."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
from typing import Any

from sqlalchemy import JSON, Boolean, Index, Select, String, Text, bindparam, func, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from adapters.direct import planned_once, session_rows
from models.db import Base, Timestamp
from models.errors import NotFound
from models.events import upcoming_basis_for_artist, upcoming_for_artist
from models.paging import (Filters, Page, basis_of, keyset_rows, keyset_statement,
                           position_params, row_version)
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
    # What it was built from (`artist_basis`, PostgreSQL): kept with its answer (edge/cache.py).
    basis: bytes | None = None

    def __getattr__(self, name):
        return getattr(self.artist, name)


def list_artists(session: Session, *, filters: ArtistFilters, after: list | None,
                 limit: int) -> Page:
    """Artists matching `filters`, by name (folded) then id, one page: plain rows of a
    statement built once for each shape of the filters (not mapped artists of a query built
    at each request)."""
    params: dict = {}
    if filters.q is not None:
        params["name_like"] = like_pattern(fold(filters.q))
    if filters.genre is not None:
        params["genre"] = filters.genre
    if filters.country is not None:
        # Country codes are ASCII, where SQL's lower() and Python's agree.
        params["country"] = filters.country.strip().lower()
    statement = _listed(frozenset(params), after=after is not None)
    if after is not None:
        params |= position_params(tuple(after))
    return keyset_rows(session, statement, params=params, limit=limit,
                       key_of=lambda artist: (artist.name_key, artist.id))


@functools.cache
def _listed(given: frozenset[str], *, after: bool) -> Select:
    """The artists' columns by the filters `given` (their parameters' names), in the list's
    order from `after`."""
    query = select(*Artist.__table__.c)
    if "name_like" in given:
        query = query.where(Artist.name_key.like(bindparam("name_like"), escape="\\"))
    if "genre" in given:
        query = query.where(Artist.genre == bindparam("genre"))
    if "country" in given:
        query = query.where(func.lower(Artist.country) == bindparam("country"))
    return keyset_statement(query, [Artist.name_key, Artist.id], after=after)


def get_artist(session: Session, artist_id: str, *, today: dt.date) -> ArtistProfile:
    """The artist with this id, its releases and next dates; `NotFound` otherwise. Plain
    rows, each statement planned once (not the mapped `Artist` and its releases). On
    PostgreSQL with its basis: each statement's rows with their versions."""
    # models.releases imports this module for the credits' `artist`.
    from models.releases import releases_of

    postgres = session.get_bind().dialect.name == "postgresql"
    found = session_rows(session, _by_id(postgres=postgres, versions=False), {"id": artist_id})
    if not found:
        raise NotFound("artist", artist_id)
    releases = releases_of(session, artist_id)
    upcoming = upcoming_for_artist(session, artist_id, today=today)
    return ArtistProfile(artist=found[0], releases=releases, upcoming_events=upcoming.items,
                         basis=_basis(found[0], releases, upcoming.basis) if postgres else None)


def artist_basis(session: Session, artist_id: str, *, today: dt.date) -> bytes | None:
    """What `get_artist` would build the artist's profile from now, as its
    `ArtistProfile.basis`: the artist's row version, its releases' ids and versions and its
    next dates' page's basis, read by the same statements without their columns
    (edge/cache.py). When no artist has the id, a basis no profile has. None on SQLite (no
    row versions)."""
    from models.releases import releases_of

    if session.get_bind().dialect.name != "postgresql":
        return None
    found = session_rows(session, _by_id(postgres=True, versions=True), {"id": artist_id})
    if not found:
        return basis_of(None)
    return _basis(found[0], releases_of(session, artist_id, versions=True),
                  upcoming_basis_for_artist(session, artist_id, today=today))


def _basis(artist, releases: list, upcoming: bytes) -> bytes:
    """The basis of an artist's profile: its row, its releases' and its next dates' page's."""
    return basis_of(artist.id, artist.version, upcoming.hex(),
                    *(f"{release.id}\x1e{release.version}" for release in releases))


_artist = Artist.__table__.c


@functools.cache
def _by_id(*, postgres: bool, versions: bool) -> Select:
    """The artist's columns (with `versions`, its id alone), on PostgreSQL with its row's
    version, by its id: planned once."""
    columns = [_artist.id] if versions else list(_artist)
    return planned_once(select(*columns, *([row_version("artists").label("version")]
                                           if postgres else []))
                        .where(_artist.id == bindparam("id")))


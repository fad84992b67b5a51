"""New music releases (singles, EPs, albums) by artists on the agenda."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Date, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from models.db import Base, Timestamp

RELEASE_TYPES = ("single", "ep", "album")


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


class ReleaseArtist(Base):
    """An artist credited on a release."""

    __tablename__ = "release_artists"

    release_id: Mapped[str] = mapped_column(ForeignKey("releases.id", ondelete="CASCADE"),
                                            primary_key=True)
    artist_id: Mapped[str] = mapped_column(ForeignKey("artists.id"), primary_key=True,
                                           index=True)
    position: Mapped[int] = mapped_column(Integer, default=0)

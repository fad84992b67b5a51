"""Artists: who plays, with links, aliases and releases."""

from __future__ import annotations

from sqlalchemy import JSON, Boolean, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from models.db import Base, Timestamp


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

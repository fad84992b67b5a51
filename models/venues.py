"""Venues: where events happen, with their practical profile."""

from __future__ import annotations

from sqlalchemy import JSON, Float, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from models.db import Base, Timestamp


class Venue(Base):
    """A venue; `city_key` and `name_key` are folded copies for search."""

    __tablename__ = "venues"
    __table_args__ = (
        Index("ix_venues_name_key_id", "name_key", "id"),
        Index("ix_venues_city_key_name_key", "city_key", "name_key", "id"),
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

"""The fixed genre list: its names are the only values the `genre` parameters accept.

The same list is the `GenreName` enum of the OpenAPI document and is seeded by
migration 0002; tests/models/test_genres.py keeps the three in step.
"""

from __future__ import annotations

import dataclasses

from sqlalchemy import Integer, String, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from models.db import Base
from models.errors import NotFound
from models.paging import Filters, Page, keyset_page

# (name, group), in the order of the list.
GENRES: tuple[tuple[str, str], ...] = (
    ("House", "House"), ("Deep House", "House"), ("Tech House", "House"),
    ("Progressive House", "House"), ("Afro House", "House"),
    ("Melodic House & Techno", "House"), ("Disco", "Disco"), ("Nu Disco", "Disco"),
    ("Italo Disco", "Disco"),
    ("Techno", "Techno"), ("Hard Techno", "Techno"), ("Minimal", "Techno"),
    ("Acid", "Techno"), ("Industrial", "Techno"),
    ("Trance", "Trance"), ("Psytrance", "Trance"),
    ("Hardstyle", "Hard dance"), ("Hardcore", "Hard dance"), ("Uptempo", "Hard dance"),
    ("Frenchcore", "Hard dance"),
    ("Drum & Bass", "Bass"), ("Jungle", "Bass"), ("Dubstep", "Bass"), ("UK Garage", "Bass"),
    ("Bass House", "Bass"), ("Electro", "Bass"),
    ("Hip-Hop", "Urban"), ("R&B", "Urban"), ("Afrobeats", "Urban"), ("Amapiano", "Urban"),
    ("Dancehall", "Urban"), ("Reggaeton", "Urban"), ("Latin", "Urban"),
    ("Ambient", "Other"), ("Pop", "Other"),
)


class Genre(Base):
    """One genre of the fixed list."""

    __tablename__ = "genres"

    slug: Mapped[str] = mapped_column(String(60), primary_key=True)
    name: Mapped[str] = mapped_column(String(60), unique=True)
    group: Mapped[str] = mapped_column(String(60))
    position: Mapped[int] = mapped_column(Integer, unique=True)


@dataclasses.dataclass(frozen=True)
class GenreFilters(Filters):
    """GET /genres has no filters: the whole list, in its order."""

    kind = "genres"


def list_genres(session: Session, *, after: list | None, limit: int) -> Page:
    """The genres in list order, from after keyset position `after`."""
    return keyset_page(session, select(Genre), order=[Genre.position], after=after,
                       limit=limit, key_of=lambda genre: (genre.position,))


def get_genre(session: Session, slug: str) -> Genre:
    """The genre with this slug; `NotFound` otherwise."""
    genre = session.get(Genre, slug)
    if genre is None:
        raise NotFound("genre", slug)
    return genre

"""Cities: where the agenda has events coming, busiest first.

A city is not a table of its own: it is the group of venues with the same
folded city name (`city_key`) in the same country, named as its venues spell it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session

from models.errors import NotFound
from models.events import Event
from models.paging import Filters, Page, keyset_page
from models.text import slugify
from models.venues import Venue, upcoming


# Cities read per query while looking for one by its slug (there are a few hundred).
_PAGE = 100


@dataclasses.dataclass(frozen=True)
class City:
    """A city with at least one upcoming event; `lat`, `lng` is the middle of its venues."""

    name: str
    country: str
    upcoming_events: int
    lat: float
    lng: float

    @property
    def slug(self) -> str:
        """The city's name in its public page address."""
        return slugify(self.name)


@dataclasses.dataclass(frozen=True)
class CityFilters(Filters):
    """The filters of GET /cities."""

    kind = "cities"

    country: str | None = None


def list_cities(session: Session, *, filters: CityFilters, today: dt.date,
                after: list | None, limit: int) -> Page:
    """Cities with upcoming approved events, busiest first, then by name, one page.

    The keyset is (-upcoming events, city_key, country): one direction for all
    columns, and unique, since a city is a (city_key, country) group.
    """
    counts = (select(Venue.city_key, Venue.country, func.count(Event.id).label("upcoming_events"))
              .join(Event, Event.venue_id == Venue.id).where(*upcoming(today))
              .group_by(Venue.city_key, Venue.country))
    if filters.country is not None:
        counts = counts.where(Venue.country == filters.country)
    counts = counts.subquery()
    # Name and middle come from all of the city's venues, with events coming or not.
    places = (select(Venue.city_key, Venue.country, func.min(Venue.city).label("name"),
                     func.avg(Venue.lat).label("lat"), func.avg(Venue.lng).label("lng"))
              .group_by(Venue.city_key, Venue.country).subquery())
    query = (select(places.c.name, counts.c.country, counts.c.upcoming_events, places.c.lat,
                    places.c.lng, counts.c.city_key)
             .join(places, and_(places.c.city_key == counts.c.city_key,
                                places.c.country == counts.c.country)))
    page = keyset_page(session, query, scalars=False, after=after, limit=limit,
                       order=[-counts.c.upcoming_events, counts.c.city_key, counts.c.country],
                       key_of=lambda row: (-row.upcoming_events, row.city_key, row.country))
    return Page(items=[City(name=row.name, country=row.country,
                            upcoming_events=row.upcoming_events,
                            # Six decimals (~0.1 m): the same figures on every database.
                            lat=round(row.lat, 6), lng=round(row.lng, 6))
                       for row in page.items], next_key=page.next_key)


def get_city(session: Session, slug: str, *, today: dt.date) -> City:
    """The city with upcoming events whose page address ends in `slug` (a city's `url` is
    the slug of its name); `NotFound` otherwise, as for a city GET /cities does not list."""
    after = None
    while True:
        page = list_cities(session, filters=CityFilters(), today=today, after=after, limit=_PAGE)
        for city in page.items:
            if city.slug == slug:
                return city
        if page.next_key is None:
            raise NotFound("city", slug)
        after = list(page.next_key)

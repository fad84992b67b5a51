"""Cities: where the agenda has events coming, busiest first.

A city is not a table of its own: it is the group of venues with the same
folded city name (`city_key`) in the same country, named as its venues spell it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools

from sqlalchemy import (CTE, Date, Select, String, and_, bindparam, func, literal, select,
                        union_all)
from sqlalchemy.orm import Session

from adapters.direct import planned_once
from models.errors import NotFound
from models.events import PUBLIC, Event
from models.facets import ALL, EventDayCount, EventMonthCount, next_month
from models.paging import Filters, Page, keyset_rows, keyset_statement, position_params
from models.text import slugify
from models.venues import Venue, running_since, upcoming


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


def _places() -> CTE:
    """Each city of the venues, with or without events: (city_key, country), its name as its
    venues spell it (the first by sort order), the middle of its venues, and `countries`:
    in how many countries venues share its key. Read once a page, by a walk of the venues'
    index of places alone where their rows are known visible to all (migration 0029; two
    walks of the table were ~4,200 pages at a million events, 3,000 venues: 3.7 ms of
    PostgreSQL's; one of the index, 42)."""
    grouped = (select(Venue.city_key, Venue.country, func.min(Venue.city).label("name"),
                      func.avg(Venue.lat).label("lat"), func.avg(Venue.lng).label("lng"))
               .group_by(Venue.city_key, Venue.country).subquery())
    return select(grouped, func.count().over(partition_by=grouped.c.city_key)
                  .label("countries")).cte("places")


def _upcoming_counts(places: CTE) -> Select:
    """The cities of `places` (`_places`) with public events from the day `today` (a
    parameter) on, running ones too (as `venues.upcoming`), with `upcoming_events`; run
    with the parameters `list_cities` gives (the day, its month's next, `running_since` the
    day).

    Counted from the kept day and month counts (models/facets.py) rather than the events
    themselves (670 ms at a million events, half of them coming): the whole months after
    this one from the month counts, the rest of this month from the day counts, and the
    events still running that began before today from the small partial index of running
    events. Those counts know a city by its key, not its country: the few keys whose venues
    lie in two countries are counted from their events.
    """
    today, span_from = bindparam("today", type_=Date), bindparam("span_from", type_=Date)
    following = bindparam("following", type_=Date)
    days, months = EventDayCount, EventMonthCount
    started = union_all(
        select(months.city_key, months.events).where(
            months.organisation_id == ALL, months.genre == ALL, months.city_key != ALL,
            months.month >= following),
        select(days.city_key, days.events).where(
            days.organisation_id == ALL, days.genre == ALL, days.city_key != ALL,
            days.date >= today, days.date < following),
        select(Event.city_key, literal(1)).where(  # ix_events_running
            PUBLIC, Event.end_date.is_not(None), Event.date < today, Event.date >= span_from,
            Event.last_date >= today),
    ).subquery()
    totals = (select(started.c.city_key, func.sum(started.c.events).label("events"))
              .group_by(started.c.city_key).subquery())
    city = (places.c.name, places.c.country)
    one_country = (select(*city, totals.c.events.label("upcoming_events"), places.c.lat,
                          places.c.lng, places.c.city_key)
                   .join(places, places.c.city_key == totals.c.city_key)
                   .where(places.c.countries == 1, totals.c.events > 0))
    several = (select(*city, func.count(Event.id).label("upcoming_events"), places.c.lat,
                      places.c.lng, places.c.city_key)
               .select_from(places)
               .join(Venue, and_(Venue.city_key == places.c.city_key,
                                 Venue.country == places.c.country, places.c.countries > 1))
               .join(Event, Event.venue_id == Venue.id)
               .where(*upcoming(today, span_from))
               .group_by(*city, places.c.lat, places.c.lng, places.c.city_key))
    return select(union_all(one_country, several).subquery())


def list_cities(session: Session, *, filters: CityFilters, today: dt.date,
                after: list | None, limit: int) -> Page:
    """Cities with upcoming approved events, busiest first, then by name, one page.

    The keyset is (-upcoming events, city_key, country): one direction for all
    columns, and unique, since a city is a (city_key, country) group.
    """
    params = {"today": today, "span_from": running_since(today), "following": next_month(today),
              "country": filters.country}
    if after is not None:
        params |= position_params(tuple(after))
    page = keyset_rows(session, _cities(filters.country is not None, after is not None),
                       params=params, limit=limit,
                       key_of=lambda row: (-row.upcoming_events, row.city_key, row.country))
    return Page(items=[City(name=row.name, country=row.country,
                            upcoming_events=row.upcoming_events,
                            # Six decimals (~0.1 m): the same figures on every database.
                            lat=round(row.lat, 6), lng=round(row.lng, 6))
                       for row in page.items], next_key=page.next_key)


@functools.cache
def _cities(country: bool, after: bool) -> Select:
    """The statement of a page of `list_cities`, with a country or not, after a position or
    not: built once, run with parameters (`list_cities`), planned once (it reads the same
    counts and venues whatever the day). Built at each request, the statement cost the
    workers more than its rows (a page of 100 cities at a million events: 7.2 ms of CPU)."""
    counts = _upcoming_counts(_places())
    if country:
        counts = counts.where(counts.selected_columns.country
                              == bindparam("country", type_=String))
    counts = counts.subquery()
    return planned_once(keyset_statement(
        select(counts.c.name, counts.c.country, counts.c.upcoming_events, counts.c.lat,
               counts.c.lng, counts.c.city_key),
        [-counts.c.upcoming_events, counts.c.city_key, counts.c.country], after=after))


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

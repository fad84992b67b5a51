"""The home page's agenda: today's events, this weekend's, the busiest cities, and a search
by city, genre and date, read with the same domain functions as GET /events and GET /cities.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

from sqlalchemy.orm import Session

from models import cities, events
from models.errors import BadRequest
from models.genres import GENRES

# Cards in each of the page's lists, and cities shown.
CARDS = 8
FOUND = 24
BUSIEST = 12
# The longest city name a search takes (the longest in the Netherlands and Belgium is 30).
CITY_CHARACTERS = 100
GENRE_NAMES = tuple(name for name, _group in GENRES)


@dataclasses.dataclass(frozen=True)
class Search:
    """What a visitor searched for; all optional."""

    city: str = ""
    genre: str = ""
    day: dt.date | None = None

    @property
    def given(self) -> bool:
        """Whether anything was asked for."""
        return bool(self.city or self.genre or self.day)


def weekend(today: dt.date) -> tuple[dt.date, dt.date]:
    """The days of "this weekend" after today: Friday to Sunday of this week, or from
    tomorrow when the weekend has begun; on a Sunday, the next weekend."""
    sunday = today + dt.timedelta(days=6 - today.weekday())
    if today.weekday() == 6:
        sunday += dt.timedelta(days=7)
    friday = sunday - dt.timedelta(days=2)
    return max(friday, today + dt.timedelta(days=1)), sunday


def read_search(args) -> Search:
    """The search of the query string (`city`, `genre`, `date`); `BadRequest` naming every
    bad field."""
    city = args.get("city", "").strip()
    genre = args.get("genre", "").strip()
    day, problems = None, []
    if len(city) > CITY_CHARACTERS:
        problems.append({"name": "city", "in": "query",
                         "message": f"must be at most {CITY_CHARACTERS} characters"})
    if genre and genre not in GENRE_NAMES:
        problems.append({"name": "genre", "in": "query", "message": "is not a known genre"})
    if text := args.get("date", "").strip():
        try:
            day = dt.date.fromisoformat(text)
        except ValueError:
            problems.append({"name": "date", "in": "query", "message": "must be a date"})
    if problems:
        raise BadRequest(problems)
    return Search(city=city, genre=genre, day=day)


def found(session: Session, search: Search, *, today: dt.date) -> list[events.EventSummary]:
    """The first events matching the search, soonest first."""
    return _events(session, today, FOUND, date_from=search.day, date_to=search.day,
                   city=search.city or None, genre=search.genre or None)


def on_days(session: Session, first: dt.date, last: dt.date, *,
            today: dt.date) -> list[events.EventSummary]:
    """The first events on the days from `first` to `last`."""
    return _events(session, today, CARDS, date_from=first, date_to=last)


def busiest_cities(session: Session, *, today: dt.date) -> list[cities.City]:
    """The cities with the most events coming."""
    return cities.list_cities(session, filters=cities.CityFilters(), today=today, after=None,
                              limit=BUSIEST).items


def _events(session: Session, today: dt.date, limit: int, **filters):
    return events.list_events(session, filters=events.EventFilters.of(**filters), today=today,
                              after=None, limit=limit).items

"""Facet counts of GET /v1/events (`facets=genre,city,date`): how many events of the list
each genre, city and day holds, for building filter menus.

Each facet counts the list with every filter but its own (the genre counts ignore `genre`,
the city counts ignore `city`), so that a menu shows the choices next to the one taken;
the date counts are the days of the window `from`..`to`. A multi-day event counts on every
day of the window it runs, and once for a genre or a city.

At a million events a count over the matching rows would read most of the agenda for every
request, so public events are also counted per start day in `event_day_counts` (kept by
database triggers, whoever writes: see `postgresql_functions` and `sqlite_triggers`), by
city and by genre, each also over all cities and all genres (''), and the same again per
organisation (the busiest has thousands of coming events, each with its genres to read;
a venue's or an artist's are few); whole months are read from their sums in
`event_month_counts`, and a month the window covers in part from its days in the window
or as its sum less its days outside it, whichever reads fewer. Facets whose filters are
only dates, city, genre and organisation read those counts, plus the few multi-day events
still running from before a day (the partial index `ix_events_running`). Facets with any
other filter count the matching rows, through the same indexes as the list.

The counts come out as the answer's JSON (`CountsJSON`): the kept counts' statement writes
each facet's (`counts_json`), so a faceted answer reads a row a facet, not a row a value.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import functools
from collections.abc import Iterable, Iterator

import orjson
from sqlalchemy import (Date, Index, Integer, Select, String, bindparam, cast, func,
                        literal_column, null, select, text, union_all)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import Mapped, Session, mapped_column
from sqlalchemy.sql.functions import FunctionElement

from adapters.direct import PLAIN_ROWS, planned_once, session_rows
from models.db import Base
from models.errors import BadRequest
from models import events
from models.events import Event, EventFilters, EventGenre
from models.text import fold
from models.venues import Venue

FACETS = ("genre", "city", "date")
# Genres and cities shown (by count), and the longest window the date counts cover.
TOP = 50
MAX_DAYS = 62
ALL = ""
# The kept counts' rows of all cities and all genres, as the partial indexes of the totals
# name them: a plan made once for any values finds such an index only by this condition
# itself, not by parameters that hold the same values.
TOTALS = "city_key = '' AND genre = ''"


class _KeptCount:
    """Public events of one organisation (`organisation_id`, '' for all of them) in a city
    (`city_key`, '' for all) and of a genre ('' for all) over a period. The key is
    (organisation_id, period, city_key, genre): what a change counts afresh, a day's or a
    month's counts of all organisations or of one, is a range of it."""

    organisation_id: Mapped[str] = mapped_column(String(80), primary_key=True, sort_order=-2)
    city_key: Mapped[str] = mapped_column(String(100), primary_key=True)
    genre: Mapped[str] = mapped_column(String(60), primary_key=True)
    events: Mapped[int] = mapped_column(Integer)

    @staticmethod
    def indexes(table: str, period: str, suffix: str) -> tuple[Index, Index]:
        """The lookups of a counts table by organisation and city or genre, then `period`,
        each with the columns the counts read (PostgreSQL's INCLUDE): read from the table,
        the busiest organisation's genres would be a thousand pages."""
        return (Index(f"ix_{table}_city_{suffix}", "organisation_id", "city_key", period,
                      postgresql_include=["genre", "events"]),
                Index(f"ix_{table}_genre_{suffix}", "organisation_id", "genre", period,
                      postgresql_include=["city_key", "events"]))


class EventDayCount(_KeptCount, Base):
    """The events starting on `date`."""

    __tablename__ = "event_day_counts"
    __table_args__ = (
        *_KeptCount.indexes("event_day_counts", "date", "day"),
        # The date facet's totals (all cities, all genres): one row a day (migration 0017).
        Index("ix_event_day_counts_totals", "organisation_id", "date",
              postgresql_include=["events"], postgresql_where=text(TOTALS),
              sqlite_where=text(TOTALS)),
    )

    date: Mapped[dt.date] = mapped_column(Date, primary_key=True, sort_order=-1)


class EventMonthCount(_KeptCount, Base):
    """The day counts of a month (`month` is its first day) summed: a year of counts is a
    dozen rows a value instead of 365 (the busiest organisation's coming genres at a
    million events: 535 rows read instead of 7,547)."""

    __tablename__ = "event_month_counts"
    __table_args__ = (
        *_KeptCount.indexes("event_month_counts", "month", "month"),
        # An organisation's totals (all cities, all genres): one row a month (migration
        # 0029), what its events count sums (models/organisations.py).
        Index("ix_event_month_counts_totals", "organisation_id", "month",
              postgresql_include=["events"], postgresql_where=text(TOTALS),
              sqlite_where=text(TOTALS)),
    )

    month: Mapped[dt.date] = mapped_column(Date, primary_key=True, sort_order=-1)


def parse(value: str | None) -> tuple[str, ...] | None:
    """The facets of a comma list, in a fixed order (so that a cursor binds them the same
    however they were spelled); `BadRequest` naming `facets` for an unknown one."""
    if value is None:
        return None
    asked = {part.strip() for part in value.split(",")}
    unknown = sorted(asked - set(FACETS))
    if unknown:
        raise BadRequest([{"name": "facets", "in": "query", "message":
                           f"unknown facet {', '.join(map(repr, unknown))}: "
                           f"use {', '.join(FACETS)}"}])
    return tuple(facet for facet in FACETS if facet in asked)


def window(filters: EventFilters, today: dt.date) -> tuple[dt.date, dt.date]:
    """The days the date counts cover: `from` (default today) to `to`, or the 62 days from
    `from`; a longer window is a `BadRequest` naming `facets`."""
    first = filters.date_from or today
    last = filters.date_to or min(first, dt.date.max - dt.timedelta(days=MAX_DAYS - 1)) + \
        dt.timedelta(days=MAX_DAYS - 1)
    if (last - first).days + 1 > MAX_DAYS:
        raise BadRequest([{"name": "facets", "in": "query", "message":
                           f"date counts cover at most {MAX_DAYS} days; from..to spans "
                           f"{(last - first).days + 1}: narrow the dates or leave out date"}])
    return first, last


# The counts of one facet as the answer gives them (`meta.facets.<facet>`): a JSON array of
# {"value": the genre, the city or the day (ISO), "count": the events of the list with it},
# as orjson writes it (no spaces). The kept counts are rendered so by the database
# (`counts_json`), counts added up here by `rendered`: the same bytes either way.
CountsJSON = str


def rendered(counts: Iterable[tuple[str, int]]) -> CountsJSON:
    """Counts ((value, count) each, in order) as `CountsJSON`."""
    return orjson.dumps([{"value": value, "count": n} for value, n in counts]).decode()


class counts_json(FunctionElement):  # noqa: N801 (a SQL function, named as one)
    """`counts_json(value, n, position)`: the aggregate of rows (value, count) in the order of
    `position`, as `CountsJSON` ('[]' without rows): one text a facet, read and passed on
    as it is, where a row a value cost a worker ~1 µs each to read, make and dump (a
    faceted answer's ~120 rows). PostgreSQL writes each value by `to_json`; SQLite's
    `json_object` writes the same, in the order of the rows it aggregates (it has no ORDER
    BY within an aggregate before 3.44: the rows come ordered by `position`)."""

    type = String()
    inherit_cache = True
    name = "counts_json"


@compiles(counts_json, "postgresql")
def _counts_json_postgresql(element, compiler, **kw):
    value, n, position = (compiler.process(clause, **kw) for clause in element.clauses)
    return (f"'[' || coalesce(string_agg('{{\"value\":' || to_json({value})::text || "
            f"',\"count\":' || ({n})::text || '}}', ',' ORDER BY {position}), '') || ']'")


@compiles(counts_json)
def _counts_json(element, compiler, **kw):
    value, n, _position = (compiler.process(clause, **kw) for clause in element.clauses)
    return (f"'[' || coalesce(group_concat(json_object('value', {value}, 'count', {n}), ','), "
            f"'') || ']'")


def count(session: Session, *, filters: EventFilters,
          today: dt.date) -> dict[str, CountsJSON]:
    """`{facet: CountsJSON}` for each facet of `filters.facets`."""
    filters.check()
    _bounded(filters)
    days = window(filters, today) if "date" in filters.facets else None
    if not _kept(filters):
        return _live_counts(session, filters, days, today)
    return _kept_counts(session, filters, days, today)


@dataclasses.dataclass(frozen=True, slots=True)
class _Running:
    """A multi-day public event still running on `from`."""

    date: dt.date
    last_date: dt.date
    city_key: str
    genres: frozenset[str]

    def listed(self, filters: EventFilters) -> bool:
        """Whether the list of `filters` holds it, as far as its city and genre go (it was
        read with every other filter)."""
        return ((filters.city is None or self.city_key == fold(filters.city))
                and (filters.genre is None or filters.genre in self.genres))


def _multi_day(shaped: tuple) -> Select:
    """The multi-day events still running on `from` and starting by `date_to` of the list of
    `shaped` (its city and genre left out: `_Running.listed` applies those), each with each
    of its genres (an event without one on a row of its own, genre None): a part of
    `_kept_statement`, built with it once a shape."""
    running = _listed(shaped, (_event.id, _event.date, _event.last_date, _event.city_key),
                      "multi_day", "running")
    return (select(running.c.id, running.c.date, running.c.last_date, running.c.city_key,
                   _genre.genre)
            .outerjoin_from(running, EventGenre.__table__, _genre.event_id == running.c.id))


def _listed(shaped: tuple, columns: tuple, part: str, name: str):
    """`columns` of the events of `part` of the list of `shaped` (`events.matching`), as a
    subquery. An organisation's multi-day events (`part` "running" or "multi_day") are
    those of every multi-day event of the part (a few: `ix_events_running`), read first
    (MATERIALIZED, named `name`), the organisation's picked from them: a plan made for any
    organisation walked its ordered index instead, the busiest's 4,774 entries at a million
    events to find none running. So every statement of the kept counts is planned once."""
    given, has_tickets = shaped
    if part not in ("running", "multi_day") or "organisation_id" not in given:
        return events.matching(shaped, columns, part).subquery()
    every = events.matching((given - {"organisation_id"}, has_tickets),
                            (*columns, _event.organisation_id), part
                            ).cte(name).prefix_with("MATERIALIZED")
    return (select(*(every.c[column.key] for column in columns))
            .where(every.c.organisation_id == bindparam("organisation_id")).subquery())


# Filters that the kept counts know; any other given filter counts the matching rows, which
# one of the filters in _BOUNDING keeps to the events of one venue, artist or organisation.
_KEPT = frozenset({"date_from", "date_to", "city", "genre", "organisation_id", "radius_km",
                   "facets"})
# The others, named once (`_kept` reads them field by field).
_UNKNOWN_TO_KEPT = tuple(field.name for field in dataclasses.fields(EventFilters)
                         if field.name not in _KEPT)
_BOUNDING = ("venue_id", "artist_id", "organisation_id")
_UNKEPT = {"q": "q", "has_tickets": "has_tickets", "max_price": "max_price",
           "min_price": "min_price", "lat": "lat"}


def _bounded(filters: EventFilters) -> None:
    """Refuse facets over filters that no kept count knows unless one venue, artist or
    organisation bounds the rows to count: a count over most of the agenda at every request
    is not offered."""
    unkept = [name for field, name in _UNKEPT.items() if getattr(filters, field) is not None]
    if unkept and all(getattr(filters, name) is None for name in _BOUNDING):
        raise BadRequest([{"name": "facets", "in": "query", "message":
                           f"facets count with {', '.join(unkept)} only within one "
                           "venue_id, artist_id or organisation_id; with from, to, city and "
                           "genre they count the whole agenda"}])


def _kept(filters: EventFilters) -> bool:
    """Whether the kept counts know every filter given."""
    return all(getattr(filters, name) is None for name in _UNKNOWN_TO_KEPT)


_counts, _months = EventDayCount.__table__.c, EventMonthCount.__table__.c
_TABLES = {"days": _counts, "months": _months}
_event, _genre = Event.__table__.c, EventGenre.__table__.c
# Events starting on each day of a window, from the kept counts (`_kept_statement`): the
# totals (every city, every genre) through their partial index, which a plan made once
# for any values cannot choose for a parameter (its condition names the values), and a
# city's or a genre's.
_KEPT_DAYS_RANGE = select(_counts.date, _counts.events).where(
    _counts.organisation_id == bindparam("owner"),
    _counts.date.between(bindparam("date_from"), bindparam("date_to")))
_KEPT_TOTALS = _KEPT_DAYS_RANGE.where(text(TOTALS))
_KEPT_DAYS = _KEPT_DAYS_RANGE.where(
    _counts.city_key == bindparam("scope_city"), _counts.genre == bindparam("scope_genre"))


# The tops: (facet, the column of the kept counts and of events that holds its value).
_TOPS = (("genre", "genre"), ("city", "city_key"))


# The kept counts' rows that are the multi-day events still running (`_multi_day`), beside
# those of each facet.
_RUNNING = "running"


def _kept_counts(session: Session, filters: EventFilters, days: tuple[dt.date, dt.date] | None,
                 today: dt.date) -> dict[str, CountsJSON]:
    """Every facet asked, from the kept counts, and the multi-day events still running on
    `from` added to them, read in the same statement (`_kept_statement`): the kept counts
    know events by the day they start, so the running ones add the days after their first
    (those starting by the window's end), and those that began before `from` add to the
    tops. Such a one is rare (most often none runs): the tops it changes are read again
    with it, by a second statement, and the days it runs on added here."""
    first = filters.date_from or today
    spans = _spans(first, filters.date_to)
    values = events.params(filters, today) | {
        "owner": filters.organisation_id or ALL,
        "scope_city": _scope_value(filters, "city_key"),
        "scope_genre": _scope_value(filters, "genre")}
    for index, (_table, low, high, _sign) in enumerate(spans):
        values |= {f"low_{index}": low, f"high_{index}": high}
    kinds = tuple((table, high is not None, sign) for table, _low, high, sign in spans)
    asked = [(facet, column) for facet, column in _TOPS if facet in filters.facets]
    totals = None if days is None else values["scope_city"] == values["scope_genre"] == ALL
    # The running events of the list but its city and genre, starting by the window's end
    # (for the days' counts) or by `from` (for the tops): the first statement's `date_to`,
    # which no other part of it reads but the days', whose end it is too.
    until = days[1] if days else first
    wide = events.shape(dataclasses.replace(filters, city=None, genre=None, date_to=until))
    answer: dict[str, CountsJSON] = {}
    found: dict[str, tuple[dt.date, dt.date, str, set[str]]] = {}
    for facet, value, first_day, last_day, city_key, genre in session_rows(
            session, _kept_statement(tuple((facet, column, None) for facet, column in asked),
                                     kinds, totals, wide), values | {"date_to": until}):
        if facet == _RUNNING:  # an event (value: its id) a row for each of its genres
            event = found.setdefault(value, (first_day, last_day, city_key, set()))
            if genre is not None:
                event[3].add(genre)
        else:
            answer[facet] = value
    running = [_Running(first_day, last_day, city, frozenset(genres))
               for first_day, last_day, city, genres in found.values()]
    again = []
    for facet, column in asked if running else ():
        without = dataclasses.replace(filters, **{facet: None})
        if any(event.date < first and event.listed(without) for event in running):
            again.append((facet, column, events.shape(without)))
    if again:
        answer |= {facet: counted for facet, counted, *_ in session_rows(
            session, _kept_statement(tuple(again), kinds, None, None), values)}
    spanning = days and [(event.date, event.last_date) for event in running
                         if event.date <= days[1] and event.listed(filters)]
    if spanning:
        answer["date"] = rendered(_on_each_day(
            {day["value"]: day["count"] for day in orjson.loads(answer["date"])},
            spanning, days))
    return answer


@functools.lru_cache(maxsize=256)
def _kept_statement(tops: tuple, spans: tuple, totals: bool | None, running: tuple | None):
    """The statement of `_kept_counts`: a row (facet, `CountsJSON`) for each top
    (`_kept_top`); unless `totals` is None, one for the days of the window (every city's
    and genre's when `totals`), each with the events that start on it; and with `running`
    (a shape), the multi-day events of that shape still running (`_multi_day`: facet
    `_RUNNING`, value the event's id, and its date, last_date, city_key and genre, NULL in
    the others' rows). One statement, one round trip and one plan for the facets of an
    answer, instead of one each (bench/RESULTS.md)."""
    rest = (cast(null(), Date).label("date"), cast(null(), Date).label("last_date"),
            cast(null(), String).label("city_key"), cast(null(), String).label("genre"))
    parts = []
    for facet, column, shaped in tops:
        top = _kept_top(column, shaped, spans).subquery()
        parts.append(select(literal_column(f"'{facet}'").label("facet"),
                            counts_json(top.c.value, top.c.n, top.c.position).label("value"),
                            *rest))
    if totals is not None:
        started = (_KEPT_TOTALS if totals else _KEPT_DAYS).order_by(_counts.date).subquery()
        parts.append(select(literal_column("'date'").label("facet"),
                            counts_json(cast(started.c.date, String), started.c.events,
                                        started.c.date).label("value"), *rest))
    if running is not None:
        multi = _multi_day(running).subquery()
        parts.append(select(literal_column(f"'{_RUNNING}'").label("facet"),
                            multi.c.id.label("value"), multi.c.date, multi.c.last_date,
                            multi.c.city_key, multi.c.genre))
    statement = union_all(*parts) if len(parts) > 1 else parts[0]
    # Each part reads a range of an index whose key its values name, whatever they are:
    # planned once (planning it at each run cost PostgreSQL a third of a faceted answer's
    # CPU, bench/RESULTS.md). Its rows are read by position.
    return planned_once(statement).execution_options(**{PLAIN_ROWS: True})


def _kept_top(facet: str, shaped: tuple | None, spans: tuple) -> Select:
    """The top of a facet from the kept counts of `spans` ((table, bounded above, sign)
    each: taken away where the sign is -1),
    and, with `shaped`, the multi-day events of that shape that began before `from` and
    still run (in the list too)."""
    other = "genre" if facet == "city_key" else "city_key"
    scope = bindparam("scope_genre" if other == "genre" else "scope_city")
    kept = []
    for index, (name, bounded, sign) in enumerate(spans):
        table = _TABLES[name]
        moment = table.date if name == "days" else table.month
        conditions = [table.organisation_id == bindparam("owner"), table[facet] != ALL,
                      table[other] == scope, moment >= bindparam(f"low_{index}")]
        if bounded:
            conditions.append(moment <= bindparam(f"high_{index}"))
        n = table.events if sign > 0 else -table.events
        kept.append(select(table[facet].label("value"), n.label("n")).where(*conditions))
    if shaped is not None:
        kept.append(_grouped(shaped, facet, "running"))
    parts = union_all(*kept).subquery()
    # A value whose events of an edge month all fall outside the window sums to none: not
    # shown.
    return _ranked(select(parts.c.value, func.sum(parts.c.n).label("n"))
                   .group_by(parts.c.value).having(func.sum(parts.c.n) > 0), facet)


def _live_counts(session: Session, filters: EventFilters, days: tuple[dt.date, dt.date] | None,
                 today: dt.date) -> dict[str, CountsJSON]:
    """Every facet asked, counted over the matching rows (those of one venue, artist or
    organisation: `_bounded`), a statement each."""
    answer: dict[str, CountsJSON] = {}
    for facet, column in _TOPS:
        if facet in filters.facets:
            without = dataclasses.replace(filters, **{facet: None})
            rows = session_rows(session, _live_top(column, events.shape(without)),
                                events.params(without, today))
            answer[facet] = rendered((value, int(n)) for value, n, _position in rows)
    if days is not None:
        on_day = dataclasses.replace(filters, date_from=days[0], date_to=days[1])
        shaped, values = events.shape(on_day), events.params(on_day, today)
        started: dict[str, int] = {}
        for day, n in session_rows(session, _live_days(shaped), values):
            key = day.isoformat()
            started[key] = started.get(key, 0) + n
        answer["date"] = rendered(_on_each_day(started, session_rows(
            session, events.matching(shaped, (_event.date, _event.last_date), "multi_day"),
            values), days))
    return answer


@functools.lru_cache(maxsize=256)
def _live_top(facet: str, shaped: tuple) -> Select:
    """The top of a facet counted over the matching rows."""
    grouped = _grouped(shaped, facet, "all").subquery()
    return _ranked(select(grouped.c.value, grouped.c.n), facet)


def _ranked(statement: Select, facet: str) -> Select:
    """The TOP rows by count (then value), each with its position; a city as the venues
    spell its name."""
    value, n = statement.selected_columns
    position = func.row_number().over(order_by=(n.desc(), value)).label("position")
    top = statement.add_columns(position).order_by(n.desc(), value).limit(TOP)
    if facet != "city_key":
        return top
    # The names of the top cities only, in the same order.
    ranked = top.subquery()
    return select(select(func.min(Venue.city)).where(Venue.city_key == ranked.c.value)
                  .scalar_subquery().label("value"), ranked.c.n, ranked.c.position
                  ).order_by(ranked.c.position)


def _scope_value(filters: EventFilters, other: str) -> str:
    """The kept counts' key of the other facet's filter ('': all its values)."""
    if other == "genre":
        return filters.genre or ALL
    return fold(filters.city) if filters.city else ALL


def _spans(first: dt.date, last: dt.date | None
           ) -> list[tuple[str, dt.date, dt.date | None, int]]:
    """(table, low, high, sign) of the kept counts ("days" or "months"; high None: no end)
    that, added (sign 1) and taken away (sign -1), count each day of `first`..`last` (None:
    no end) exactly once: the whole months from the month counts, and a month the window
    covers from a day on, or up to a day, from its days in the window, or from the month's
    count less its days outside the window, whichever reads fewer days (from the 3rd of a
    month, 2 days taken away rather than 29 added: a top's days are a row a value each)."""
    day = dt.timedelta(days=1)
    whole_from = first if first.day == 1 else next_month(first)
    whole_until = None  # the end (exclusive) of the last whole month
    if last is not None:
        ends_month = next_month(last) - day == last
        whole_until = next_month(last) if ends_month else last.replace(day=1)
    spans: list[tuple[str, dt.date, dt.date | None, int]] = []
    if first < whole_from:
        head_end, month = whole_from - day, first.replace(day=1)
        if last is not None and last < head_end:  # within one month
            if (first - month).days + (head_end - last).days < (last - first).days + 1:
                spans += [("months", month, month, 1), ("days", month, first - day, -1),
                          ("days", last + day, head_end, -1)]
            else:
                spans.append(("days", first, last, 1))
        elif (first - month).days < (head_end - first).days + 1:
            spans += [("months", month, month, 1), ("days", month, first - day, -1)]
        else:
            spans.append(("days", first, head_end, 1))
    if whole_until is None:
        spans.append(("months", whole_from, None, 1))
    elif whole_from < whole_until:
        spans.append(("months", whole_from, whole_until - day, 1))
    if last is not None and max(whole_from, whole_until) <= last:
        month, month_end = last.replace(day=1), next_month(last) - day
        if last < month_end and (month_end - last).days < (last - month).days + 1:
            spans += [("months", month, month, 1), ("days", last + day, month_end, -1)]
        else:
            spans.append(("days", max(whole_from, whole_until), last, 1))
    return spans


def next_month(day: dt.date) -> dt.date:
    """The first day of the month after `day`'s (the last day there is, in December 9999)."""
    if day >= dt.date(9999, 12, 1):
        return dt.date.max
    return (day.replace(day=1) + dt.timedelta(days=32)).replace(day=1)


def _grouped(shaped: tuple, facet: str, part: str) -> Select:
    """Counts per genre or city of the events `events.matching` holds (its `part`); a city
    read with the events' own rows (no second visit to each)."""
    if facet == "genre":
        listed = _listed(shaped, (_event.id,), part, f"{part}_genre")
        return (select(_genre.genre.label("value"), func.count().label("n"))
                .join(listed, listed.c.id == _genre.event_id).group_by(_genre.genre))
    listed = _listed(shaped, (_event.city_key,), part, f"{part}_city")
    return (select(listed.c.city_key.label("value"), func.count().label("n"))
            .group_by(listed.c.city_key))


def _on_each_day(started: dict[str, int], spans, days: tuple[dt.date, dt.date]
                 ) -> list[tuple[str, int]]:
    """Events running on each day of the window, ascending (days without any left out): those
    starting on it (`started`, by the day's ISO text, which sorts as the days do) and the
    days after the first of multi-day events (`spans`, (first day, last day) each), which the
    start-day counts miss."""
    first, last = days
    counts = dict(started)
    for day, until in spans:
        begin = max(day + dt.timedelta(days=1), first)
        for offset in range((min(until, last) - begin).days + 1):
            moment = (begin + dt.timedelta(days=offset)).isoformat()
            counts[moment] = counts.get(moment, 0) + 1
    return [(day, counts[day]) for day in sorted(counts)]


@functools.lru_cache(maxsize=256)
def _live_days(shaped: tuple) -> Select:
    """Events starting on each day of the window, counted over the matching rows."""
    started = events.matching(shaped, (_event.date,), "started").subquery()
    return select(started.c.date, func.count()).group_by(started.c.date)


# --- the kept counts ------------------------------------------------------------------------

def public_sql(dialect: str) -> str:
    """`events.PUBLIC` as SQL text for the triggers: the rule the lists apply, written once.
    (Compiled inside a statement over `events`, which its subquery correlates to.)"""
    compiled = " ".join(str(select(_event.id).where(events.PUBLIC).compile(
        dialect=_DIALECTS[dialect](), compile_kwargs={"literal_binds": True})).split())
    prefix = "SELECT events.id FROM events WHERE "
    assert compiled.startswith(prefix), compiled
    return compiled.removeprefix(prefix)


_DIALECTS = {"postgresql": postgresql.dialect, "sqlite": sqlite.dialect}


def _day_counts(owner: str) -> str:
    """The INSERT of the public events (`{public}`) per day by city and genre, each also over
    all ('') of them, of `owner`: '' (all organisations) or `events.organisation_id`."""
    parts = []
    for genre in ("''", "g.genre"):
        for city in ("events.city_key", "''"):
            genres = " JOIN event_genres g ON g.event_id = events.id" if genre != "''" else ""
            keys = [key for key in (owner, city, genre) if key != "''"]
            parts.append(f"SELECT {owner}, {city}, {genre}, events.date, count(*) "
                         f"FROM events{genres} WHERE {{public}} "
                         f"GROUP BY {', '.join([*keys, 'events.date'])}")
    return ("INSERT INTO event_day_counts (organisation_id, city_key, genre, date, events) "
            f"{' UNION ALL '.join(parts)}")


def _month_sql(day: str, dialect: str) -> tuple[str, str]:
    """SQL of the first day of `day`'s month and of the next month."""
    if dialect == "postgresql":
        return (f"date_trunc('month', {day})::date",
                f"(date_trunc('month', {day}) + interval '1 month')::date")
    return f"date({day}, 'start of month')", f"date({day}, 'start of month', '+1 month')"


def recount_all(dialect: str) -> list[str]:
    """SQL that counts every day and month afresh (the migrations fill the counts with it)."""
    month = _month_sql("date", dialect)[0]
    return [
        "DELETE FROM event_day_counts",
        *(_day_counts(owner).replace("{public}", public_sql(dialect))
          for owner in ("''", "events.organisation_id")),
        "DELETE FROM event_month_counts",
        "INSERT INTO event_month_counts (organisation_id, city_key, genre, month, events) "
        f"SELECT organisation_id, city_key, genre, {month}, sum(events) FROM event_day_counts "
        f"GROUP BY organisation_id, city_key, genre, {month}",
    ]


def _recount_days(days: str, organisation: str | None, dialect: str) -> list[str]:
    """SQL that counts the public events starting on the days of `days` (a query of one
    column, `date`) afresh: of all organisations (None) or of `organisation` (SQL of its
    id)."""
    owner = "''" if organisation is None else organisation
    on_days = f"events.date IN (SELECT date FROM ({days}) d)"
    public = f"{public_sql(dialect)} AND {on_days}"
    if organisation is not None:
        public += f" AND events.organisation_id = {organisation}"
    return [f"DELETE FROM event_day_counts WHERE organisation_id = {owner} "
            f"AND {on_days.removeprefix('events.')}",
            _day_counts("''" if organisation is None else "events.organisation_id")
            .replace("{public}", public)]


def _resum_months(days: str, organisation: str | None, dialect: str) -> list[str]:
    """SQL that sums the day counts of the months of the days of `days` again into the month
    counts: of all organisations (None) or of `organisation` (SQL of its id)."""
    owner = "''" if organisation is None else organisation
    month, following = _month_sql("d.date", dialect)
    return [
        f"DELETE FROM event_month_counts WHERE organisation_id = {owner} "
        f"AND month IN (SELECT {month} FROM ({days}) d)",
        "INSERT INTO event_month_counts (organisation_id, city_key, genre, month, events) "
        "SELECT c.organisation_id, c.city_key, c.genre, m.month, sum(c.events) "
        f"FROM (SELECT DISTINCT {month} AS month, {following} AS following FROM ({days}) d) m "
        f"JOIN event_day_counts c ON c.organisation_id = {owner} AND c.date >= m.month "
        "AND c.date < m.following GROUP BY c.organisation_id, c.city_key, c.genre, m.month",
    ]


def postgresql_functions() -> list[str]:
    """The functions of the triggers."""
    changed = _DAYS_CHANGED
    for name, noted in _NOTED.items():
        changed = changed.replace(f"{{{name}}}", noted)
    committing = _DAYS_COMMITTING
    for name, statements in {
            "recount_day": _recount_days("SELECT day AS date", None, "postgresql"),
            "resum_month": _resum_months("SELECT first_day AS date", None, "postgresql"),
            "recount_owner": _recount_days("SELECT day AS date", "organisation", "postgresql"),
            "resum_owner": _resum_months("SELECT first_day AS date", "organisation",
                                         "postgresql"),
    }.items():
        committing = committing.replace(f"{{{name}}}", "; ".join(statements))
    return [changed, committing]


# PostgreSQL: statement triggers note the start days a transaction changed (old and new;
# for an organisation whose suspension changed, the days of its events); as it commits, one
# deferred trigger counts those days afresh, one transaction at a time (an advisory lock),
# so each count sees every transaction committed before it. They also note the
# organisations of the days changed, whose own counts are then counted afresh (a day holds
# thousands of organisations' counts at a million events); and the events read from
# `events` by a change to another table (an event's genres, its organisation's suspension),
# whose day and organisation are read again as it commits: another transaction may have
# moved the event since. The months of the days are summed again after them, once each
# (an import of a month's events sums it once, not once a day).
_DAYS_CHANGED = """CREATE OR REPLACE FUNCTION event_days_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_TABLE_NAME = 'organisations' THEN
        INSERT INTO event_counts_pending SELECT DISTINCT txid_current(), e.date
        FROM new_rows r JOIN old_rows o ON o.id = r.id JOIN events e ON e.organisation_id = r.id
        WHERE r.suspended IS DISTINCT FROM o.suspended ON CONFLICT DO NOTHING;{suspended}
      ELSIF TG_TABLE_NAME = 'events' THEN
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
          INSERT INTO event_counts_pending SELECT DISTINCT txid_current(), date FROM new_rows
          ON CONFLICT DO NOTHING;{new_owners}
        END IF;
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
          INSERT INTO event_counts_pending SELECT DISTINCT txid_current(), date FROM old_rows
          ON CONFLICT DO NOTHING;{old_owners}
        END IF;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO event_counts_pending SELECT DISTINCT txid_current(), date FROM old_rows
        ON CONFLICT DO NOTHING;{old_genres}
      ELSE
        INSERT INTO event_counts_pending SELECT DISTINCT txid_current(), e.date
        FROM new_rows JOIN events e ON e.id = new_rows.event_id ON CONFLICT DO NOTHING;
        IF TG_OP = 'UPDATE' THEN
          INSERT INTO event_counts_pending SELECT DISTINCT txid_current(), date FROM old_rows
          ON CONFLICT DO NOTHING;{old_genres}
        END IF;{new_genres}
      END IF;
      RETURN NULL;
    END $$"""
# What the function above notes since 0014: the days and organisations of changed events,
# and the events whose day and organisation are read again as the change commits.
_OWNERS_OF = """
          INSERT INTO event_counts_pending_owners
          SELECT DISTINCT txid_current(), date, organisation_id FROM {rows} ON CONFLICT DO NOTHING;"""
_EVENTS_OF = """
        INSERT INTO event_counts_pending_events SELECT DISTINCT txid_current(), {events}
        ON CONFLICT DO NOTHING;"""
_NOTED = {
    "new_owners": _OWNERS_OF.replace("{rows}", "new_rows"),
    "old_owners": _OWNERS_OF.replace("{rows}", "old_rows"),
    "suspended": _EVENTS_OF.replace("{events}", (
        "e.id FROM new_rows r JOIN old_rows o ON o.id = r.id JOIN events e\n        "
        "ON e.organisation_id = r.id WHERE r.suspended IS DISTINCT FROM o.suspended")),
    "old_genres": _EVENTS_OF.replace("{events}", "event_id FROM old_rows"),
    "new_genres": _EVENTS_OF.replace("{events}", "event_id FROM new_rows"),
}
_DAYS_COMMITTING = """CREATE OR REPLACE FUNCTION event_days_committing() RETURNS trigger
    LANGUAGE plpgsql AS $$
    DECLARE
      day date; first_day date; organisation varchar; days date[]; owned date[];
      owners varchar[];
      months date[]; owned_months date[]; month_owners varchar[];
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext('event_day_counts'));
      WITH touched AS (DELETE FROM event_counts_pending_events WHERE txid = NEW.txid
                       RETURNING event_id)
      INSERT INTO event_counts_pending_owners SELECT NEW.txid, e.date, e.organisation_id
      FROM events e JOIN touched t ON t.event_id = e.id ON CONFLICT DO NOTHING;
      WITH pairs AS (DELETE FROM event_counts_pending_owners WHERE txid = NEW.txid
                     RETURNING date, organisation_id)
      SELECT array_agg(date ORDER BY date, organisation_id),
             array_agg(organisation_id ORDER BY date, organisation_id) INTO owned, owners
      FROM (SELECT DISTINCT date, organisation_id FROM pairs) p;
      WITH noted AS (DELETE FROM event_counts_pending WHERE txid = NEW.txid RETURNING date)
      SELECT array_agg(DISTINCT u.date) INTO days
      FROM (SELECT date FROM noted UNION SELECT unnest(owned)) u;
      SELECT array_agg(DISTINCT date_trunc('month', d)::date) INTO months
      FROM unnest(days) AS d;
      SELECT array_agg(m ORDER BY m, o), array_agg(o ORDER BY m, o)
      INTO owned_months, month_owners
      FROM (SELECT DISTINCT date_trunc('month', d)::date AS m, o
            FROM unnest(owned, owners) AS p(d, o)) q;
      -- The days first, then their months (summed from the days).
      FOREACH day IN ARRAY coalesce(days, '{}') LOOP
        {recount_day};
      END LOOP;
      FOR i IN 1 .. coalesce(array_length(owned, 1), 0) LOOP
        day := owned[i];
        organisation := owners[i];
        {recount_owner};
      END LOOP;
      FOREACH first_day IN ARRAY coalesce(months, '{}') LOOP
        {resum_month};
      END LOOP;
      FOR i IN 1 .. coalesce(array_length(owned_months, 1), 0) LOOP
        first_day := owned_months[i];
        organisation := month_owners[i];
        {resum_owner};
      END LOOP;
      RETURN NULL;
    END $$"""
# The days noted by each transaction, and the trigger that counts them as it commits (0012).
POSTGRESQL_PENDING = [
    "CREATE TABLE event_counts_pending (txid bigint, date date, PRIMARY KEY (txid, date))",
    "CREATE CONSTRAINT TRIGGER event_days_committing AFTER INSERT ON event_counts_pending "
    "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION event_days_committing()",
]
# The organisations of each day a transaction changed, and the events whose day and
# organisation are read as it commits (0014).
POSTGRESQL_PENDING_0014 = {
    "event_counts_pending_owners": "CREATE TABLE event_counts_pending_owners (txid bigint, "
    "date date, organisation_id varchar(80), PRIMARY KEY (txid, date, organisation_id))",
    "event_counts_pending_events": "CREATE TABLE event_counts_pending_events (txid bigint, "
    "event_id varchar(80), PRIMARY KEY (txid, event_id))"}
# The tables whose changes move the counts: events and their genres, and (since 0013) the
# organisations, whose suspension hides or shows their events.
COUNTED_TABLES = ("events", "event_genres", "organisations")


def postgresql_triggers(table: str) -> list[str]:
    """The statement triggers of `table` (one of `COUNTED_TABLES`) that note changed days.
    (PostgreSQL allows no column list with transition tables: every update of an
    organisation runs the trigger, which notes days only when `suspended` changed.)"""
    statements = []
    for event, tables in (("INSERT", "NEW TABLE AS new_rows"),
                          ("UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows"),
                          ("DELETE", "OLD TABLE AS old_rows")):
        if table == "organisations" and event != "UPDATE":
            continue
        statements.append(f"CREATE TRIGGER event_days_{event.lower()} AFTER {event} ON {table} "
                          f"REFERENCING {tables} FOR EACH STATEMENT "
                          f"EXECUTE FUNCTION event_days_changed()")
    return statements


# The columns of `events` the day counts read (the public rule's, the day, the city, the
# organisation): SQLite's trigger counts an event's day again only when one of them changes
# (not when the event's copy of its genres does, migration 0022: each genre written would
# count its day three times).
COUNTED_COLUMNS = ("date", "organisation_id", "status", "city_key")


def sqlite_triggers(tables: tuple[str, ...] = COUNTED_TABLES) -> list[str]:
    """Row triggers of `tables` that count a changed start day afresh at once (one writer at
    a time), and sum its month again: all organisations' counts and those of the
    organisation of the changed event."""
    of_event = "(SELECT {column} FROM events WHERE id = {row}.event_id)"
    changed = {"INSERT": ["NEW"], "UPDATE": ["OLD", "NEW"], "DELETE": ["OLD"]}  # the rows

    def day_of(table: str, row: str) -> str:
        # A genre's old row carries its event's day (a copy): the event may be gone.
        if table == "events" or row == "OLD":
            return f"{row}.date"
        return of_event.format(column="date", row=row)

    def organisation_of(table: str, row: str) -> str:
        if table == "events":
            return f"{row}.organisation_id"
        return of_event.format(column="organisation_id", row=row)

    def counted(days: str, organisation: str) -> list[str]:
        return [*_recount_days(days, None, "sqlite"),
                *_recount_days(days, organisation, "sqlite"),
                *_resum_months(days, None, "sqlite"),
                *_resum_months(days, organisation, "sqlite")]

    triggers = []
    for table in tables:
        if table == "organisations":
            days = "SELECT DISTINCT date FROM events WHERE organisation_id = NEW.id"
            body = " ".join(f"{statement};" for statement in counted(days, "NEW.id"))
            triggers.append("CREATE TRIGGER event_days_update_organisations AFTER UPDATE OF "
                            "suspended ON organisations WHEN OLD.suspended IS NOT NEW.suspended "
                            f"BEGIN {body} END")
            continue
        for event, rows in changed.items():
            statements = []
            for row in rows:
                statements += counted(f"SELECT {day_of(table, row)} AS date",
                                      organisation_of(table, row))
            body = " ".join(f"{statement};" for statement in statements)
            of = (f" OF {', '.join(COUNTED_COLUMNS)}" if (table, event) == ("events", "UPDATE")
                  else "")
            triggers.append(f"CREATE TRIGGER event_days_{event.lower()}_{table} AFTER {event}"
                            f"{of} ON {table} BEGIN {body} END")
    return triggers


@contextlib.contextmanager
def counted_at_the_end(session: Session) -> Iterator[None]:
    """Around a bulk load: on SQLite, whose row triggers count each written row's day and
    month afresh (their cost grows with the agenda: 3,000 demo events took 18.7 s to load
    instead of 2.6), the day counts' triggers are dropped, every day and month is counted
    afresh at the end and the triggers are made again as they were, in the load's
    transaction (SQLite's DDL is transactional: a failed load gets them back with its
    rollback; meanwhile the load holds SQLite's one writer's lock). PostgreSQL counts a
    transaction's changed days once, as it commits: nothing to do there."""
    connection = session.connection()
    if connection.dialect.name != "sqlite":
        yield
        return
    triggers = connection.exec_driver_sql(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' "
        "AND name GLOB 'event_days_*'").all()
    for name, _definition in triggers:
        connection.exec_driver_sql(f'DROP TRIGGER "{name}"')
    yield
    session.flush()
    for statement in recount_all("sqlite"):
        connection.exec_driver_sql(statement)
    for _name, definition in triggers:
        connection.exec_driver_sql(definition)

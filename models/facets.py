"""Facet counts of GET /v1/events (`facets=genre,city,date`): how many events of the list
each genre, city and day holds, for building filter menus.

Each facet counts the list with every filter but its own (the genre counts ignore `genre`,
the city counts ignore `city`), so that a menu shows the choices next to the one taken;
the date counts are the days of the window `from`..`to`. A multi-day event counts on every
day of the window it runs, and once for a genre or a city.

At a million events a count over the matching rows would read most of the agenda for every
request, so approved events are also counted per start day in `event_day_counts` (kept by
database triggers, whoever writes: see `POSTGRESQL_FUNCTIONS` and `sqlite_triggers`), by
city and by genre, each also over all cities and all genres (''). Facets whose filters are
only dates, city and genre read those counts, plus the few multi-day events still running
from before a day (the partial index `ix_events_running`). Facets with any other filter
count the matching rows, through the same indexes as the list.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

from sqlalchemy import Date, Index, Integer, String, func, select, union_all
from sqlalchemy.orm import Mapped, Session, mapped_column

from models.db import Base
from models.errors import BadRequest
from models.events import Event, EventFilters, EventGenre, matching
from models.text import fold
from models.venues import Venue

FACETS = ("genre", "city", "date")
# Genres and cities shown (by count), and the longest window the date counts cover.
TOP = 50
MAX_DAYS = 62
ALL = ""


class EventDayCount(Base):
    """Approved events starting on `date` in a city (`city_key`, '' for all) and of a genre
    ('' for all)."""

    __tablename__ = "event_day_counts"
    __table_args__ = (Index("ix_event_day_counts_genre", "genre", "city_key", "date"),)

    city_key: Mapped[str] = mapped_column(String(100), primary_key=True)
    genre: Mapped[str] = mapped_column(String(60), primary_key=True)
    date: Mapped[dt.date] = mapped_column(Date, primary_key=True)
    events: Mapped[int] = mapped_column(Integer)


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
    last = filters.date_to or first + dt.timedelta(days=MAX_DAYS - 1)
    if (last - first).days + 1 > MAX_DAYS:
        raise BadRequest([{"name": "facets", "in": "query", "message":
                           f"date counts cover at most {MAX_DAYS} days; from..to spans "
                           f"{(last - first).days + 1}: narrow the dates or leave out date"}])
    return first, last


def count(session: Session, *, filters: EventFilters, today: dt.date) -> dict[str, list[dict]]:
    """`{facet: [{value, count}]}` for each facet of `filters.facets`."""
    filters.check()
    days = window(filters, today) if "date" in filters.facets else None
    answer: dict[str, list[dict]] = {}
    if "genre" in filters.facets:
        answer["genre"] = _top(session, dataclasses.replace(filters, genre=None), "genre", today)
    if "city" in filters.facets:
        answer["city"] = _cities(session, _top(
            session, dataclasses.replace(filters, city=None), "city_key", today))
    if days is not None:
        answer["date"] = _days(session, filters, days)
    return answer


# Filters that the kept counts know; any other given filter counts the matching rows.
_KEPT = frozenset({"date_from", "date_to", "city", "genre", "radius_km", "facets"})


def _kept(filters: EventFilters) -> bool:
    return all(value is None for name, value in dataclasses.asdict(filters).items()
               if name not in _KEPT)


_counts, _event, _genre = (EventDayCount.__table__.c, Event.__table__.c,
                           EventGenre.__table__.c)


def _top(session: Session, filters: EventFilters, facet: str, today: dt.date) -> list[dict]:
    """The TOP values of `facet` ("genre" or "city_key") by count, highest first."""
    first = filters.date_from or today
    if _kept(filters):
        kept = select(_counts[facet].label("value"), _counts.events.label("n")).where(
            _counts[facet] != ALL, _counts.date >= first,
            _scope(filters, other="genre" if facet == "city_key" else "city_key"))
        if filters.date_to:
            kept = kept.where(_counts.date <= filters.date_to)
        # Multi-day events that began before `from` and still run are in the list too.
        running = _grouped(matching(filters, today=today, columns=[_event.id],
                                    running_only=True), facet)
        parts = union_all(kept, running).subquery()
        statement = select(parts.c.value, func.sum(parts.c.n).label("n")).group_by(
            parts.c.value)
    else:
        grouped = _grouped(matching(filters, today=today, columns=[_event.id]), facet).subquery()
        statement = select(grouped.c.value, grouped.c.n)
    statement = statement.order_by(statement.selected_columns[1].desc(),
                                   statement.selected_columns[0]).limit(TOP)
    return [{"value": value, "count": int(n)} for value, n in session.execute(statement)]


def _scope(filters: EventFilters, *, other: str):
    """Kept counts of the other facet's filter (or of all its values)."""
    if other == "genre":
        return _counts.genre == (filters.genre or ALL)
    return _counts.city_key == (fold(filters.city) if filters.city else ALL)


def _grouped(events, facet: str):
    """Counts per genre or city of the events of the `matching` statement `events`."""
    listed = events.subquery()
    if facet == "genre":
        return (select(_genre.genre.label("value"), func.count().label("n"))
                .join(listed, listed.c.id == _genre.event_id).group_by(_genre.genre))
    return (select(_event.city_key.label("value"), func.count().label("n"))
            .join(listed, listed.c.id == _event.id).group_by(_event.city_key))


def _cities(session: Session, counted: list[dict]) -> list[dict]:
    """City keys as the venues spell the city ("den haag" -> "Den Haag")."""
    keys = [item["value"] for item in counted]
    names = {key: name for key, name in session.execute(
        select(Venue.city_key, func.min(Venue.city)).where(Venue.city_key.in_(keys))
        .group_by(Venue.city_key))}
    return [{"value": names.get(item["value"], item["value"]), "count": item["count"]}
            for item in counted]


def _days(session: Session, filters: EventFilters, days: tuple[dt.date, dt.date]) -> list[dict]:
    """Events running on each day of the window, ascending (days without any left out)."""
    first, last = days
    on_day = dataclasses.replace(filters, date_from=first, date_to=last)
    counts: dict[dt.date, int] = {}
    if _kept(filters):
        statement = select(_counts.date, _counts.events).where(
            _counts.date.between(first, last), _scope(filters, other="genre"),
            _scope(filters, other="city_key"))
    else:
        started = matching(on_day, today=first, columns=[_event.date]).where(
            _event.date >= first).subquery()
        statement = select(started.c.date, func.count()).group_by(started.c.date)
    for day, n in session.execute(statement):
        counts[day] = counts.get(day, 0) + n
    # The days after the first of multi-day events (those the start-day counts miss).
    running = matching(on_day, today=first, columns=[_event.date, _event.last_date],
                       multi_day_only=True)
    for day, until in session.execute(running):
        begin = max(day + dt.timedelta(days=1), first)
        for offset in range((min(until, last) - begin).days + 1):
            moment = begin + dt.timedelta(days=offset)
            counts[moment] = counts.get(moment, 0) + 1
    return [{"value": day.isoformat(), "count": counts[day]} for day in sorted(counts)]


# --- the kept counts ------------------------------------------------------------------------

def recount_statements(day: str) -> list[str]:
    """SQL that counts the approved events starting on `day` (an SQL expression) afresh."""
    approved = f"e.status = 'approved' AND e.date = {day}"
    genres = "JOIN event_genres g ON g.event_id = e.id"
    return [
        f"DELETE FROM event_day_counts WHERE date = {day}",
        "INSERT INTO event_day_counts (city_key, genre, date, events) "
        f"SELECT e.city_key, '', e.date, count(*) FROM events e WHERE {approved} "
        "GROUP BY e.city_key, e.date "
        f"UNION ALL SELECT '', '', e.date, count(*) FROM events e WHERE {approved} "
        "GROUP BY e.date "
        f"UNION ALL SELECT e.city_key, g.genre, e.date, count(*) FROM events e {genres} "
        f"WHERE {approved} GROUP BY e.city_key, g.genre, e.date "
        f"UNION ALL SELECT '', g.genre, e.date, count(*) FROM events e {genres} "
        f"WHERE {approved} GROUP BY g.genre, e.date",
    ]


RECOUNT_ALL = [
    "DELETE FROM event_day_counts",
    *(statement.replace(" AND e.date = e.date", "") for statement in
      recount_statements("e.date")[1:]),
]

# PostgreSQL: statement triggers note the start days a transaction changed (old and new);
# as it commits, one deferred trigger counts those days afresh, one transaction at a time
# (an advisory lock), so each count sees every transaction committed before it.
POSTGRESQL_FUNCTIONS = [
    "CREATE TABLE event_counts_pending (txid bigint, date date, PRIMARY KEY (txid, date))",
    """CREATE FUNCTION event_days_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_TABLE_NAME = 'events' THEN
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
          INSERT INTO event_counts_pending SELECT DISTINCT txid_current(), date FROM new_rows
          ON CONFLICT DO NOTHING;
        END IF;
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
          INSERT INTO event_counts_pending SELECT DISTINCT txid_current(), date FROM old_rows
          ON CONFLICT DO NOTHING;
        END IF;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO event_counts_pending SELECT DISTINCT txid_current(), date FROM old_rows
        ON CONFLICT DO NOTHING;
      ELSE
        INSERT INTO event_counts_pending SELECT DISTINCT txid_current(), e.date
        FROM new_rows JOIN events e ON e.id = new_rows.event_id ON CONFLICT DO NOTHING;
        IF TG_OP = 'UPDATE' THEN
          INSERT INTO event_counts_pending SELECT DISTINCT txid_current(), date FROM old_rows
          ON CONFLICT DO NOTHING;
        END IF;
      END IF;
      RETURN NULL;
    END $$""",
    f"""CREATE FUNCTION event_days_committing() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE day date;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext('event_day_counts'));
      FOR day IN DELETE FROM event_counts_pending WHERE txid = NEW.txid RETURNING date LOOP
        {"; ".join(recount_statements("day"))};
      END LOOP;
      RETURN NULL;
    END $$""",
    "CREATE CONSTRAINT TRIGGER event_days_committing AFTER INSERT ON event_counts_pending "
    "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION event_days_committing()",
]


def postgresql_triggers(table: str) -> list[str]:
    """The statement triggers of `table` (events or event_genres) that note changed days."""
    statements = []
    for event, tables in (("INSERT", "NEW TABLE AS new_rows"),
                          ("UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows"),
                          ("DELETE", "OLD TABLE AS old_rows")):
        statements.append(f"CREATE TRIGGER event_days_{event.lower()} AFTER {event} ON {table} "
                          f"REFERENCING {tables} FOR EACH STATEMENT "
                          f"EXECUTE FUNCTION event_days_changed()")
    return statements


def sqlite_triggers() -> list[str]:
    """Row triggers that count a changed start day afresh at once (one writer at a time)."""
    days = {"events": {"INSERT": ["NEW.date"], "UPDATE": ["OLD.date", "NEW.date"],
                       "DELETE": ["OLD.date"]},
            "event_genres": {
                "INSERT": ["(SELECT date FROM events WHERE id = NEW.event_id)"],
                "UPDATE": ["OLD.date", "(SELECT date FROM events WHERE id = NEW.event_id)"],
                "DELETE": ["OLD.date"]}}
    triggers = []
    for table, by_event in days.items():
        for event, changed in by_event.items():
            body = " ".join(f"{statement};" for day in changed
                            for statement in recount_statements(day))
            triggers.append(f"CREATE TRIGGER event_days_{event.lower()}_{table} AFTER {event} "
                            f"ON {table} BEGIN {body} END")
    return triggers

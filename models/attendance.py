"""Attendance of an own event: exact counts, and the audience in groups nobody can be picked out of.

The audience is everyone with a (not void) ticket for the event on their account
or marked going, each person once. Three breakdowns group it: `regions` (the
person's province), `ages` (age bands) and `genres` (the genre the person
attended most). Each breakdown is published through `suppress`, which shows only
groups of at least `MIN_CELL` people and makes sure no smaller group can be
worked out from what it shows (the argument is written down above `suppress`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence

from sqlalchemy import func, select, union
from sqlalchemy.orm import Session

from models.events import Event, EventGenre, get_own_event
from models.genres import GENRES
from models.people import PROVINCES, Mark, Person
from models.tickets import Ticket

MIN_CELL = 10
# Age bands (key, youngest, oldest); the age is the event's year minus the birth year,
# the age the person reaches in that year (only the birth year is known).
AGE_BANDS: tuple[tuple[str, int, int | None], ...] = (
    ("under 18", 0, 17), ("18-20", 18, 20), ("21-24", 21, 24), ("25-29", 25, 29),
    ("30-34", 30, 34), ("35-44", 35, 44), ("45+", 45, None),
)
AGE_KEYS = tuple(key for key, _, _ in AGE_BANDS)
GENRE_KEYS = tuple(name for name, _ in GENRES)
GENRE_ORDER = {name: position for position, name in enumerate(GENRE_KEYS)}


@dataclasses.dataclass(frozen=True)
class Row:
    """One shown group of a breakdown."""

    key: str
    count: int


@dataclasses.dataclass(frozen=True)
class Breakdown:
    """One breakdown: `sum(rows) + (other or 0) + hidden == total`."""

    rows: list[Row]
    other: int | None
    hidden: int


@dataclasses.dataclass(frozen=True)
class Counts:
    """Exact counts: marks, and tickets sold through the service."""

    going: int
    interested: int
    tickets: int


@dataclasses.dataclass(frozen=True)
class Audience:
    """Who comes: totals, returning visitors and the three breakdowns."""

    computed_at: int
    min_cell: int
    total: int
    returning: int
    new: int
    returning_share: int
    regions: Breakdown
    ages: Breakdown
    genres: Breakdown


@dataclasses.dataclass(frozen=True)
class Attendance:
    """The attendance of one event."""

    event_id: str
    counts: Counts
    audience: Audience


def get_attendance(session: Session, *, event_key: str, organisation_id: str,
                   now: int) -> Attendance:
    """The attendance of an event of the organisation; `NotFound` for any other event."""
    event = get_own_event(session, event_key, organisation_id=organisation_id)
    return Attendance(event_id=event.id, counts=_counts(session, event=event),
                      audience=_audience(session, event=event, now=now))


def _counts(session: Session, *, event: Event) -> Counts:
    marks = dict(session.execute(
        select(Mark.kind, func.count()).where(Mark.event_id == event.id).group_by(Mark.kind)
    ).all())
    tickets = session.scalar(
        select(func.count()).select_from(Ticket)
        .where(Ticket.event_id == event.id, Ticket.source == "service", Ticket.status != "void"))
    return Counts(going=marks.get("going", 0), interested=marks.get("interested", 0),
                  tickets=tickets or 0)


def _audience(session: Session, *, event: Event, now: int) -> Audience:
    members = union(
        select(Ticket.person_id.label("person_id")).where(
            Ticket.event_id == event.id, Ticket.status != "void", Ticket.person_id.is_not(None)),
        select(Mark.person_id.label("person_id")).where(
            Mark.event_id == event.id, Mark.kind == "going"),
    ).subquery()
    audience = select(members.c.person_id)
    people = session.execute(
        select(Person.id, Person.region, Person.birth_year).where(Person.id.in_(audience))
    ).all()
    returning = session.scalar(
        select(func.count(func.distinct(Ticket.person_id)))
        .join(Event, Event.id == Ticket.event_id)
        .where(Event.organisation_id == event.organisation_id, Event.date < event.date,
               Ticket.scanned_at.is_not(None), Ticket.person_id.in_(audience))) or 0
    total = len(people)
    favourite = _favourite_genres(session, audience=audience)
    return Audience(
        computed_at=now, min_cell=MIN_CELL, total=total, returning=returning,
        new=total - returning, returning_share=percentage(returning, total),
        regions=_breakdown((region for _, region, _ in people), keys=PROVINCES),
        ages=_breakdown((age_band(birth_year, on=event.date) for _, _, birth_year in people),
                        keys=AGE_KEYS),
        genres=_breakdown((favourite.get(person_id) for person_id, _, _ in people),
                          keys=GENRE_KEYS),
    )


def _favourite_genres(session: Session, *, audience) -> dict[str, str]:
    """Each person's most-attended genre (ticket scanned), ties broken by the genre list order."""
    attended = (select(Ticket.person_id, Ticket.event_id)
                .where(Ticket.scanned_at.is_not(None), Ticket.person_id.in_(audience))
                .distinct().subquery())
    tallies: dict[str, Counter] = defaultdict(Counter)
    for person_id, genre, events in session.execute(
            select(attended.c.person_id, EventGenre.genre, func.count())
            .join(EventGenre, EventGenre.event_id == attended.c.event_id)
            .group_by(attended.c.person_id, EventGenre.genre)):
        if genre in GENRE_ORDER:
            tallies[person_id][genre] = events
    return {person_id: min(tally, key=lambda genre: (-tally[genre], GENRE_ORDER[genre]))
            for person_id, tally in tallies.items()}


def age_band(birth_year: int | None, *, on: dt.date) -> str | None:
    """The age band of someone born in `birth_year` at an event on `on`; None when unknown."""
    if birth_year is None or birth_year > on.year:
        return None
    age = on.year - birth_year
    return next(key for key, youngest, oldest in AGE_BANDS
                if youngest <= age and (oldest is None or age <= oldest))


def percentage(part: int, whole: int) -> int:
    """`part` as an integer percentage of `whole`, rounded half up; 0 of nothing."""
    if whole == 0:
        return 0
    return (200 * part + whole) // (2 * whole)


def _breakdown(values: Iterable[str | None], *, keys: Sequence[str]) -> Breakdown:
    """Group the audience's values (None, or a value outside `keys`, is no value) and suppress."""
    known = set(keys)
    counts: Counter = Counter()
    unknown = 0
    for value in values:
        if value in known:
            counts[value] += 1
        else:
            unknown += 1
    return suppress(counts, unknown=unknown, keys=keys)


# Why nothing below `min_cell` can be worked out from a published breakdown.
#
# What a reader sees: `total`, the rows (exact counts, all >= min_cell), `other`
# and `hidden`, and also the list of possible keys (the provinces, the age bands,
# the genre list) and this very rule. Assume the worst: the reader also knows how
# many people have no value (so `hidden` minus that is the withheld sum even when
# `other` is null), and even the exact list of withheld counts. What stays
# unknown is which non-shown key holds which count.
#
# 1. Every decision below depends on the counts only, never on the keys: small or
#    not, "exactly one small group", "every non-shown key holds the same count",
#    and the extra groups withheld are *all* the large groups of the smallest
#    count (a tie is not broken by key). Swapping the counts of two non-shown
#    keys therefore gives a population that publishes exactly the same figures.
# 2. So the count of a non-shown key K cannot be worked out as soon as another
#    non-shown key holds a different count: the swapped population puts that
#    other count on K and looks the same.
# 3. The rule makes sure that, whenever a small group is withheld and rows are
#    shown, the non-shown keys do not all hold one count:
#    - a single small group: the smallest shown groups (>= min_cell) are withheld
#      with it (the spec's secondary suppression), so the non-shown counts
#      include one below and one at least min_cell;
#    - several small groups that hold one and the same count and no empty key
#      left (e.g. the last two age bands with 1 person each: `hidden` minus the
#      people without a birth year would be 2 = 1 + 1, and nothing else adds up):
#      the same extra withholding.
#    Otherwise there is an empty non-shown key, or two small groups of different
#    counts, and 2. applies.
# 4. With no rows at all, nothing more can be withheld, and the non-shown keys
#    are the whole key list. If their counts differ, 2. applies. If every key
#    holds the same count c (1..9), another population publishes the same
#    figures with a different count on any key: move one person between two
#    keys (c-1 and c+1) when c <= 8; for c = 9 over m keys, put 1 on one key and
#    9m-1 on another (a single small group withheld with the only large one).
# 5. When `total` is below min_cell nothing is shown but `total` itself.
#
# The breakdowns group the same people by unrelated attributes, so figures of one
# never narrow another. Not covered (and not claimable without noise): comparing
# answers before and after the audience changed by a few people.
def suppress(counts: Mapping[str, int], *, unknown: int, keys: Sequence[str],
             min_cell: int = MIN_CELL) -> Breakdown:
    """Publish a breakdown: rows of at least `min_cell`, `other`, `hidden` (see the note above)."""
    groups = {key: count for key, count in counts.items() if count > 0}
    if not set(groups) <= set(keys) or len(set(keys)) < 2:
        raise ValueError("counts must use at least two known keys")
    total = sum(groups.values()) + unknown
    if total < min_cell:
        return Breakdown(rows=[], other=None, hidden=total)
    small = {key for key, count in groups.items() if count < min_cell}
    large = {key: count for key, count in groups.items() if count >= min_cell}
    withheld = set(small)
    uniform = (len(small) == len(set(keys)) - len(large)
               and len({groups[key] for key in small}) == 1)
    if small and large and (len(small) == 1 or uniform):
        smallest = min(large.values())
        withheld |= {key for key, count in large.items() if count == smallest}
    rows = sorted((Row(key=key, count=count) for key, count in groups.items()
                   if key not in withheld), key=lambda row: (-row.count, row.key))
    withheld_sum = sum(groups[key] for key in withheld)
    other = withheld_sum if withheld_sum >= min_cell else None
    hidden = total - sum(row.count for row in rows) - (other or 0)
    return Breakdown(rows=rows, other=other, hidden=hidden)

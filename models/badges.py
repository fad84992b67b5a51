"""Badges: the catalogue, and the badges people earn by what they attended or contributed.

Every badge counts one thing (`counts`) and is earned when the count reaches
`needs`: events attended, venues and cities visited, genres heard and festivals
attended (attended: a ticket of the person scanned at the door), or token
reports that are not outliers. Nothing is read from a setting, and neither
posting more nor spending more earns anything.

`award` is called by whatever changes what a person attended or contributed (a
door scan, tickets linked to an account, token reports written). It replays the
person's history in time order, so `earned_at` is the moment the threshold was
crossed and `value` the count at that moment (a night of three genres can take
the genres count past `needs`). An earned badge is kept.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterable, Iterator

from sqlalchemy import ForeignKey, Index, Integer, String, func, or_, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from models.db import Base, Timestamp, insert_for
from models.errors import NotFound
from models.events import Event, EventGenre
from models.festivals import TokenReport
from models.paging import Filters, Page, keyset_page
from models.people import Person
from models.tickets import Ticket

FAMILIES = ("regular", "explorer", "nomad", "omnivore", "festival", "reporter")
COUNTS = {"regular": "events_attended", "explorer": "venues_visited",
          "nomad": "cities_visited", "omnivore": "genres_heard",
          "festival": "festivals_attended", "reporter": "token_reports"}
# People per query when awarding many at once.
_CHUNK = 500


class Badge(Base):
    """A badge of the catalogue (seeded by migration 0004); `position` is the list order."""

    __tablename__ = "badges"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, unique=True)
    family: Mapped[str] = mapped_column(String(20))
    tier: Mapped[int] = mapped_column(Integer)
    mark: Mapped[str] = mapped_column(String(8))
    name_nl: Mapped[str] = mapped_column(String(80))
    name_en: Mapped[str] = mapped_column(String(80))
    description_nl: Mapped[str] = mapped_column(String(300))
    description_en: Mapped[str] = mapped_column(String(300))
    counts: Mapped[str] = mapped_column(String(30))
    needs: Mapped[int] = mapped_column(Integer)


class EarnedBadge(Base):
    """A badge a person earned: the count behind it and when the threshold was crossed."""

    __tablename__ = "earned_badges"
    __table_args__ = (Index("ix_earned_badges_person_order", "person_id", "earned_at",
                            "badge_id"),)

    person_id: Mapped[str] = mapped_column(ForeignKey("people.id", ondelete="CASCADE"),
                                           primary_key=True)
    badge_id: Mapped[str] = mapped_column(ForeignKey("badges.id"), primary_key=True)
    value: Mapped[int] = mapped_column(Integer)
    earned_at: Mapped[int] = mapped_column(Timestamp)


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class BadgeFilters(Filters):
    """GET /badges has no filters: the whole catalogue."""

    kind = "badges"


@dataclasses.dataclass(frozen=True)
class EarnedFilters(Filters):
    """The badges one public profile earned (GET /users/{id}/badges), by the person's id."""

    kind = "user_badges"

    user: str


def list_badges(session: Session, *, after: list | None, limit: int) -> Page:
    """The catalogue by family, then tier."""
    return keyset_page(session, select(Badge), order=[Badge.position], after=after,
                       limit=limit, key_of=lambda badge: (badge.position,))


def catalogue_size(session: Session) -> int:
    """How many badges the catalogue has."""
    return session.scalar(select(func.count()).select_from(Badge))


def get_public_person(session: Session, key: str) -> Person:
    """The person with this handle or id if the profile is public.

    A private, a suspended and a missing profile are the same `NotFound`, from
    the same single query, so neither the answer nor its timing tells them apart.
    """
    person = session.scalars(select(Person).where(
        or_(Person.handle == key, Person.id == key), Person.visibility == "public")).first()
    if person is None:
        raise NotFound("user", key)
    return person


@dataclasses.dataclass(frozen=True)
class Earned:
    """One earned badge with its catalogue entry."""

    badge: Badge
    value: int
    earned_at: int


def list_earned(session: Session, person: Person, *, after: list | None, limit: int) -> Page:
    """The person's earned badges, newest first (`earned_at`, then badge id)."""
    page = keyset_page(
        session, select(EarnedBadge, Badge).join(Badge, Badge.id == EarnedBadge.badge_id)
        .where(EarnedBadge.person_id == person.id),
        order=[EarnedBadge.earned_at, EarnedBadge.badge_id], after=after, limit=limit,
        key_of=lambda row: (row[0].earned_at, row[0].badge_id), descending=True, scalars=False)
    return Page(items=[Earned(badge=badge, value=earned.value, earned_at=earned.earned_at)
                       for earned, badge in page.items], next_key=page.next_key)


# ---------------------------------------------------------------------------
# Earning
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Step:
    """One moment in a person's history: what it adds to which count."""

    at: int
    order: str
    adds: dict[str, object]


def award(session: Session, person_ids: Iterable[str | None]) -> int:
    """Give these people every badge their history has reached; how many were new."""
    wanted = sorted({person_id for person_id in person_ids if person_id})
    if not wanted:
        return 0
    catalogue = session.scalars(select(Badge).order_by(Badge.position)).all()
    new = 0
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start:start + _CHUNK]
        held = collections.defaultdict(set)
        for person_id, badge_id in session.execute(
                select(EarnedBadge.person_id, EarnedBadge.badge_id)
                .where(EarnedBadge.person_id.in_(chunk))):
            held[person_id].add(badge_id)
        missing = {person_id: [badge for badge in catalogue if badge.id not in held[person_id]]
                   for person_id in chunk}
        # Only the histories of people with a badge still to earn are read.
        histories = _histories(session, [p for p in chunk if missing[p]])
        rows = [{"person_id": person_id, "badge_id": badge_id, "value": value, "earned_at": at}
                for person_id in chunk if missing[person_id]
                for badge_id, value, at in reached(histories[person_id], missing[person_id])]
        if rows:
            # A badge awarded meanwhile by another request stays as that one wrote it.
            statement = insert_for(session, EarnedBadge.__table__).values(rows)
            new += len(session.execute(statement.on_conflict_do_nothing()
                                       .returning(EarnedBadge.badge_id)).all())
    return new


def reached(history: list[Step], badges: Iterable[Badge]) -> Iterator[tuple[str, int, int]]:
    """(badge id, value, earned_at) of each badge whose `needs` the history reaches."""
    badges = list(badges)
    seen: dict[str, set] = collections.defaultdict(set)
    for step in sorted(history, key=lambda step: (step.at, step.order)):
        for counted, item in step.adds.items():
            seen[counted].update(item if isinstance(item, frozenset) else {item})
        for badge in list(badges):
            value = len(seen[badge.counts])
            if value >= badge.needs:
                badges.remove(badge)
                yield badge.id, value, step.at


def _histories(session: Session, person_ids: list[str]) -> dict[str, list[Step]]:
    """Per person: each door scan of their tickets and each report that is not an outlier."""
    histories: dict[str, list[Step]] = collections.defaultdict(list)
    scans = session.execute(
        select(Ticket.person_id, Ticket.id, Ticket.scanned_at, Event.id, Event.venue_id,
               Event.city_key, Event.festival_key)
        .join(Event, Event.id == Ticket.event_id)
        .where(Ticket.person_id.in_(person_ids), Ticket.scanned_at.is_not(None))).all()
    genres = collections.defaultdict(set)
    event_ids = sorted({row[3] for row in scans})
    for start in range(0, len(event_ids), _CHUNK):
        for event_id, genre in session.execute(
                select(EventGenre.event_id, EventGenre.genre)
                .where(EventGenre.event_id.in_(event_ids[start:start + _CHUNK]))):
            genres[event_id].add(genre)
    for person_id, ticket_id, at, event_id, venue_id, city_key, festival_key in scans:
        adds = {"events_attended": event_id, "venues_visited": venue_id,
                "cities_visited": city_key, "genres_heard": frozenset(genres[event_id])}
        if festival_key is not None:
            adds["festivals_attended"] = event_id
        histories[person_id].append(Step(at=at, order=f"scan {ticket_id}", adds=adds))
    for person_id, report_id, at in session.execute(
            select(TokenReport.person_id, TokenReport.id, TokenReport.created_at)
            .where(TokenReport.person_id.in_(person_ids), TokenReport.outlier.is_(False))):
        histories[person_id].append(
            Step(at=at, order=f"report {report_id}", adds={"token_reports": report_id}))
    return histories

"""Organisations: who publishes events and owns API tokens."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools

from sqlalchemy import Boolean, Index, Integer, Select, String, Text, func, select, text
from sqlalchemy.orm import Mapped, Session, mapped_column

from adapters.direct import planned_once, session_rows
from models.db import Base, Timestamp, among, new_id, now
from models.errors import BadRequest, NotFound
from models.paging import Filters, Page, keyset_page
from models.text import fold


class Organisation(Base):
    """An organisation on the agenda; `suspended` ones are refused everywhere, and neither
    they nor their events are public (as the change feed's tombstones say)."""

    __tablename__ = "organisations"
    # The few suspended ones, read by every public-event condition (models/events.py PUBLIC).
    __table_args__ = (Index("ix_organisations_suspended", "id",
                            postgresql_where=text("suspended"), sqlite_where=text("suspended")),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    bio: Mapped[str] = mapped_column(Text, default="")
    website: Mapped[str] = mapped_column(String(500), default="")
    verified: Mapped[bool] = mapped_column(Boolean, default=False)
    since: Mapped[int] = mapped_column(Integer)
    # A link to the organisation's own ticket shop is what allows the `tickets` scope.
    ticket_shop_url: Mapped[str | None] = mapped_column(String(500), nullable=True)
    suspended: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[int] = mapped_column(Timestamp)


def create_organisation(session: Session, *, name: str, ticket_shop_url: str | None = None,
                        suspended: bool = False, verified: bool = False, bio: str = "",
                        website: str = "", since: int | None = None) -> Organisation:
    """A new organisation; names are unique (case-insensitively)."""
    name = name.strip()
    if not name:
        raise BadRequest([{"name": "name", "in": "body", "message": "must not be empty"}])
    if find_organisation(session, name) is not None:
        raise BadRequest([{"name": "name", "in": "body",
                           "message": f"an organisation named {name!r} exists"}])
    created = now()
    organisation = Organisation(
        id=new_id("org"), name=name, bio=bio, website=website, verified=verified,
        since=since or _year(created), ticket_shop_url=ticket_shop_url,
        suspended=suspended, created_at=created,
    )
    session.add(organisation)
    session.flush()
    return organisation


def find_organisation(session: Session, id_or_name: str) -> Organisation | None:
    """The organisation with this id, or else with this name (case-insensitive)."""
    organisation = session.get(Organisation, id_or_name)
    if organisation is not None:
        return organisation
    return session.scalars(
        select(Organisation).where(func.lower(Organisation.name) == id_or_name.strip().lower())
    ).first()


def get_organisation(session: Session, id_or_name: str) -> Organisation:
    """Like `find_organisation`, but a missing one is a `NotFound`."""
    organisation = find_organisation(session, id_or_name)
    if organisation is None:
        raise NotFound("organisation", id_or_name)
    return organisation


def _year(timestamp: int) -> int:
    return dt.datetime.fromtimestamp(timestamp, dt.UTC).year


def count_events(session: Session, organisation_id: str) -> int:
    """The organisation's public events on the agenda, past and coming."""
    return _counts(session, [organisation_id]).get(organisation_id, 0)


def _counts(session: Session, organisation_ids: list[str]) -> dict[str, int]:
    """Public events per organisation, for the given organisations (absent: none): the sum of
    its kept month counts over all cities and genres (models/facets.py), a row a month,
    instead of counting its events (a page of 97 at a million events: 86 ms, now 7.6)."""
    if not organisation_ids:
        return {}
    return {organisation_id: int(count) for organisation_id, count in
            session_rows(session, _counted(), {"ids": organisation_ids})}


@functools.cache
def _counted() -> Select:
    """The statement of `_counts`, built once: the ids one parameter (`among`), so that it is
    the same statement however many (an `IN` of each page's ids was a new statement to
    compile and plan at each request: a quarter of a page's CPU in the workers)."""
    # models.facets imports models.events, which imports this module.
    from models.facets import TOTALS, EventMonthCount

    # The totals' own rows, through their partial index (migration 0029): through the
    # genres' index a page of 50 read every city's row of each month (17,230 index entries
    # at a million events: 3.7 ms of PostgreSQL's).
    return planned_once(
        select(EventMonthCount.organisation_id, func.sum(EventMonthCount.events))
        .where(among(EventMonthCount.organisation_id, "ids"), text(TOTALS))
        .group_by(EventMonthCount.organisation_id))


@dataclasses.dataclass(frozen=True)
class CountedOrganisation:
    """An organisation with the number of its public events (the `Organisation` resource)."""

    organisation: Organisation
    events_count: int

    def __getattr__(self, name):
        return getattr(self.organisation, name)


@dataclasses.dataclass(frozen=True)
class OrganisationFilters(Filters):
    """The filters of GET /organisations, all ANDed."""

    kind = "organisations"

    q: str | None = None
    verified: bool | None = None


# Rows read per round while `q` is matched in Python (see `_matching_ids`).
_SCAN_BATCH = 500


def list_organisations(session: Session, *, filters: OrganisationFilters,
                       after: list | None, limit: int) -> Page:
    """Public (not suspended) organisations matching `filters`, by name, one page, each with
    its events count.

    Names are unique, so the name alone is the keyset position (and `id` never
    decides the order).
    """
    query = select(Organisation).where(Organisation.suspended.is_(False))
    if filters.verified is not None:
        query = query.where(Organisation.verified.is_(filters.verified))
    if filters.q is not None:
        query = query.where(Organisation.id.in_(
            _matching_ids(session, query, needle=fold(filters.q), after=after, limit=limit)))
    page = keyset_page(session, query, order=[Organisation.name], after=after, limit=limit,
                       key_of=lambda organisation: (organisation.name,))
    counts = _counts(session, [organisation.id for organisation in page.items])
    return Page(items=[CountedOrganisation(organisation, counts.get(organisation.id, 0))
                       for organisation in page.items], next_key=page.next_key)


def _matching_ids(session: Session, query, *, needle: str, after: list | None,
                  limit: int) -> list[str]:
    """Ids of the first `limit + 1` organisations after `after` whose folded name holds `needle`.

    The organisations table has no folded name column (venues and artists have
    `name_key`), so the case- and accent-insensitive match walks the name index in
    order and folds in Python, stopping as soon as the page is full.
    """
    ids = []
    scan = query.with_only_columns(Organisation.id, Organisation.name).order_by(
        Organisation.name)
    if after is not None:
        scan = scan.where(Organisation.name > after[0])
    result = session.execute(scan.execution_options(yield_per=_SCAN_BATCH))
    try:
        for organisation_id, name in result:
            if needle in fold(name):
                ids.append(organisation_id)
                if len(ids) > limit:
                    break
    finally:
        result.close()
    return ids


def get_listed_organisation(session: Session, organisation_id: str) -> CountedOrganisation:
    """The public organisation with this id (ids only, not names) and its events count; a
    suspended one is a `NotFound`, as a missing one."""
    organisation = session.get(Organisation, organisation_id)
    if organisation is None or organisation.suspended:
        raise NotFound("organisation", organisation_id)
    return CountedOrganisation(organisation, count_events(session, organisation.id))

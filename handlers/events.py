"""GET /events and GET /events/{id}: the agenda."""

import orjson

from edge import paging
from edge.cache import revalidated_by
from edge.context import session, settings
from edge.openapi import rules
from edge.problems import QUERY_NAMES
from handlers import envelope
from models import events, facets as facet_counts
from models.calendar import today
from openapi.schemas.events import EventDetailSchema, summaries_json, summary_rendering

detail = EventDetailSchema()
# The filters' domain names by the names of the query string (`from` is `date_from`).
FIELDS = {query: field for field, query in QUERY_NAMES.items()}


def _rules(query: dict) -> list[dict]:
    """GET /events' rules (`EventFilters.problems`) over its filters the schema accepted."""
    fields = {FIELDS.get(name, name): value for name, value in query.items()
              if name not in ("limit", "cursor", "facets")}
    return events.EventFilters.of(**fields).problems()


def _wanted(from_=None, to=None, radius_km=None, city=None, genre=None, venue_id=None,
            artist_id=None, organisation_id=None, q=None, has_tickets=None, max_price=None,
            min_price=None, lat=None, lng=None, facets=None) -> events.EventFilters:
    """GET /events' filters, from its handler's arguments."""
    return events.EventFilters.of(
        date_from=from_, date_to=to, radius_km=radius_km, city=city, genre=genre,
        venue_id=venue_id, artist_id=artist_id, organisation_id=organisation_id, q=q,
        has_tickets=has_tickets, max_price=max_price, min_price=min_price, lat=lat, lng=lng,
        facets=facet_counts.parse(facets))


def _basis(limit: int, cursor=None, **filters) -> bytes | None:
    """What `list_events` would build its answer to these arguments from now
    (`models.events.list_basis`); None with facets (counts of the whole list)."""
    wanted = _wanted(**filters)
    if wanted.facets:
        return None
    return events.list_basis(session(), filters=wanted, today=today(), limit=limit,
                             after=paging.position(wanted, cursor,
                                                   secret=settings().secret_key))


@rules(_rules)
@revalidated_by(_basis)
def list_events(limit: int, cursor=None, from_=None, to=None, radius_km=None, city=None,
                genre=None, venue_id=None, artist_id=None, organisation_id=None, q=None,
                has_tickets=None, max_price=None, min_price=None, lat=None, lng=None, facets=None):
    """Approved NL and BE events, soonest first, from today unless `from` is given; with
    `facets`, the counts per genre, city and day of the whole list."""
    wanted = _wanted(from_=from_, to=to, radius_km=radius_km, city=city, genre=genre,
                     venue_id=venue_id, artist_id=artist_id, organisation_id=organisation_id,
                     q=q, has_tickets=has_tickets, max_price=max_price, min_price=min_price,
                     lat=lat, lng=lng, facets=facets)
    # The page first: a bad cursor is named with the filters' problems (edge/paging.py).
    # Its summaries as kept in this rendering, the others rendered and kept for the next.
    rendering = summary_rendering()
    page = paging.page(wanted, cursor, secret=settings().secret_key, fetch=lambda after: (
        events.list_events(session(), filters=wanted, today=today(), limit=limit, after=after,
                           rendering=rendering)))
    data, rendered = summaries_json(page.items)
    events.keep_summaries(session(), rendering, rendered)
    # The counts as JSON already (`models.facets.CountsJSON`), passed on as they are.
    counted = wanted.facets and {"facets": {
        facet: orjson.Fragment(counts) for facet, counts in
        facet_counts.count(session(), filters=wanted, today=today()).items()}}
    # Counts of the whole list: a change off the page may change them (no basis).
    return envelope.public_page(data, limit=limit, next_cursor=page.next_cursor,
                                meta=counted or None, basis=None if counted else page.basis)


def _detail_basis(id_: str) -> bytes | None:
    """What `get_event` would build its answer from now (`models.events.event_detail_basis`)."""
    return events.event_detail_basis(session(), id_)


@revalidated_by(_detail_basis)
def get_event(id_: str):
    """One event by id or slug, with its bill, set times and maps."""
    found = events.event_detail(session(), id_)
    return envelope.public(detail.dump(found.detail), basis=found.basis)

"""GET /venues and GET /venues/{id}: where events happen."""

from edge import paging
from edge.cache import revalidated_by
from edge.context import session, settings
from handlers import envelope
from models import venues
from models.calendar import today
from openapi.schemas.venues import VenueDetailSchema, VenueSummarySchema

summaries = VenueSummarySchema(many=True)
detail = VenueDetailSchema()


def list_venues(limit: int, cursor=None, city=None, q=None, with_events=None):
    """Venues by name, filtered by city, name and whether they have events coming."""
    wanted = venues.VenueFilters(city=city, q=q, with_events=with_events)
    page = paging.page(wanted, cursor, secret=settings().secret_key, fetch=lambda after: (
        venues.list_venues(session(), filters=wanted, today=today(), limit=limit, after=after)))
    return envelope.public_page(summaries.dump(page.items), limit=limit,
                                next_cursor=page.next_cursor)


def _detail_basis(id_: str) -> bytes | None:
    """What `get_venue` would build its answer from now (`models.venues.venue_basis`)."""
    return venues.venue_basis(session(), id_, today=today())


@revalidated_by(_detail_basis)
def get_venue(id_: str):
    """One venue with its practical profile and number of upcoming events."""
    profile = venues.get_venue(session(), id_, today=today())
    return envelope.public(detail.dump(profile), basis=profile.basis)

"""GET /venues and GET /venues/{id}: where events happen."""

from edge import paging
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


def get_venue(id_: str):
    """One venue with its practical profile and number of upcoming events."""
    return envelope.public(detail.dump(venues.get_venue(session(), id_, today=today())))

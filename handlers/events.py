"""GET /events and GET /events/{id}: the agenda."""

import datetime as dt

from edge.context import session
from handlers import envelope, paging
from models import events
from models.calendar import today
from openapi.schemas.events import EventDetailSchema, EventSummarySchema

summaries = EventSummarySchema(many=True)
detail = EventDetailSchema()


def list_events(limit: int, cursor=None, from_=None, to=None, radius_km=None, city=None,
                genre=None, venue_id=None, artist_id=None, organisation_id=None, q=None,
                has_tickets=None, max_price=None, min_price=None, lat=None, lng=None):
    """Approved NL and BE events, soonest first, from today unless `from` is given."""
    wanted = events.EventFilters(
        date_from=from_ and dt.date.fromisoformat(from_), date_to=to and dt.date.fromisoformat(to),
        radius_km=radius_km, city=city, genre=genre,
        venue_id=venue_id, artist_id=artist_id, organisation_id=organisation_id, q=q,
        has_tickets=has_tickets, max_price=max_price, min_price=min_price, lat=lat, lng=lng)
    binding = wanted.binding()
    page = events.list_events(session(), filters=wanted, today=today(), limit=limit,
                              after=paging.after(cursor, kind="events", filters=binding))
    return envelope.public_page(summaries.dump(page.items), limit=limit, next_cursor=(
        paging.next_cursor(page, kind="events", filters=binding)))


def get_event(id_: str):
    """One event by id or slug, with its bill, set times and maps."""
    return envelope.public(detail.dump(events.get_event(session(), id_)))

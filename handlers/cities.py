"""GET /cities: where the agenda has events coming."""

from edge import paging
from edge.context import session, settings
from handlers import envelope
from models import cities
from models.calendar import today
from openapi.schemas.cities import CitySchema

listing = CitySchema(many=True)


def list_cities(limit: int, cursor=None, country=None):
    """Cities with upcoming events, busiest first."""
    wanted = cities.CityFilters(country=country)
    page = paging.page(wanted, cursor, secret=settings().secret_key, fetch=lambda after: (
        cities.list_cities(session(), filters=wanted, today=today(), limit=limit, after=after)))
    return envelope.public_page(listing.dump(page.items), limit=limit,
                                next_cursor=page.next_cursor)

"""GET /cities: where the agenda has events coming."""

from edge.context import session
from handlers import envelope, paging
from models import cities
from models.calendar import today
from openapi.schemas.cities import CitySchema

listing = CitySchema(many=True)


def list_cities(limit: int, cursor=None, country=None):
    """Cities with upcoming events, busiest first."""
    binding = {"country": country} if country else {}
    page = cities.list_cities(session(), country=country, today=today(), limit=limit,
                              after=paging.after(cursor, kind="cities", filters=binding))
    return envelope.public_page(listing.dump(page.items), limit=limit, next_cursor=(
        paging.next_cursor(page, kind="cities", filters=binding)))

"""GET /radar: new releases by artists in the agenda."""

from edge import paging
from edge.context import session, settings
from handlers import envelope
from models import releases
from models.calendar import today
from openapi.schemas.releases import ReleaseSchema

listing = ReleaseSchema(many=True)


def list_releases(limit: int, weeks: int = 4, cursor=None, genre=None):
    """New singles, EPs and albums of the last weeks, newest first, with the next event."""
    wanted = releases.RadarFilters(weeks=weeks, genre=genre)
    page = paging.page(wanted, cursor, secret=settings().secret_key, fetch=lambda after: (
        releases.list_new_releases(session(), filters=wanted, today=today(), limit=limit,
                                   after=after)))
    return envelope.public_page(listing.dump(page.items), limit=limit,
                                next_cursor=page.next_cursor)

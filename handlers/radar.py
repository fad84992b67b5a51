"""GET /radar: new releases by artists in the agenda."""

from edge.context import session
from handlers import envelope, paging
from models import releases
from models.calendar import today
from openapi.schemas.releases import ReleaseSchema

listing = ReleaseSchema(many=True)


def list_releases(limit: int, weeks: int = 4, cursor=None, genre=None):
    """New singles, EPs and albums of the last weeks, newest first, with the next event."""
    binding = {"weeks": str(weeks), **({"genre": genre} if genre else {})}
    page = releases.list_new_releases(
        session(), weeks=weeks, genre=genre, today=today(), limit=limit,
        after=paging.after(cursor, kind="radar", filters=binding))
    return envelope.public_page(listing.dump(page.items), limit=limit, next_cursor=(
        paging.next_cursor(page, kind="radar", filters=binding)))

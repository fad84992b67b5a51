"""GET /genres: the fixed genre list."""

from edge import paging
from edge.context import session, settings
from handlers import envelope
from models import genres
from openapi.schemas.genres import GenreSchema

genre_schema = GenreSchema(many=True)


def list_genres(limit: int, cursor: str | None = None):
    """The fixed genre list, in its order."""
    page = paging.page(genres.GenreFilters(), cursor, secret=settings().secret_key,
                       fetch=lambda after: genres.list_genres(session(), after=after, limit=limit))
    return envelope.public_page(genre_schema.dump(page.items), limit=limit,
                                next_cursor=page.next_cursor)

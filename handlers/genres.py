"""GET /genres: the fixed genre list."""

from edge.context import session
from handlers import envelope, paging
from models import genres
from openapi.schemas.genres import GenreSchema

genre_schema = GenreSchema(many=True)


def list_genres(limit: int, cursor: str | None = None):
    """The fixed genre list, in its order."""
    after = paging.after(cursor, kind="genres", filters={})
    page = genres.list_genres(session(), after=after, limit=limit)
    return envelope.public_page(genre_schema.dump(page.items), limit=limit,
                                next_cursor=paging.next_cursor(page, kind="genres", filters={}))

"""GET /artists and GET /artists/{id}: who plays."""

from edge import paging
from edge.cache import revalidated_by
from edge.context import session, settings
from handlers import envelope
from models import artists
from models.calendar import today
from openapi.schemas.artists import ArtistDetailSchema, ArtistSummarySchema

summaries = ArtistSummarySchema(many=True)
detail = ArtistDetailSchema()


def list_artists(limit: int, cursor=None, q=None, genre=None, country=None):
    """Artists by name, filtered by name, primary genre and country."""
    wanted = artists.ArtistFilters(q=q, genre=genre, country=country)
    page = paging.page(wanted, cursor, secret=settings().secret_key, fetch=lambda after: (
        artists.list_artists(session(), filters=wanted, limit=limit, after=after)))
    return envelope.public_page(summaries.dump(page.items), limit=limit,
                                next_cursor=page.next_cursor)


def _detail_basis(id_: str) -> bytes | None:
    """What `get_artist` would build its answer from now (`models.artists.artist_basis`)."""
    return artists.artist_basis(session(), id_, today=today())


@revalidated_by(_detail_basis)
def get_artist(id_: str):
    """One artist with bio, links, releases and next dates."""
    profile = artists.get_artist(session(), id_, today=today())
    return envelope.public(detail.dump(profile), basis=profile.basis)

"""GET /organisations and GET /organisations/{id}: who puts events in the agenda."""

from edge import paging
from edge.context import session, settings
from handlers import envelope
from models import organisations
from openapi.schemas.organisations import OrganisationSchema

listing = OrganisationSchema(many=True)
one = OrganisationSchema()


def list_organisations(limit: int, cursor=None, q=None, verified=None):
    """Organisations by name, filtered by name and whether the service checked them."""
    wanted = organisations.OrganisationFilters(q=q, verified=verified)
    page = paging.page(wanted, cursor, secret=settings().secret_key, fetch=lambda after: (
        organisations.list_organisations(session(), filters=wanted, limit=limit, after=after)))
    return envelope.public_page(listing.dump(page.items), limit=limit,
                                next_cursor=page.next_cursor)


def get_organisation(id_: str):
    """One organisation with its number of approved events."""
    return envelope.public(one.dump(organisations.get_listed_organisation(session(), id_)))

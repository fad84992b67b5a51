"""GET /organisations and GET /organisations/{id}: who puts events in the agenda."""

from edge.context import session
from handlers import envelope, paging
from models import organisations
from openapi.schemas.organisations import OrganisationSchema

listing = OrganisationSchema(many=True)
one = OrganisationSchema()


def list_organisations(limit: int, cursor=None, q=None, verified=None):
    """Organisations by name, filtered by name and whether the service checked them."""
    wanted = organisations.OrganisationFilters(q=q, verified=verified)
    binding = wanted.binding()
    page = organisations.list_organisations(
        session(), filters=wanted, limit=limit,
        after=paging.after(cursor, kind="organisations", filters=binding))
    return envelope.public_page(listing.dump(page.items), limit=limit, next_cursor=(
        paging.next_cursor(page, kind="organisations", filters=binding)))


def get_organisation(id_: str):
    """One organisation with its number of approved events."""
    return envelope.public(one.dump(organisations.get_listed_organisation(session(), id_)))

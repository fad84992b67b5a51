"""GET /changes: the change feed, for partners that keep a copy of the catalogue."""

from edge import paging
from edge.context import session, settings
from handlers import envelope
from models import changes
from models.db import now
from openapi.schemas.changes import ChangeSchema

change_schema = ChangeSchema(many=True)


def list_changes(limit: int, cursor=None, since=None, types=None):
    """Changes to public resources in commit order, from `since` or a cursor."""
    wanted = changes.ChangeFilters.of(types)
    # The feed's cursors live as long as the changes they point after (models/changes.py).
    page = paging.page(wanted, cursor, secret=settings().secret_key, lifetime=None,
                       fetch=lambda after: changes.list_changes(
                           session(), filters=wanted, since=since, after=after, limit=limit,
                           now=now()))
    return envelope.public_page(change_schema.dump(page.items), limit=limit,
                                next_cursor=page.next_cursor)

"""GET /me: the caller's token, organisation, limits and today's usage."""

from edge.context import caller, service, session
from handlers import envelope
from models import tokens
from openapi.schemas.account import MeSchema

me_schema = MeSchema()


def get_me():
    """The token, its organisation, its limits and today's usage per route."""
    current = service()
    me = tokens.describe_token(session(), caller(), usage=current.usage,
                                 routes=current.routes.templates())
    return envelope.private(me_schema.dump(me))

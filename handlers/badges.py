"""GET /badges and GET /users/{id}/badges: what can be earned, and what a person earned."""

from edge import paging
from edge.context import session, settings
from handlers import envelope
from models import badges
from openapi.schemas.badges import BadgeSchema, UserBadgeSchema, UserRefSchema

catalogue = BadgeSchema(many=True)
earned = UserBadgeSchema(many=True)
user = UserRefSchema()


def list_badges(limit: int, cursor=None):
    """The badge catalogue by family, then tier."""
    page = paging.page(badges.BadgeFilters(), cursor, secret=settings().secret_key,
                       fetch=lambda after: badges.list_badges(session(), after=after, limit=limit))
    return envelope.public_page(catalogue.dump(page.items), limit=limit,
                                next_cursor=page.next_cursor)


def list_user_badges(id_: str, limit: int, cursor=None):
    """The badges a public profile earned, newest first."""
    person = badges.get_public_person(session(), id_)
    page = paging.page(badges.EarnedFilters(user=person.id), cursor, secret=settings().secret_key,
                       fetch=lambda after: badges.list_earned(session(), person, limit=limit,
                                                              after=after))
    return envelope.public_page(
        earned.dump(page.items), limit=limit, next_cursor=page.next_cursor,
        meta={"user": user.dump(person), "catalogue": badges.catalogue_size(session())})

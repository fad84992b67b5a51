"""GET /badges and GET /users/{id}/badges: what can be earned, and what a person earned."""

from edge.context import session
from handlers import envelope, paging
from models import badges
from openapi.schemas.badges import BadgeSchema, UserBadgeSchema, UserRefSchema

catalogue = BadgeSchema(many=True)
earned = UserBadgeSchema(many=True)
user = UserRefSchema()


def list_badges(limit: int, cursor=None):
    """The badge catalogue by family, then tier."""
    page = badges.list_badges(session(), limit=limit,
                              after=paging.after(cursor, kind="badges", filters={}))
    return envelope.public_page(catalogue.dump(page.items), limit=limit,
                                next_cursor=paging.next_cursor(page, kind="badges", filters={}))


def list_user_badges(id_: str, limit: int, cursor=None):
    """The badges a public profile earned, newest first."""
    person = badges.get_public_person(session(), id_)
    binding = {"user": person.id}
    page = badges.list_earned(session(), person, limit=limit, after=paging.after(
        cursor, kind="user_badges", filters=binding))
    return envelope.public_page(
        earned.dump(page.items), limit=limit,
        next_cursor=paging.next_cursor(page, kind="user_badges", filters=binding),
        meta={"user": user.dump(person), "catalogue": badges.catalogue_size(session())})

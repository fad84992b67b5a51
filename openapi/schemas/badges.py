"""`Badge`, `UserBadge` and `UserRef`."""

from marshmallow import fields

from openapi.schemas import OutputSchema, site_url


def _localized(name: str, *, badge_of=lambda obj: obj):
    """`LocalizedText` from the badge's `<name>_nl` and `<name>_en` columns."""
    return fields.Function(lambda obj: {"nl": getattr(badge_of(obj), f"{name}_nl"),
                                        "en": getattr(badge_of(obj), f"{name}_en")})


class BadgeSchema(OutputSchema):
    """`Badge`: one badge of the catalogue."""

    id = fields.String()
    family = fields.String()
    tier = fields.Integer()
    mark = fields.String()
    name = _localized("name")
    description = _localized("description")
    counts = fields.String()
    needs = fields.Integer()


class UserBadgeSchema(OutputSchema):
    """`UserBadge`: a badge a person earned, with the count behind it and when."""

    id = fields.Function(lambda earned: earned.badge.id)
    family = fields.Function(lambda earned: earned.badge.family)
    tier = fields.Function(lambda earned: earned.badge.tier)
    name = _localized("name", badge_of=lambda earned: earned.badge)
    description = _localized("description", badge_of=lambda earned: earned.badge)
    value = fields.Integer()
    earned_at = fields.Integer()


class UserRefSchema(OutputSchema):
    """`UserRef`: the public profile the badges belong to."""

    id = fields.String()
    handle = fields.String()
    name = fields.String()
    url = fields.Function(lambda person: f"{site_url()}/users/{person.handle}")

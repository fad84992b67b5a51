"""`Me`: the caller's own token, organisation, limits and usage."""

from marshmallow import fields

from openapi.schemas import OutputSchema

from openapi.schemas.organisations import OrganisationSchema


class TokenSchema(OutputSchema):
    """`Me.token`: the caller's own token, without its secret."""

    id = fields.String()
    name = fields.String()
    prefix = fields.String()
    scopes = fields.List(fields.String(), attribute="scope_list")
    created_at = fields.Integer()
    last_used_at = fields.Function(lambda token: token.last_used_at or token.created_at)


class RateLimitSchema(OutputSchema):
    """`Me.rate_limit`."""

    per_minute = fields.Integer()
    remaining_this_minute = fields.Integer()
    per_day = fields.Integer()
    used_today = fields.Integer()


class MeSchema(OutputSchema):
    """`Me`: the token, its organisation, limits and today's usage."""

    token = fields.Nested(TokenSchema)
    organisation = fields.Nested(OrganisationSchema)
    rate_limit = fields.Nested(RateLimitSchema)
    usage_today = fields.List(fields.Dict())

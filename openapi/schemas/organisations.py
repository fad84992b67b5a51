"""`Organisation`."""

from marshmallow import fields

from openapi.schemas import OutputSchema, page_url


class OrganisationSchema(OutputSchema):
    """`Organisation`."""

    id = fields.String()
    name = fields.String()
    bio = fields.String()
    website = fields.String()
    url = page_url("organisations")
    verified = fields.Boolean()
    since = fields.Integer()
    events_count = fields.Integer()

"""`Organisation`."""

from marshmallow import Schema, fields

from openapi.schemas import page_url


class OrganisationSchema(Schema):
    """`Organisation`."""

    id = fields.String()
    name = fields.String()
    bio = fields.String()
    website = fields.String()
    url = page_url("organisations")
    verified = fields.Boolean()
    since = fields.Integer()
    events_count = fields.Integer()

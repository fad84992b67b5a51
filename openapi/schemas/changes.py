"""`Change`."""

from marshmallow import fields

from openapi.schemas import OutputSchema


class ChangeSchema(OutputSchema):
    """`Change`: one item of the change feed."""

    type = fields.String()
    id = fields.String()
    op = fields.String()
    at = fields.Integer()

"""`Change`."""

from marshmallow import Schema, fields


class ChangeSchema(Schema):
    """`Change`: one item of the change feed."""

    type = fields.String()
    id = fields.String()
    op = fields.String()
    at = fields.Integer()

"""`Genre`."""

from marshmallow import fields

from openapi.schemas import OutputSchema


class GenreSchema(OutputSchema):
    """`Genre`: an entry of the fixed list."""

    name = fields.String()
    group = fields.String()
    slug = fields.String()

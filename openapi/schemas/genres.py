"""`Genre`."""

from marshmallow import Schema, fields


class GenreSchema(Schema):
    """`Genre`: an entry of the fixed list."""

    name = fields.String()
    group = fields.String()
    slug = fields.String()

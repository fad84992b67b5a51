"""`City`."""

from marshmallow import fields

from openapi.schemas import OutputSchema, site_url


class CitySchema(OutputSchema):
    """`City`: a city with at least one upcoming event."""

    name = fields.String()
    country = fields.String()
    upcoming_events = fields.Integer()
    lat = fields.Float()
    lng = fields.Float()
    url = fields.Function(lambda city: f"{site_url()}/cities/{city.slug}")

"""`VenueSummary` and `VenueDetail`."""

from marshmallow import fields

from openapi.schemas import OutputSchema, page_url


class VenueSummarySchema(OutputSchema):
    """`VenueSummary`: a venue as listed."""

    id = fields.String()
    name = fields.String()
    city = fields.String()
    area = fields.String()
    address = fields.String()
    website = fields.String()
    image_url = fields.String()
    url = page_url("venues")
    lat = fields.Float()
    lng = fields.Float()
    tags = fields.List(fields.String())
    rating = fields.Float()
    reviews_count = fields.Integer()


class VenueDetailSchema(VenueSummarySchema):
    """`VenueDetail`: the summary plus the practical profile and the events coming."""

    info = fields.String()
    accessibility = fields.String()
    rules = fields.List(fields.String())
    rules_url = fields.String()
    # Only the keys that are known (`VenueFacts`).
    facts = fields.Dict(attribute="known_facts")
    upcoming_events = fields.Integer()

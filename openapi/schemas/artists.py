"""`ArtistSummary` and `ArtistDetail`."""

from marshmallow import fields

from openapi.schemas import OutputSchema, page_url
from openapi.schemas.events import EventSummarySchema


class AgencySchema(OutputSchema):
    """`Agency`: an artist's booking agency."""

    name = fields.String()
    url = fields.String()


class ArtistReleaseSchema(OutputSchema):
    """`ArtistRelease`: a release in an artist's discography."""

    title = fields.String()
    year = fields.Function(lambda release: release.release_date.year)


class ArtistSummarySchema(OutputSchema):
    """`ArtistSummary`: an artist as listed."""

    id = fields.String()
    name = fields.String()
    genre = fields.String()
    country = fields.String()
    city = fields.String()
    image_url = fields.String()
    url = page_url("artists")
    verified = fields.Boolean()
    links = fields.Dict(keys=fields.String(), values=fields.String())


class ArtistDetailSchema(ArtistSummarySchema):
    """`ArtistDetail`: the summary plus bio, aliases, agency, releases and next dates."""

    bio = fields.String()
    aliases = fields.List(fields.String())
    agency = fields.Nested(AgencySchema, allow_none=True)
    releases = fields.List(fields.Nested(ArtistReleaseSchema))
    upcoming_events = fields.List(fields.Nested(EventSummarySchema))

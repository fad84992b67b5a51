"""`Release` (items of GET /radar)."""

from marshmallow import fields

from openapi.schemas import OutputSchema, page_url, site_url


class ReleaseArtistSchema(OutputSchema):
    """`ReleaseArtist`: an artist of a release."""

    id = fields.String()
    name = fields.String()
    url = page_url("artists")


class ReleaseNextEventSchema(OutputSchema):
    """`ReleaseNextEvent`: the soonest upcoming event of the release's artists."""

    id = fields.String()
    title = fields.String()
    date = fields.Date()
    city = fields.String()
    # Public pages of events are addressed by slug.
    url = fields.Function(lambda event: f"{site_url()}/events/{event.slug}")


class ReleaseSchema(OutputSchema):
    """`Release`: a new single, EP or album by artists in the agenda."""

    title = fields.String()
    type = fields.String()
    release_date = fields.Date()
    genre = fields.String()
    artists = fields.List(fields.Nested(ReleaseArtistSchema), attribute="credited_artists")
    # An empty link is no link.
    spotify_url = fields.Function(lambda release: release.spotify_url or None)
    apple_music_url = fields.Function(lambda release: release.apple_music_url or None)
    cover_url = fields.String()
    next_event = fields.Nested(ReleaseNextEventSchema)

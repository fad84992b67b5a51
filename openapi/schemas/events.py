"""`EventSummary`, `EventDetail` and the facet counts of the events list; the summaries a
list keeps as JSON (`summaries_json`)."""

import functools
import hashlib

import orjson
from marshmallow import fields

from openapi.schemas import OutputSchema, fingerprint, site_url


class VenueRefSchema(OutputSchema):
    """`VenueRef`: the venue inside an event."""

    id = fields.String()
    name = fields.String()
    city = fields.String()
    address = fields.String()
    lat = fields.Float()
    lng = fields.Float()


class OrganisationRefSchema(OutputSchema):
    """`OrganisationRef`: the organiser inside an event."""

    id = fields.String()
    name = fields.String()


class EventSummarySchema(OutputSchema):
    """`EventSummary`: an event in lists and inside artist detail."""

    id = fields.String()
    slug = fields.String()
    title = fields.String()
    date = fields.Date()
    end_date = fields.Date(allow_none=True)
    start = fields.String()
    end = fields.String()
    timezone = fields.String()
    status = fields.String()
    cancelled = fields.Boolean()
    cancel_reason = fields.String(allow_none=True)
    postponed_to = fields.Date(allow_none=True)
    genres = fields.List(fields.String(), attribute="genre_names")
    price = fields.Float(allow_none=True)
    price_max = fields.Float(allow_none=True)
    currency = fields.String()
    age = fields.Integer()
    ticket_url = fields.String(allow_none=True)
    artwork_url = fields.String()
    venue = fields.Nested(VenueRefSchema)
    organisation = fields.Nested(OrganisationRefSchema)
    # Public pages of events are addressed by slug.
    url = fields.Function(lambda event: f"{site_url()}/events/{event.slug}")
    updated_at = fields.Integer()


class LineupEntrySchema(OutputSchema):
    """`LineupEntry`: one act on the bill, `order` from 0."""

    id = fields.String(attribute="artist_id")
    name = fields.String()
    order = fields.Integer(attribute="position")


class EventDetailSchema(EventSummarySchema):
    """`EventDetail`: the summary plus bill, set times, maps, rules and origin."""

    description = fields.String()
    lineup = fields.List(fields.Nested(LineupEntrySchema))
    timetable = fields.Dict()
    maps = fields.List(fields.Dict())
    rules = fields.List(fields.String())
    dress = fields.String(allow_none=True)
    source = fields.String()
    source_url = fields.String()


_summary = EventSummarySchema()


def summary_rendering() -> str:
    """The rendering of event summaries that a list reads kept and keeps
    (models/events.py `KEPT_SUMMARIES`): the schema's fingerprint and the site its links
    point to, as a digest."""
    return _rendering(site_url())


@functools.lru_cache(maxsize=16)
def _rendering(site: str) -> str:
    return hashlib.sha256(f"{fingerprint(EventSummarySchema)}\x1f{site}".encode()
                          ).hexdigest()[:32]


def summaries_json(listed: list) -> tuple[list, list[tuple[str, str, str]]]:
    """A page's summaries (models/events.py `Listed`) as orjson writes them, in order: each
    kept JSON as it is (an `orjson.Fragment`), each other summary dumped by the schema and
    serialized (the same bytes as in a list of dicts); and those rendered here from a row
    with a version, as (id, version, JSON), to keep (`models.events.keep_summaries`)."""
    data, rendered = [], []
    for item in listed:
        if item.fragment is not None:
            data.append(orjson.Fragment(item.fragment))
            continue
        text = orjson.dumps(_summary.dump(item.summary))
        data.append(orjson.Fragment(text))
        if item.version is not None:
            rendered.append((item.id, item.version, text.decode()))
    return data, rendered

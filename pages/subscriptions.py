"""Calendar subscriptions: the filters of GET /v1/events read from a page's query string and
checked exactly as the REST API checks them (the same parameters of the same document), the
name a feed is shown under, and the webcal:// address of a feed."""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

from connexion.uri_parsing import OpenAPIURIParser
from werkzeug.datastructures import MultiDict

from edge.openapi import parameter_errors, resolve
from edge.problems import rest_params
from models.errors import BadRequest
from models.events import DEFAULT_RADIUS_KM, EventFilters

# Events in a feed (the first of the list), and feed fetches per client address and minute
# (a subscribed calendar app fetches once an hour).
FEED_LIMIT = 500
FEED_PER_MINUTE = 20
# Parameters of GET /v1/events that page or shape the answer rather than filter the list.
NOT_FILTERS = frozenset({"limit", "cursor", "facets"})
# REST query names of the filters that EventFilters names otherwise.
FIELDS = {"from": "date_from", "to": "date_to"}


def _parameters(document: dict) -> list[dict]:
    """The filter parameters of GET /v1/events in the served document."""
    operation = document["paths"]["/events"]["get"]
    parameters = (resolve(document, p) for p in operation["parameters"])
    return [{**p, "schema": resolve(document, p.get("schema", {}))} for p in parameters
            if p["in"] == "query" and p["name"] not in NOT_FILTERS]


def filters_of(document: dict, query: MultiDict) -> EventFilters:
    """The filters of a query string, as GET /v1/events reads them; `BadRequest` naming every
    bad parameter as the REST API names it."""
    parameters = _parameters(document)
    values = OpenAPIURIParser(parameters, {}).resolve_query(query.to_dict(flat=False))
    params = parameter_errors({"query": parameters}, {"query": values}, query)
    if params:
        raise BadRequest(params)
    wanted = EventFilters.of(**{FIELDS.get(name, name): value for name, value in values.items()})
    try:
        wanted.check()
    except BadRequest as error:
        raise BadRequest(rest_params(error.params)) from error
    return wanted


def query_of(filters: EventFilters) -> dict[str, str]:
    """The query string parameters (REST names) of `filters`."""
    names = {field: name for name, field in FIELDS.items()}
    return {names.get(field, field): value for field, value in filters.binding().items()
            if field != "country" and not (field == "radius_km" and filters.lat is None)}


def webcal(site_url: str, **params) -> str:
    """The webcal:// address of the feed of these filters (REST names), for a Subscribe link."""
    given = {name: value for name, value in params.items() if value not in (None, "")}
    parts = urlsplit(site_url)
    query = f"?{urlencode(given)}" if given else ""
    return f"webcal://{parts.netloc}{parts.path.rstrip('/')}/calendar.ics{query}"


def name_of(filters: EventFilters, *, venue: str | None = None, artist: str | None = None,
            organisation: str | None = None) -> str:
    """What the feed holds, in words: "Techno in Amsterdam"."""
    radius = filters.radius_km or DEFAULT_RADIUS_KM
    phrases = (
        ('matching "{}"', filters.q), ("in {}", filters.city),
        ("at {}", venue or filters.venue_id), ("with {}", artist or filters.artist_id),
        ("by {}", organisation or filters.organisation_id),
        ("within {}", None if filters.lat is None
         else f"{radius} km of {filters.lat}, {filters.lng}"),
        ("from {}", filters.date_from and filters.date_from.isoformat()),
        ("until {}", filters.date_to and filters.date_to.isoformat()),
        ("from €{:g}", filters.min_price), ("up to €{:g}", filters.max_price),
        ("{} tickets on sale", None if filters.has_tickets is None
         else ("with" if filters.has_tickets else "without")),
    )
    return " ".join([filters.genre or "Events",
                     *(phrase.format(value) for phrase, value in phrases if value is not None)])

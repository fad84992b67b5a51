"""The MCP tools: what a REST caller can do, for an assistant, within its token's scopes.

Each tool calls the same domain function as its REST handler and dumps with the
same marshmallow schema, so a tool's `data` equals the REST answer's `data`.
Lists page with the REST cursors (the same kit, edge/paging.py). Public
catalogue results carry the attribution the terms require and every object its
public page link (`url`). Arguments are as strict as the REST parameters
(mcp_server/arguments.py), results are typed by the document's schema of the same REST
answer (mcp_server/outputs.py) and their text is the same JSON, compact.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import functools
from importlib import metadata
from typing import Annotated, Any, Literal

import orjson
from marshmallow.experimental.context import Context as SchemaContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict, Field

from edge import paging
from mcp_server import outputs
from mcp_server.arguments import (Country, Cursor, EventRef, Genre, Id, Limit, Place, Price,
                                  Ref, Sold, TicketCode, Weeks, Words)
from openapi.schemas import attribution
from openapi.schemas.account import MeSchema
from openapi.schemas.artists import ArtistDetailSchema, ArtistSummarySchema
from openapi.schemas.badges import BadgeSchema, UserBadgeSchema, UserRefSchema
from openapi.schemas.cities import CitySchema
from openapi.schemas.events import EventDetailSchema, EventFacetsSchema, EventSummarySchema
from openapi.schemas.festivals import TokenPricesSchema, TokenReportSchema
from openapi.schemas.genres import GenreSchema
from openapi.schemas.organisations import OrganisationSchema
from openapi.schemas.organiser import AttendanceSchema, ExternalSalesSchema, ScanResultSchema
from openapi.schemas.releases import ReleaseSchema
from openapi.schemas.venues import VenueDetailSchema, VenueSummarySchema
from mcp_server.identity import Identity
from models import (artists, attendance, badges, calendar, cities, door, events,
                    festivals, genres, organisations, releases, sales, tokens, venues)
from models import facets as facet_counts
from models.db import now
from models.errors import DomainError
from models.unit_of_work import transaction

# The scope every tool needs (tools/list shows a tool only to a token that may call it).
SCOPES: dict[str, str] = {}
MCP_ROUTE = "/mcp"
PACKAGE = "event-agenda-service"

# What every tool returns: the REST answer's `data` and its `meta` (without request id).
Answer = dict[str, Any]


@dataclasses.dataclass
class Call:
    """One tool call: its database session, the service's settings and the caller."""

    session: Any
    settings: Any
    identity: Identity
    service: Any

    @property
    def organisation_id(self) -> str:
        return self.identity.caller.organisation_id

    def own_event(self, key: str):
        """An event of the caller's organisation (another's is not found, as on REST)."""
        return events.get_own_event(self.session, key, organisation_id=self.organisation_id)

    def today(self) -> dt.date:
        return calendar.today()

    def public(self, data, **meta) -> Answer:
        """A public catalogue result, with the attribution the terms require."""
        return {"data": data, "meta": {**meta, "attribution": attribution(self.settings)}}

    def page(self, filters, cursor: str | None, *, limit: int, schema, fetch, **meta) -> Answer:
        """A public list page: `fetch(after)` is the domain call; cursors as on REST."""
        found = paging.page(filters, cursor, secret=self.settings.secret_key, fetch=fetch)
        items = schema.dump(found.items)
        return self.public(items, **meta, count=len(items), limit=limit,
                           next_cursor=found.next_cursor)


@contextlib.contextmanager
def opened(ctx: Context, scope: str):
    """A `Call` for a tool that needs `scope`: one transaction, committed when it succeeds.

    Domain errors become tool errors (`isError` results) with the REST message.
    """
    request = ctx.request_context.request
    identity: Identity = request.scope["state"]["mcp_identity"]
    service = request.scope["state"]["agenda_service"]
    if not identity.may(scope):
        raise ToolError(f"This token lacks the scope {scope!r} this tool needs.")
    try:
        with transaction(service.sessions) as session, \
                SchemaContext({"site_url": service.settings.site_url}):
            yield Call(session=session, settings=service.settings, identity=identity,
                       service=service)
    except DomainError as error:
        # A tool's arguments are named as the domain names its fields (`date_to`, where REST
        # says `to`), so the fields are told as the error names them.
        params = error.params
        detail = "; ".join(f"{p['name']}: {p['message']}" for p in params) if params else ""
        raise ToolError(f"{error.message} {detail}".strip()) from error


@dataclasses.dataclass(frozen=True)
class Registered:
    """A tool as registered here, before the server is built with the document."""

    fn: Any
    title: str
    description: str
    # The REST operation whose answer (less the request id) the tool's result is.
    answers: str | None
    annotations: ToolAnnotations


# The hints of a tool that only reads.
READS = ToolAnnotations(readOnlyHint=True, openWorldHint=False)


def tool(scope: str, title: str, description: str, *, answers: str | None,
         hints: ToolAnnotations = READS):
    """Register a function as a tool needing `scope`, whose result is the REST answer of the
    operation `answers`. The description is given here, not taken from the docstring:
    workers run with `python -OO` (agenda/cli.py), which drops docstrings."""

    def register(fn):
        SCOPES[fn.__name__] = scope
        _TOOLS.append(Registered(_answering(fn), title, description, answers, hints))
        return fn

    return register


def _answering(fn):
    """`fn` giving its answer as a tool result: the answer as structured content and, for
    clients that read only text, the same JSON, compact."""

    @functools.wraps(fn)
    def result(*args, **kwargs) -> CallToolResult:
        answer = fn(*args, **kwargs)
        return CallToolResult(content=[TextContent(type="text",
                                                   text=orjson.dumps(answer).decode())],
                              structured_content=answer)

    return result


_TOOLS: list[Registered] = []


# ---------------------------------------------------------------------------
# The agenda (scope read)
# ---------------------------------------------------------------------------


@tool("read", "Search events",
      "Search approved nightlife events in NL and BE, soonest first, with every filter of GET "
      "/events. Each event has its public page `url`; cite the attribution when showing them.",
      answers="list_events")
def search_events(
        ctx: Context,
        city: Annotated[Place, Field(description="The venue's city, case-insensitive.")] = None,
        genre: Annotated[Genre, Field(description="A genre exactly as list_genres spells "
                                                  "it.")] = None,
        date_from: Annotated[dt.date | None, Field(description="First date (default: today in "
                                                               "Europe/Amsterdam).")] = None,
        date_to: Annotated[dt.date | None, Field(description="Last date, inclusive.")] = None,
        venue_id: Annotated[Ref, Field(description="Only events at this venue.")] = None,
        artist_id: Annotated[Ref, Field(description="Only events this artist is billed "
                                                    "on.")] = None,
        organisation_id: Annotated[Ref, Field(description="Only events of this "
                                                          "organisation.")] = None,
        q: Annotated[Words, Field(description="Free text over title and venue name.")] = None,
        has_tickets: Annotated[bool | None, Field(description="true: only events on sale now; "
                                                              "false: only those not.")] = None,
        max_price: Annotated[Price, Field(description="Cheapest ticket at most this, euros; "
                                                      "0: free entry only.")] = None,
        min_price: Annotated[Price, Field(description="Cheapest ticket at least this, "
                                                      "euros.")] = None,
        lat: Annotated[float | None, Field(ge=-90, le=90, description="Latitude of the centre "
                                                                      "of a radius search; "
                                                                      "needs lng.")] = None,
        lng: Annotated[float | None, Field(ge=-180, le=180, description="Longitude of the "
                                                                        "centre of a radius "
                                                                        "search; needs "
                                                                        "lat.")] = None,
        radius_km: Annotated[int | None, Field(ge=1, le=200, description="Distance from "
                                               "lat,lng in km (default 25); needs lat and "
                                               "lng.")] = None,
        facets: Annotated[list[Literal["genre", "city", "date"]] | None, Field(
            description="Counts of the whole list per genre, city and/or day (meta.facets), as "
                        "GET /events?facets= gives them.")] = None,
        limit: Limit = 25, cursor: Cursor = None) -> Answer:
    with opened(ctx, "read") as call:
        wanted = events.EventFilters.of(
            date_from=date_from, date_to=date_to, radius_km=radius_km, city=city, genre=genre,
            venue_id=venue_id, artist_id=artist_id, organisation_id=organisation_id, q=q,
            has_tickets=has_tickets, max_price=max_price, min_price=min_price, lat=lat, lng=lng,
            facets=facet_counts.parse(",".join(facets)) if facets else None)
        counted = {"facets": EventFacetsSchema().dump(facet_counts.count(
            call.session, filters=wanted, today=call.today()))} if wanted.facets else {}
        return call.page(wanted, cursor, limit=limit, schema=EventSummarySchema(many=True),
                         fetch=lambda after: events.list_events(
                             call.session, filters=wanted, today=call.today(), limit=limit,
                             after=after), **counted)


@tool("read", "Event detail", "One event by id or slug, with its bill, set times and maps.",
      answers="get_event")
def get_event(ctx: Context, id: Annotated[Id, Field(description="Event id or slug.")]) -> Answer:
    with opened(ctx, "read") as call:
        return call.public(EventDetailSchema().dump(events.event_detail(call.session, id).detail))


@tool("read", "Drink-token prices",
      "Drink-token price figures of a festival edition, from its visitors' reports (not found "
      "when the event is not a festival).", answers="get_token_prices")
def get_token_prices(ctx: Context, event_id: Annotated[Id, Field(
        description="Festival edition id or slug.")]) -> Answer:
    with opened(ctx, "read") as call:
        return call.public(TokenPricesSchema().dump(festivals.token_prices(call.session,
                                                                           event_id)))


@tool("read", "Drink-token reports",
      "The individual drink-token price reports of a festival edition, newest first.",
      answers="list_token_reports")
def list_token_reports(ctx: Context, event_id: Annotated[Id, Field(
        description="Festival edition id or slug.")], limit: Limit = 25,
                       cursor: Cursor = None) -> Answer:
    with opened(ctx, "read") as call:
        return call.page(festivals.ReportFilters(event=event_id), cursor, limit=limit,
                         schema=TokenReportSchema(many=True),
                         fetch=lambda after: festivals.list_reports(
                             call.session, event_id, limit=limit, after=after))


@tool("read", "Search venues",
      "Venues by name, filtered by city, name and whether they have events coming.",
      answers="list_venues")
def search_venues(ctx: Context,
                  city: Annotated[Place, Field(description="The venue's city, "
                                                           "case-insensitive.")] = None,
                  q: Annotated[Words, Field(description="Free text over the name.")] = None,
                  with_events: Annotated[bool | None, Field(
                      description="true: only venues with events from today on.")] = None,
                  limit: Limit = 25, cursor: Cursor = None) -> Answer:
    with opened(ctx, "read") as call:
        wanted = venues.VenueFilters(city=city, q=q, with_events=with_events)
        return call.page(wanted, cursor, limit=limit, schema=VenueSummarySchema(many=True),
                         fetch=lambda after: venues.list_venues(
                             call.session, filters=wanted, today=call.today(), limit=limit,
                             after=after))


@tool("read", "Venue detail",
      "One venue with its practical profile and number of upcoming events.",
      answers="get_venue")
def get_venue(ctx: Context, id: Annotated[Id, Field(description="Venue id.")]) -> Answer:
    with opened(ctx, "read") as call:
        return call.public(VenueDetailSchema().dump(
            venues.get_venue(call.session, id, today=call.today())))


@tool("read", "Search artists", "Artists by name, filtered by name, primary genre and country.",
      answers="list_artists")
def search_artists(ctx: Context,
                   q: Annotated[Words, Field(description="Free text over the name.")] = None,
                   genre: Annotated[Genre, Field(description="Primary genre, exactly as "
                                                             "list_genres spells it.")] = None,
                   country: Annotated[Place, Field(description="Country as the profile "
                                                               "spells it (e.g. NL).")] = None,
                   limit: Limit = 25, cursor: Cursor = None) -> Answer:
    with opened(ctx, "read") as call:
        wanted = artists.ArtistFilters(q=q, genre=genre, country=country)
        return call.page(wanted, cursor, limit=limit, schema=ArtistSummarySchema(many=True),
                         fetch=lambda after: artists.list_artists(
                             call.session, filters=wanted, limit=limit, after=after))


@tool("read", "Artist detail", "One artist with bio, links, releases and next dates.",
      answers="get_artist")
def get_artist(ctx: Context, id: Annotated[Id, Field(description="Artist id.")]) -> Answer:
    with opened(ctx, "read") as call:
        return call.public(ArtistDetailSchema().dump(
            artists.get_artist(call.session, id, today=call.today())))


@tool("read", "Search organisations", "Organisations that put events in the agenda, by name.",
      answers="list_organisations")
def search_organisations(ctx: Context,
                         q: Annotated[Words, Field(description="Free text over the "
                                                               "name.")] = None,
                         verified: Annotated[bool | None, Field(
                             description="true: only organisations the service checked.")] = None,
                         limit: Limit = 25, cursor: Cursor = None) -> Answer:
    with opened(ctx, "read") as call:
        wanted = organisations.OrganisationFilters(q=q, verified=verified)
        return call.page(wanted, cursor, limit=limit, schema=OrganisationSchema(many=True),
                         fetch=lambda after: organisations.list_organisations(
                             call.session, filters=wanted, limit=limit, after=after))


@tool("read", "Organisation detail", "One organisation with its number of approved events.",
      answers="get_organisation")
def get_organisation(ctx: Context,
                     id: Annotated[Id, Field(description="Organisation id.")]) -> Answer:
    with opened(ctx, "read") as call:
        return call.public(OrganisationSchema().dump(
            organisations.get_listed_organisation(call.session, id)))


@tool("read", "Genres", "The fixed genre list, in its order.", answers="list_genres")
def list_genres(ctx: Context, limit: Limit = 25, cursor: Cursor = None) -> Answer:
    with opened(ctx, "read") as call:
        return call.page(genres.GenreFilters(), cursor, limit=limit,
                         schema=GenreSchema(many=True),
                         fetch=lambda after: genres.list_genres(call.session, after=after,
                                                                limit=limit))


@tool("read", "Cities", "Cities with at least one upcoming event, busiest first.",
      answers="list_cities")
def list_cities(ctx: Context,
                country: Annotated[Country | None, Field(description="Only cities in this "
                                                                     "country.")] = None,
                limit: Limit = 25, cursor: Cursor = None) -> Answer:
    with opened(ctx, "read") as call:
        wanted = cities.CityFilters(country=country)
        return call.page(wanted, cursor, limit=limit, schema=CitySchema(many=True),
                         fetch=lambda after: cities.list_cities(
                             call.session, filters=wanted, today=call.today(), limit=limit,
                             after=after))


@tool("read", "New releases (radar)",
      "New singles, EPs and albums by artists in the agenda, newest first.",
      answers="list_releases")
def radar(ctx: Context,
          genre: Annotated[Genre, Field(description="Only releases of this genre, exactly as "
                                                    "list_genres spells it.")] = None,
          weeks: Annotated[Weeks, Field(description="How many weeks back to look: 1, 2 or "
                                                    "4.")] = 4,
          limit: Limit = 25, cursor: Cursor = None) -> Answer:
    with opened(ctx, "read") as call:
        wanted = releases.RadarFilters(weeks=weeks, genre=genre)
        return call.page(wanted, cursor, limit=limit, schema=ReleaseSchema(many=True),
                         fetch=lambda after: releases.list_new_releases(
                             call.session, filters=wanted, today=call.today(), limit=limit,
                             after=after))


@tool("read", "Badge catalogue", "The catalogue of earnable badges by family, then tier.",
      answers="list_badges")
def list_badges(ctx: Context, limit: Limit = 25, cursor: Cursor = None) -> Answer:
    with opened(ctx, "read") as call:
        return call.page(badges.BadgeFilters(), cursor, limit=limit,
                         schema=BadgeSchema(many=True),
                         fetch=lambda after: badges.list_badges(call.session, limit=limit,
                                                                after=after))


@tool("read", "Badges of a public profile",
      "The badges a public profile earned, newest first (private profiles are not found).",
      answers="list_user_badges")
def list_user_badges(ctx: Context, user: Annotated[Id, Field(
        description="A public profile's handle or id.")], limit: Limit = 25,
                     cursor: Cursor = None) -> Answer:
    with opened(ctx, "read") as call:
        person = badges.get_public_person(call.session, user)
        return call.page(badges.EarnedFilters(user=person.id), cursor, limit=limit,
                         schema=UserBadgeSchema(many=True),
                         fetch=lambda after: badges.list_earned(call.session, person,
                                                                limit=limit, after=after),
                         user=UserRefSchema().dump(person),
                         catalogue=badges.catalogue_size(call.session))


@tool("read", "Who am I",
      "The token behind this connection: for a live token its organisation, limits and today's "
      "usage (as GET /me); for an OAuth connection the person, organisation and scopes.",
      answers=None)
def who_am_i(ctx: Context) -> Answer:
    with opened(ctx, "read") as call:
        identity = call.identity
        if identity.kind == "live":
            routes = sorted({*call.service.routes.templates(), MCP_ROUTE})
            me = tokens.describe_token(call.session, identity.caller,
                                         usage=call.service.usage, routes=routes)
            return {"data": {"kind": "live", **MeSchema().dump(me)}, "meta": {}}
        return {"data": {"kind": "oauth", "person_id": identity.person_id,
                         "organisation_id": identity.caller.organisation_id,
                         "client_id": identity.client_id,
                         "scopes": sorted(identity.caller.scopes),
                         "expires_at": identity.expires_at}, "meta": {}}


# ---------------------------------------------------------------------------
# The organiser tools (scopes attendance and scan): the caller's own organisation only
# ---------------------------------------------------------------------------

OwnEvent = Annotated[Id, Field(description="Event id or slug (an event of your own "
                                           "organisation).")]


@tool("attendance", "Attendance",
      "Attendance counts and audience groups of one of your organisation's events.",
      answers="get_attendance")
def get_attendance(ctx: Context, event_id: OwnEvent) -> Answer:
    with opened(ctx, "attendance") as call:
        report = attendance.get_attendance(call.session, event_key=event_id,
                                           organisation_id=call.organisation_id, now=now())
        return {"data": AttendanceSchema().dump(report), "meta": {}}


@tool("attendance", "External sales",
      "The last external ticket-sales count reported for one of your organisation's events.",
      answers="get_external_sales")
def get_external_sales(ctx: Context, event_id: OwnEvent) -> Answer:
    with opened(ctx, "attendance") as call:
        report = sales.external_sales(call.session, event=call.own_event(event_id))
        return {"data": ExternalSalesSchema().dump(report), "meta": {}}


# Reporting a count sets it: the same count again changes nothing more, but it replaces the
# count reported before.
@tool("attendance", "Report external sales",
      "Report how many tickets your organisation's own shop sold so far (events with external "
      "ticketing only).", answers="report_external_sales",
      hints=ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True,
                            openWorldHint=False))
def report_external_sales(ctx: Context, event_id: OwnEvent, sold: Annotated[Sold, Field(
        description="Tickets your own shop sold so far.")]) -> Answer:
    with opened(ctx, "attendance") as call:
        report = sales.report_external_sales(call.session, event=call.own_event(event_id),
                                             sold=sold, now=now())
        return {"data": ExternalSalesSchema().dump(report), "meta": {}}


# A scan marks a valid ticket used; scanning it again writes nothing (the answer then says
# `used`, and when).
@tool("scan", "Scan a ticket",
      "Validate a ticket at the door and mark it used; a refused ticket is a result with `ok` "
      "false and a reason, not an error.", answers="scan_ticket",
      hints=ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=True,
                            openWorldHint=False))
def scan_ticket(ctx: Context, code: Annotated[TicketCode, Field(
        description="The ticket code, or the scanned URL that contains /t/<code>.")],
                event_id: Annotated[EventRef, Field(description="Refuse tickets not for this "
                                                                "event.")] = None) -> Answer:
    with opened(ctx, "scan") as call:
        verdict = door.scan(call.service.direct, door.within(call.session),
                            organisation_id=call.organisation_id, scanned=code,
                            event_id=event_id, now=now())
        return {"data": ScanResultSchema().dump(verdict), "meta": {}}


def build_server(provider_name: str, site_url: str, document: dict, *,
                 middleware=()) -> MCPServer:
    """The MCP server with every tool, their results typed by `document`."""
    return MCPServer(
        middleware=middleware, name="event-agenda", title=f"{provider_name} agenda",
        version=metadata.version(PACKAGE), website_url=site_url,
        instructions="The agenda of nightlife events in the Netherlands and Belgium. Credit "
                     "the data as `meta.attribution` says and link each item's `url`.",
        warn_on_duplicate_tools=True, tools=[_made(registered, document)
                                             for registered in _TOOLS])


def _made(registered: Registered, document: dict) -> Tool:
    """The SDK's tool: arguments as declared, unknown ones refused (as REST refuses unknown
    parameters), and the output schema of its REST answer (advertised; the SDK client
    checks results against it)."""
    made = Tool.from_function(registered.fn, title=registered.title,
                              description=registered.description,
                              annotations=registered.annotations, structured_output=False)
    declared = made.fn_metadata.arg_model

    class Strict(declared):
        model_config = ConfigDict(extra="forbid", title=declared.__name__)

    made.fn_metadata.arg_model = strict = Strict
    made.parameters = strict.model_json_schema(by_alias=True)
    made.fn_metadata.output_schema = (
        outputs.of_operation(document, registered.answers) if registered.answers
        else outputs.who_am_i(document))
    return made

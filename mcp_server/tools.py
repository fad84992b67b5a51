"""The MCP tools: what a REST caller can do, for an assistant, within its token's scopes.

Each tool calls the same domain function as its REST handler and dumps with the
same marshmallow schema, so a tool's `data` equals the REST answer's `data`.
Lists page with the REST cursors (the same kit, edge/paging.py). Public
catalogue results carry the attribution the terms require and every object its
public page link (`url`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
from typing import Annotated, Any, Literal, TypedDict

from marshmallow.experimental.context import Context as SchemaContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import AfterValidator, Field

from edge import paging
from edge.openapi import NUL_MESSAGE
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

Limit = Annotated[int, Field(ge=1, le=100, description="Items per page (1..100).")]
Cursor = Annotated[str | None, Field(description="`meta.next_cursor` of the previous page; "
                                                 "never built by hand.")]


def _without_nul(value: str | None) -> str | None:
    """No id or text has a NUL character (%00); PostgreSQL refuses it in any lookup."""
    if value is not None and "\x00" in value:
        raise ValueError(NUL_MESSAGE)
    return value


Id = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_without_nul)]
Text = Annotated[str | None, Field(max_length=200), AfterValidator(_without_nul)]


# What every tool returns: the REST answer's `data` and its `meta` (without request id). A
# comment, not a docstring: pydantic would make it the output schema's description, which
# `python -OO` workers would not have.
class Answer(TypedDict):
    data: Any
    meta: dict[str, Any]


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


def tool(scope: str, title: str, description: str):
    """Register a function as a tool needing `scope` (read-only unless it needs more). The
    description is given here, not taken from the docstring: workers run with `python -OO`
    (agenda/cli.py), which drops docstrings."""

    def register(fn):
        SCOPES[fn.__name__] = scope
        _TOOLS.append((fn, title, description,
                       scope == "read" or fn.__name__.startswith("get_")))
        return fn

    return register


_TOOLS: list = []


# ---------------------------------------------------------------------------
# The agenda (scope read)
# ---------------------------------------------------------------------------


@tool("read", "Search events",
      "Search approved nightlife events in NL and BE, soonest first, with every filter of GET "
      "/events. Each event has its public page `url`; cite the attribution when showing them.")
def search_events(
        ctx: Context,
        city: Annotated[Text, Field(description="Venue city, case-insensitive.")] = None,
        genre: Annotated[Text, Field(description="A genre exactly as list_genres spells it.")] = None,
        date_from: Annotated[dt.date | None, Field(description="First date (default: today in "
                                                               "Europe/Amsterdam).")] = None,
        date_to: Annotated[dt.date | None, Field(description="Last date, inclusive.")] = None,
        venue_id: Text = None, artist_id: Text = None, organisation_id: Text = None,
        q: Annotated[Text, Field(description="Free text over title and venue name.")] = None,
        has_tickets: Annotated[bool | None, Field(description="true: only events on sale now; "
                                                              "false: only those not.")] = None,
        max_price: Annotated[float | None, Field(ge=0, description="Cheapest ticket at most "
                                                                   "this, euros; 0: free.")] = None,
        min_price: Annotated[float | None, Field(ge=0, description="Cheapest ticket at least "
                                                                   "this, euros.")] = None,
        lat: Annotated[float | None, Field(ge=-90, le=90, description="Centre of a radius "
                                                                      "search (with lng).")] = None,
        lng: Annotated[float | None, Field(ge=-180, le=180)] = None,
        radius_km: Annotated[int, Field(ge=1, le=200, description="Distance from lat,lng.")] = 25,
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


@tool("read", "Event detail", "One event by id or slug, with its bill, set times and maps.")
def get_event(ctx: Context, id: Annotated[Id, Field(description="Event id or slug.")]) -> Answer:
    with opened(ctx, "read") as call:
        return call.public(EventDetailSchema().dump(events.get_event(call.session, id)))


@tool("read", "Drink-token prices",
      "Drink-token price figures of a festival edition, from its visitors' reports (not found "
      "when the event is not a festival).")
def get_token_prices(ctx: Context, event_id: Annotated[Id, Field(
        description="Festival edition id or slug.")]) -> Answer:
    with opened(ctx, "read") as call:
        return call.public(TokenPricesSchema().dump(festivals.token_prices(call.session,
                                                                           event_id)))


@tool("read", "Drink-token reports",
      "The individual drink-token price reports of a festival edition, newest first.")
def list_token_reports(ctx: Context, event_id: Id, limit: Limit = 25,
                       cursor: Cursor = None) -> Answer:
    with opened(ctx, "read") as call:
        return call.page(festivals.ReportFilters(event=event_id), cursor, limit=limit,
                         schema=TokenReportSchema(many=True),
                         fetch=lambda after: festivals.list_reports(
                             call.session, event_id, limit=limit, after=after))


@tool("read", "Search venues",
      "Venues by name, filtered by city, name and whether they have events coming.")
def search_venues(ctx: Context, city: Text = None,
                  q: Annotated[Text, Field(description="Text over the name.")] = None,
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
      "One venue with its practical profile and number of upcoming events.")
def get_venue(ctx: Context, id: Id) -> Answer:
    with opened(ctx, "read") as call:
        return call.public(VenueDetailSchema().dump(
            venues.get_venue(call.session, id, today=call.today())))


@tool("read", "Search artists", "Artists by name, filtered by name, primary genre and country.")
def search_artists(ctx: Context, q: Annotated[Text, Field(description="Text over the name.")] = None,
                   genre: Annotated[Text, Field(description="Primary genre.")] = None,
                   country: Annotated[Text, Field(description="As the profile spells it.")] = None,
                   limit: Limit = 25, cursor: Cursor = None) -> Answer:
    with opened(ctx, "read") as call:
        wanted = artists.ArtistFilters(q=q, genre=genre, country=country)
        return call.page(wanted, cursor, limit=limit, schema=ArtistSummarySchema(many=True),
                         fetch=lambda after: artists.list_artists(
                             call.session, filters=wanted, limit=limit, after=after))


@tool("read", "Artist detail", "One artist with bio, links, releases and next dates.")
def get_artist(ctx: Context, id: Id) -> Answer:
    with opened(ctx, "read") as call:
        return call.public(ArtistDetailSchema().dump(
            artists.get_artist(call.session, id, today=call.today())))


@tool("read", "Search organisations", "Organisations that put events in the agenda, by name.")
def search_organisations(ctx: Context, q: Text = None,
                         verified: Annotated[bool | None, Field(
                             description="true: only organisations the service checked.")] = None,
                         limit: Limit = 25, cursor: Cursor = None) -> Answer:
    with opened(ctx, "read") as call:
        wanted = organisations.OrganisationFilters(q=q, verified=verified)
        return call.page(wanted, cursor, limit=limit, schema=OrganisationSchema(many=True),
                         fetch=lambda after: organisations.list_organisations(
                             call.session, filters=wanted, limit=limit, after=after))


@tool("read", "Organisation detail", "One organisation with its number of approved events.")
def get_organisation(ctx: Context, id: Id) -> Answer:
    with opened(ctx, "read") as call:
        return call.public(OrganisationSchema().dump(
            organisations.get_listed_organisation(call.session, id)))


@tool("read", "Genres", "The fixed genre list, in its order.")
def list_genres(ctx: Context, limit: Limit = 25, cursor: Cursor = None) -> Answer:
    with opened(ctx, "read") as call:
        return call.page(genres.GenreFilters(), cursor, limit=limit,
                         schema=GenreSchema(many=True),
                         fetch=lambda after: genres.list_genres(call.session, after=after,
                                                                limit=limit))


@tool("read", "Cities", "Cities with at least one upcoming event, busiest first.")
def list_cities(ctx: Context, country: Literal["NL", "BE"] | None = None, limit: Limit = 25,
                cursor: Cursor = None) -> Answer:
    with opened(ctx, "read") as call:
        wanted = cities.CityFilters(country=country)
        return call.page(wanted, cursor, limit=limit, schema=CitySchema(many=True),
                         fetch=lambda after: cities.list_cities(
                             call.session, filters=wanted, today=call.today(), limit=limit,
                             after=after))


@tool("read", "New releases (radar)",
      "New singles, EPs and albums by artists in the agenda, newest first.")
def radar(ctx: Context, genre: Text = None,
          weeks: Annotated[int, Field(ge=1, le=4, description="Weeks back (1, 2 or 4).")] = 4,
          limit: Limit = 25, cursor: Cursor = None) -> Answer:
    with opened(ctx, "read") as call:
        wanted = releases.RadarFilters(weeks=weeks, genre=genre)
        return call.page(wanted, cursor, limit=limit, schema=ReleaseSchema(many=True),
                         fetch=lambda after: releases.list_new_releases(
                             call.session, filters=wanted, today=call.today(), limit=limit,
                             after=after))


@tool("read", "Badge catalogue", "The catalogue of earnable badges by family, then tier.")
def list_badges(ctx: Context, limit: Limit = 25, cursor: Cursor = None) -> Answer:
    with opened(ctx, "read") as call:
        return call.page(badges.BadgeFilters(), cursor, limit=limit,
                         schema=BadgeSchema(many=True),
                         fetch=lambda after: badges.list_badges(call.session, limit=limit,
                                                                after=after))


@tool("read", "Badges of a public profile",
      "The badges a public profile earned, newest first (private profiles are not found).")
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
      "usage (as GET /me); for an OAuth connection the person, organisation and scopes.")
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


@tool("attendance", "Attendance",
      "Attendance counts and audience groups of one of your organisation's events.")
def get_attendance(ctx: Context, event_id: Id) -> Answer:
    with opened(ctx, "attendance") as call:
        report = attendance.get_attendance(call.session, event_key=event_id,
                                           organisation_id=call.organisation_id, now=now())
        return {"data": AttendanceSchema().dump(report), "meta": {}}


@tool("attendance", "External sales",
      "The last external ticket-sales count reported for one of your organisation's events.")
def get_external_sales(ctx: Context, event_id: Id) -> Answer:
    with opened(ctx, "attendance") as call:
        report = sales.external_sales(call.session, event=call.own_event(event_id))
        return {"data": ExternalSalesSchema().dump(report), "meta": {}}


@tool("attendance", "Report external sales",
      "Report how many tickets your organisation's own shop sold so far (events with external "
      "ticketing only).")
def report_external_sales(ctx: Context, event_id: Id, sold: Annotated[int, Field(
        ge=0, le=10_000_000, description="Tickets your own shop sold so far.")]) -> Answer:
    with opened(ctx, "attendance") as call:
        report = sales.report_external_sales(call.session, event=call.own_event(event_id),
                                             sold=sold, now=now())
        return {"data": ExternalSalesSchema().dump(report), "meta": {}}


@tool("scan", "Scan a ticket",
      "Validate a ticket at the door and mark it used; a refused ticket is a result with `ok` "
      "false and a reason, not an error.")
def scan_ticket(ctx: Context, code: Annotated[str, Field(
        min_length=1, max_length=500, description="The ticket code, or the scanned URL that "
                                                  "contains /t/<code>.")],
                event_id: Annotated[Text, Field(description="Refuse tickets not for this "
                                                            "event.")] = None) -> Answer:
    with opened(ctx, "scan") as call:
        verdict = door.scan(call.service.direct, door.within(call.session),
                            organisation_id=call.organisation_id, scanned=code,
                            event_id=event_id, now=now())
        return {"data": ScanResultSchema().dump(verdict), "meta": {}}


def build_server(provider_name: str, site_url: str, *, middleware=()) -> MCPServer:
    """The MCP server with every tool."""
    server = MCPServer(middleware=middleware,
        name="event-agenda", title=f"{provider_name} agenda", website_url=site_url,
        instructions="The agenda of nightlife events in the Netherlands and Belgium. Credit "
                     "the data as `meta.attribution` says and link each item's `url`.",
        warn_on_duplicate_tools=True)
    for fn, title, description, read_only in _TOOLS:
        server.add_tool(fn, title=title, description=description, structured_output=True,
                        annotations=ToolAnnotations(readOnlyHint=read_only,
                                                    openWorldHint=False))
    return server

"""The MCP tools: what a REST caller can do, for an assistant, within its token's scopes.

A catalogue tool (`catalogue`: events, venues, artists, organisations, genres, cities,
releases, badges, drink-token prices) gives the parameters of its REST request, and its
result is that request's public answer as the response cache answers it (edge/cache.py):
the same key, kept answer, check and handler as a GET of the same URL, so a tool's
`data` and `meta` are the REST answer's, paged with the same cursors, with the
attribution the terms require and every object's public page link (`url`). The
organiser tools call the same domain function as their REST handler and dump with the
same marshmallow schema. Arguments are as strict as the REST parameters
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

from edge.answers import without_request_id
from edge.state import RequestState
from mcp_server import outputs
from mcp_server.arguments import (Country, Cursor, EventRef, Genre, Id, Limit, Place, Price,
                                  Ref, Sold, TicketCode, Weeks, Words)
from openapi.schemas.account import MeSchema
from openapi.schemas.organiser import AttendanceSchema, ExternalSalesSchema, ScanResultSchema
from mcp_server.identity import Identity
from models import attendance, door, events, sales, tokens
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
    """One call of a tool that is not a catalogue tool (`opened`): its database session, the
    caller and the service."""

    session: Any
    identity: Identity
    service: Any

    @property
    def organisation_id(self) -> str:
        return self.identity.caller.organisation_id

    def own_event(self, key: str):
        """An event of the caller's organisation (another's is not found, as on REST)."""
        return events.get_own_event(self.session, key, organisation_id=self.organisation_id)


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
            yield Call(session=session, identity=identity, service=service)
    except DomainError as error:
        raise _tool_error(error) from error


def _tool_error(error: DomainError) -> ToolError:
    """A domain error as the tool error of its REST message. A tool's arguments are named as
    the domain names its fields (`date_to`, where REST says `to`), so the fields are told as
    the error names them."""
    params = error.params
    detail = "; ".join(f"{p['name']}: {p['message']}" for p in params) if params else ""
    return ToolError(f"{error.message} {detail}".strip())


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


# A catalogue tool's REST request: its parameters by their names in the document, path and
# query alike (None: left out).
Parameters = dict[str, Any]


def catalogue(title: str, description: str, *, answers: str):
    """Register a function as a tool needing the scope read whose result is the public REST
    answer of the operation `answers`: the function gives that request's parameters
    (`Parameters`), and the response cache answers them as it answers a GET of the same URL
    (edge/cache.py `ResponseCache.public_answer`): kept under the same key, served while
    fresh, renewed once checked, or built by the REST handler and kept. So a tool's result is
    that very answer, as fast, and exact in the same way after a change."""

    def register(fn):
        SCOPES[fn.__name__] = "read"
        _TOOLS.append(Registered(_asking(fn, answers), title, description, answers, READS))
        return fn

    return register


def _asking(fn, operation_id: str):
    """`fn` answered by the response cache as the REST operation `operation_id` (`catalogue`)."""

    @functools.wraps(fn)
    async def result(ctx: Context, **arguments) -> CallToolResult:
        request = ctx.request_context.request
        service = request.scope["state"]["agenda_service"]
        if not request.scope["state"]["mcp_identity"].may("read"):
            raise ToolError("This token lacks the scope 'read' this tool needs.")
        values = {name: _written(value) for name, value in fn(ctx, **arguments).items()}
        # The request's admission (the catalogue stamp read with its token), a state of the
        # call's own for the answer a handler builds.
        state = dataclasses.replace(RequestState.of(request.scope), answer=None)
        try:
            entry, _how = await service.cache.public_answer(
                service.routes.identified(operation_id), values, state)
        except DomainError as error:
            raise _tool_error(error) from error
        body = without_request_id(entry.answer.data, entry.answer.meta)
        return CallToolResult(content=[TextContent(type="text", text=body.decode())],
                              structured_content=orjson.loads(body))

    return result


def _written(value):
    """A tool's argument as the REST parameter writes it: a date as `yyyy-mm-dd`, a list as
    a comma list."""
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, list):
        return ",".join(value)
    return value


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


@catalogue("Search events",
           "Search approved nightlife events in NL and BE, soonest first, with every filter of "
           "GET /events. Each event has its public page `url`; cite the attribution when "
           "showing them.", answers="list_events")
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
        limit: Limit = 25, cursor: Cursor = None) -> Parameters:
    return {"city": city, "genre": genre, "from": date_from, "to": date_to,
            "venue_id": venue_id, "artist_id": artist_id, "organisation_id": organisation_id,
            "q": q, "has_tickets": has_tickets, "max_price": max_price, "min_price": min_price,
            "lat": lat, "lng": lng, "radius_km": radius_km, "facets": facets, "limit": limit,
            "cursor": cursor}


@catalogue("Event detail", "One event by id or slug, with its bill, set times and maps.",
           answers="get_event")
def get_event(ctx: Context,
              id: Annotated[Id, Field(description="Event id or slug.")]) -> Parameters:
    return {"id": id}


@catalogue("Drink-token prices",
           "Drink-token price figures of a festival edition, from its visitors' reports (not "
           "found when the event is not a festival).", answers="get_token_prices")
def get_token_prices(ctx: Context, event_id: Annotated[Id, Field(
        description="Festival edition id or slug.")]) -> Parameters:
    return {"id": event_id}


@catalogue("Drink-token reports",
           "The individual drink-token price reports of a festival edition, newest first.",
           answers="list_token_reports")
def list_token_reports(ctx: Context, event_id: Annotated[Id, Field(
        description="Festival edition id or slug.")], limit: Limit = 25,
                       cursor: Cursor = None) -> Parameters:
    return {"id": event_id, "limit": limit, "cursor": cursor}


@catalogue("Search venues",
           "Venues by name, filtered by city, name and whether they have events coming.",
           answers="list_venues")
def search_venues(ctx: Context,
                  city: Annotated[Place, Field(description="The venue's city, "
                                                           "case-insensitive.")] = None,
                  q: Annotated[Words, Field(description="Free text over the name.")] = None,
                  with_events: Annotated[bool | None, Field(
                      description="true: only venues with events from today on.")] = None,
                  limit: Limit = 25, cursor: Cursor = None) -> Parameters:
    return {"city": city, "q": q, "with_events": with_events, "limit": limit,
            "cursor": cursor}


@catalogue("Venue detail", "One venue with its practical profile and number of upcoming "
                           "events.", answers="get_venue")
def get_venue(ctx: Context, id: Annotated[Id, Field(description="Venue id.")]) -> Parameters:
    return {"id": id}


@catalogue("Search artists", "Artists by name, filtered by name, primary genre and country.",
           answers="list_artists")
def search_artists(ctx: Context,
                   q: Annotated[Words, Field(description="Free text over the name.")] = None,
                   genre: Annotated[Genre, Field(description="Primary genre, exactly as "
                                                             "list_genres spells it.")] = None,
                   country: Annotated[Place, Field(description="Country as the profile "
                                                               "spells it (e.g. NL).")] = None,
                   limit: Limit = 25, cursor: Cursor = None) -> Parameters:
    return {"q": q, "genre": genre, "country": country, "limit": limit, "cursor": cursor}


@catalogue("Artist detail", "One artist with bio, links, releases and next dates.",
           answers="get_artist")
def get_artist(ctx: Context, id: Annotated[Id, Field(description="Artist id.")]) -> Parameters:
    return {"id": id}


@catalogue("Search organisations", "Organisations that put events in the agenda, by name.",
           answers="list_organisations")
def search_organisations(ctx: Context,
                         q: Annotated[Words, Field(description="Free text over the "
                                                               "name.")] = None,
                         verified: Annotated[bool | None, Field(
                             description="true: only organisations the service checked.")] = None,
                         limit: Limit = 25, cursor: Cursor = None) -> Parameters:
    return {"q": q, "verified": verified, "limit": limit, "cursor": cursor}


@catalogue("Organisation detail", "One organisation with its number of approved events.",
           answers="get_organisation")
def get_organisation(ctx: Context,
                     id: Annotated[Id, Field(description="Organisation id.")]) -> Parameters:
    return {"id": id}


@catalogue("Genres", "The fixed genre list, in its order.", answers="list_genres")
def list_genres(ctx: Context, limit: Limit = 25, cursor: Cursor = None) -> Parameters:
    return {"limit": limit, "cursor": cursor}


@catalogue("Cities", "Cities with at least one upcoming event, busiest first.",
           answers="list_cities")
def list_cities(ctx: Context,
                country: Annotated[Country | None, Field(description="Only cities in this "
                                                                     "country.")] = None,
                limit: Limit = 25, cursor: Cursor = None) -> Parameters:
    return {"country": country, "limit": limit, "cursor": cursor}


@catalogue("New releases (radar)",
           "New singles, EPs and albums by artists in the agenda, newest first.",
           answers="list_releases")
def radar(ctx: Context,
          genre: Annotated[Genre, Field(description="Only releases of this genre, exactly as "
                                                    "list_genres spells it.")] = None,
          weeks: Annotated[Weeks, Field(description="How many weeks back to look: 1, 2 or "
                                                    "4.")] = 4,
          limit: Limit = 25, cursor: Cursor = None) -> Parameters:
    return {"genre": genre, "weeks": weeks, "limit": limit, "cursor": cursor}


@catalogue("Badge catalogue", "The catalogue of earnable badges by family, then tier.",
           answers="list_badges")
def list_badges(ctx: Context, limit: Limit = 25, cursor: Cursor = None) -> Parameters:
    return {"limit": limit, "cursor": cursor}


@catalogue("Badges of a public profile",
           "The badges a public profile earned, newest first (private profiles are not "
           "found).", answers="list_user_badges")
def list_user_badges(ctx: Context, user: Annotated[Id, Field(
        description="A public profile's handle or id.")], limit: Limit = 25,
                     cursor: Cursor = None) -> Parameters:
    return {"id": user, "limit": limit, "cursor": cursor}


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

"""MCP as strict and as lean as REST (issue 22), with the SDK's own client: arguments bound
as the REST parameters are (the genre list included) and each described, results typed
by the document, text content compact, the server's version told, write tools hinted."""

from __future__ import annotations

from importlib import metadata

import jsonschema
import orjson
import pytest
from mcp.types import SERVER_INFO_META_KEY

from edge.openapi import resolve
from models import tokens
from tests import factories
from tests.api import day
from tests.mcp_server.client import ERAS, call, connected, run

# The keywords that bound a value, compared between a tool argument and its REST parameter.
BOUNDS = ("enum", "minimum", "maximum", "minLength", "maxLength", "format")
# Tool -> (REST operation, {argument: the parameter or body field it stands for}).
SAME_AS_REST = {
    "search_events": ("list_events", {"date_from": "from", "date_to": "to"}),
    "get_event": ("get_event", {}),
    "get_token_prices": ("get_token_prices", {"event_id": "id"}),
    "list_token_reports": ("list_token_reports", {"event_id": "id"}),
    "search_venues": ("list_venues", {}),
    "get_venue": ("get_venue", {}),
    "search_artists": ("list_artists", {}),
    "get_artist": ("get_artist", {}),
    "search_organisations": ("list_organisations", {}),
    "get_organisation": ("get_organisation", {}),
    "list_genres": ("list_genres", {}),
    "list_cities": ("list_cities", {}),
    "radar": ("list_releases", {}),
    "list_badges": ("list_badges", {}),
    "list_user_badges": ("list_user_badges", {"user": "id"}),
    "get_attendance": ("get_attendance", {"event_id": "id"}),
    "get_external_sales": ("get_external_sales", {"event_id": "id"}),
    "report_external_sales": ("report_external_sales", {"event_id": "id"}),
    "scan_ticket": ("scan_ticket", {"event_id": "eventId"}),
}


@pytest.fixture(scope="module")
def strict(committed):
    """A token of every MCP scope of its own (the other modules' have their minutes' use)."""
    organisation = factories.OrganisationFactory(name="Strict Beats")
    techno = factories.EventFactory(title="Strict Techno Night", organisation=organisation,
                                    genre_names=["Techno"], date=day(3))
    factories.EventFactory(title="Strict House Night", organisation=organisation,
                           genre_names=["House"], date=day(3))
    for n in range(30):
        factories.EventFactory(title=f"Strict filler {n}", organisation=organisation,
                               genre_names=["Disco"],
                               date=day(4 + n % 5))
    _, token = tokens.create_token(committed, organisation=organisation, name="strict",
                                   scopes=["read", "attendance", "scan"])
    committed.commit()
    return {"token": token, "techno": techno}


def _listed(site, token):
    async def work():
        async with connected(site, "legacy", token=token) as client:
            return {tool.name: tool for tool in (await client.list_tools()).tools}

    return run(work)


def _operation(document, operation_id):
    return next(operation for item in document["paths"].values() for operation in item.values()
                if isinstance(operation, dict) and operation.get("operationId") == operation_id)


def _rest_schemas(document, operation_id) -> dict[str, dict]:
    """Each REST parameter's (and JSON body field's) schema of an operation, by name."""
    operation = _operation(document, operation_id)
    found = {}
    for parameter in operation.get("parameters", []):
        parameter = resolve(document, parameter)
        if parameter["in"] != "header":
            found[parameter["name"]] = resolve(document, parameter["schema"])
    if "requestBody" in operation:
        body = resolve(document, operation["requestBody"]["content"]["application/json"]["schema"])
        for name, schema in body["properties"].items():
            found[name] = resolve(document, schema)
    return found


def _bounds(schema: dict) -> dict:
    """The bounding keywords of a schema (of its non-null branch; a value set in order)."""
    branches = [s for s in schema.get("anyOf", [schema]) if s.get("type") != "null"]
    assert len(branches) == 1, schema
    return {k: sorted(v) if k == "enum" else v for k, v in branches[0].items() if k in BOUNDS}


def test_mcp_genre_is_the_documents_enum(served, strict):
    listed = _listed(served.site, strict["token"])
    genres = served.service.document["components"]["schemas"]["GenreName"]["enum"]
    for name in ("search_events", "search_artists", "radar"):
        assert _bounds(listed[name].input_schema["properties"]["genre"])["enum"] == \
            sorted(genres), name

    async def work():
        async with connected(served.site, "legacy", token=strict["token"]) as client:
            return (await client.call_tool("search_events", {"genre": "techno"}),
                    await client.call_tool("radar", {"genre": "Techno and more"}),
                    await client.call_tool("search_events", {"genre": "Techno",
                                                             "q": "strict"}))

    lower, unknown, exact = run(work)
    for refused in (lower, unknown):
        assert refused.is_error and "genre" in refused.content[0].text
    assert [e["id"] for e in exact.structured_content["data"]] == [strict["techno"].id]


def test_mcp_every_argument_has_a_description(served, strict):
    listed = _listed(served.site, strict["token"])
    for tool in listed.values():
        for name, schema in tool.input_schema.get("properties", {}).items():
            assert schema.get("description"), (tool.name, name)


def test_mcp_arguments_are_as_strict_as_the_rest_parameters(served, strict):
    listed = _listed(served.site, strict["token"])
    assert set(listed) == set(SAME_AS_REST) | {"who_am_i"}
    document = served.service.document
    for name, (operation_id, renamed) in SAME_AS_REST.items():
        rest = _rest_schemas(document, operation_id)
        for argument, schema in listed[name].input_schema.get("properties", {}).items():
            expected = rest[renamed.get(argument, argument)]
            assert _bounds(schema) == _bounds(expected), (name, argument)
        assert listed[name].input_schema["additionalProperties"] is False, name


@pytest.mark.parametrize("era", ERAS)
def test_mcp_an_unknown_argument_is_refused(served, strict, era):
    """REST refuses an unknown parameter; a tool did ignore one (`date` for `date_from`)."""
    result = call(served.site, era, strict["token"], "search_events", {"date": "2026-12-01"})
    assert result.is_error and "date" in result.content[0].text


def test_mcp_output_schemas_are_typed_by_the_document(served, strict):
    listed = _listed(served.site, strict["token"])
    schemas = served.service.document["components"]["schemas"]
    events = listed["search_events"].output_schema
    assert events["properties"]["data"] == {"type": "array",
                                            "items": {"$ref": "#/$defs/EventSummary"}}
    assert events["$defs"]["EventSummary"]["required"] == schemas["EventSummary"]["required"]
    assert "request_id" not in events["properties"]["meta"]["properties"]
    for tool in listed.values():
        schema = tool.output_schema
        jsonschema.Draft202012Validator.check_schema(schema)
        data = schema["properties"]["data"]
        assert {"$ref", "type", "oneOf"} & set(data), tool.name


@pytest.mark.parametrize("era", ERAS)
def test_mcp_results_conform_to_their_output_schemas(served, strict, era):
    """The SDK client checks each structured result against the tool's output schema (a
    mismatch raises); checked here once more, by name."""
    async def work():
        async with connected(served.site, era, token=strict["token"]) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            calls = [("search_events", {"q": "strict", "limit": 3}), ("list_genres", {}),
                     ("who_am_i", {}), ("get_event", {"id": strict["techno"].slug}),
                     ("scan_ticket", {"code": "NO-SUCH-TICKET"})]
            return listed, [(name, await client.call_tool(name, arguments))
                            for name, arguments in calls]

    listed, results = run(work)
    for name, result in results:
        assert not result.is_error, (name, result.content)
        jsonschema.validate(result.structured_content, listed[name].output_schema)


@pytest.mark.parametrize("era", ERAS)
def test_mcp_text_content_is_compact_json(served, strict, era):
    result = call(served.site, era, strict["token"], "search_events", {"q": "strict", "limit": 25})
    [content] = result.content
    assert orjson.loads(content.text) == result.structured_content
    assert content.text == orjson.dumps(result.structured_content).decode()
    assert "\n" not in content.text and '": ' not in content.text


@pytest.mark.parametrize("era", ERAS)
def test_mcp_server_info_version_is_the_package_version(served, strict, era):
    """Told at the handshake (2025-11-25), and on every result's `_meta` (2026-07-28)."""
    async def work():
        async with connected(served.site, era, token=strict["token"]) as client:
            listed = await client.list_tools()
            if era == "legacy":
                return client.server_info.version
            return listed.meta[SERVER_INFO_META_KEY]["version"]

    assert run(work) == metadata.version("event-agenda-service") != ""


def test_mcp_write_tools_carry_idempotent_hint(served, strict):
    listed = _listed(served.site, strict["token"])
    for name in ("report_external_sales", "scan_ticket"):
        hints = listed[name].annotations
        assert (hints.read_only_hint, hints.idempotent_hint) == (False, True), name
    assert listed["report_external_sales"].annotations.destructive_hint is True
    assert listed["scan_ticket"].annotations.destructive_hint is False
    for name in set(listed) - {"report_external_sales", "scan_ticket"}:
        assert listed[name].annotations.read_only_hint is True, name

"""The tools over real HTTP with a live token, in both protocol eras: each answers what the
REST API answers for the same query, pages with its cursors, and stays within the scopes."""

from __future__ import annotations

import pytest

from models import members, tokens
from models.db import now
from tests import api, factories
from tests.handlers import test_door as door
from tests.mcp_server.client import ERAS, call, connected, run
from tests.servers import agenda_serve


@pytest.fixture(scope="module")
def agenda(committed):
    """An organisation with a live token of every MCP scope, and a small agenda."""
    organisation = factories.OrganisationFactory(name="Nachtwerk", verified=True)
    venue = factories.VenueFactory(name="Shelter", city="Amsterdam")
    artist = factories.ArtistFactory(name="Aurora Halal")
    night = factories.EventFactory(title="Shelter Night", venue=venue, organisation=organisation,
                                   external_ticketing=True, date=api.day(2))
    for offset in range(3, 6):
        factories.EventFactory(title=f"Later {offset}", venue=venue, organisation=organisation,
                               date=api.day(offset))
    report = factories.TokenReportFactory()
    factories.ReleaseFactory(credits=[artist])
    person = members.create_person(committed, email="mila@mail.example", handle="mila",
                                   name="Mila", password="correct horse battery", now=now())
    tonight = door.tonight(title="Door Night", organisation=organisation)
    factories.TicketFactory(event_id=tonight.id, code="MCPDOOR1")
    _, token = tokens.create_token(committed, organisation=organisation, name="assistant",
                                   scopes=["read", "attendance", "scan"])
    _, reader = tokens.create_token(committed, organisation=organisation, name="reader",
                                    scopes=["read"])
    committed.commit()
    return {"token": token, "reader": reader, "event": night, "venue": venue, "artist": artist,
            "organisation": organisation, "festival": report.event_id, "person": person,
            "tonight": tonight}


def _rest(rest, token, path, params=None):
    return api.page(rest, {"Authorization": f"Bearer {token}"}, f"/v1{path}", **(params or {}))


def _same_queries(agenda):
    """(tool, arguments, REST path, REST query) pairs that must answer the same data."""
    event, venue, artist = agenda["event"], agenda["venue"], agenda["artist"]
    organisation, festival = agenda["organisation"], agenda["festival"]
    return [
        ("search_events", {"city": "amsterdam", "limit": 2}, "/events",
         {"city": "amsterdam", "limit": 2}),
        ("search_events", {"city": "amsterdam", "facets": ["date", "genre", "city"], "limit": 2},
         "/events", {"city": "amsterdam", "facets": "genre,city,date", "limit": 2}),
        ("search_events", {"q": "shelter", "has_tickets": True, "max_price": 30,
                           "lat": 52.37, "lng": 4.9, "radius_km": 10,
                           "date_from": api.day(0).isoformat()}, "/events",
         {"q": "shelter", "has_tickets": "true", "max_price": 30, "lat": 52.37, "lng": 4.9,
          "radius_km": 10, "from": api.day(0).isoformat()}),
        ("get_event", {"id": event.slug}, f"/events/{event.slug}", {}),
        ("get_token_prices", {"event_id": festival}, f"/events/{festival}/token-prices", {}),
        ("list_token_reports", {"event_id": festival}, f"/events/{festival}/token-reports", {}),
        ("search_venues", {"city": "Amsterdam", "with_events": True}, "/venues",
         {"city": "Amsterdam", "with_events": "true"}),
        ("get_venue", {"id": venue.id}, f"/venues/{venue.id}", {}),
        ("search_artists", {"q": "aurora"}, "/artists", {"q": "aurora"}),
        ("get_artist", {"id": artist.id}, f"/artists/{artist.id}", {}),
        ("search_organisations", {"verified": True}, "/organisations", {"verified": "true"}),
        ("get_organisation", {"id": organisation.id}, f"/organisations/{organisation.id}", {}),
        ("list_genres", {"limit": 5}, "/genres", {"limit": 5}),
        ("list_cities", {"country": "NL"}, "/cities", {"country": "NL"}),
        ("radar", {"weeks": 2}, "/radar", {"weeks": 2}),
        ("list_badges", {"limit": 3}, "/badges", {"limit": 3}),
        ("list_user_badges", {"user": "mila"}, "/users/mila/badges", {}),
        ("get_attendance", {"event_id": event.id}, f"/events/{event.id}/attendance", {}),
        ("get_external_sales", {"event_id": event.id}, f"/events/{event.id}/external-sales", {}),
    ]


@pytest.mark.parametrize("era", ERAS)
def test_every_tool_answers_what_the_rest_api_answers(served, agenda, rest, era):
    async def work():
        async with connected(served.site, era, token=agenda["token"]) as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
            assert listed == set(__import__("mcp_server.tools").tools.SCOPES)
            for name, arguments, path, query in _same_queries(agenda):
                result = await client.call_tool(name, arguments)
                assert not result.is_error, (name, result.content)
                expected = _rest(rest, agenda["token"], path, query)
                data = result.structured_content["data"]
                if name == "get_attendance":
                    # Computed at each call: the two calls may fall in different seconds.
                    told, now_ = (data["audience"].pop("computed_at"),
                                  expected["data"]["audience"].pop("computed_at"))
                    assert 0 <= now_ - told <= 5
                assert data == expected["data"], name
                meta = {k: v for k, v in expected["meta"].items() if k != "request_id"}
                assert result.structured_content["meta"] == meta, name

    run(work)


@pytest.mark.parametrize("era", ERAS)
def test_results_carry_the_attribution_and_public_page_links(served, agenda, era):
    async def work():
        async with connected(served.site, era, token=agenda["token"]) as client:
            result = await client.call_tool("search_events", {"q": "shelter night"})
        answer = result.structured_content
        assert answer["meta"]["attribution"]["terms"] == f"{served.site}/v1/terms"
        assert answer["data"][0]["url"] == f"{served.site}/events/{agenda['event'].slug}"

    run(work)


@pytest.mark.parametrize("era", ERAS)
def test_lists_page_with_the_rest_cursors(served, agenda, rest, era):
    async def work():
        async with connected(served.site, era, token=agenda["token"]) as client:
            first = (await client.call_tool("search_events", {"limit": 2})).structured_content
            cursor = first["meta"]["next_cursor"]
            assert cursor
            second = (await client.call_tool("search_events", {"limit": 2, "cursor": cursor}))
        expected = _rest(rest, agenda["token"], "/events", {"limit": 2, "cursor": cursor})
        assert second.structured_content["data"] == expected["data"]
        assert {e["id"] for e in first["data"]}.isdisjoint(e["id"] for e in expected["data"])

    run(work)


@pytest.mark.parametrize("era", ERAS)
def test_organiser_tools_report_sales_and_scan_tickets(served, agenda, committed, rest, era):
    event = agenda["event"]
    # A ticket of tonight for this era alone (the eras may run in any order, or apart).
    factories.TicketFactory(event_id=agenda["tonight"].id, code=f"MCPDOOR-{era}")
    committed.commit()

    async def work():
        async with connected(served.site, era, token=agenda["token"]) as client:
            sold = 120 if era == "legacy" else 240
            reported = await client.call_tool("report_external_sales",
                                              {"event_id": event.id, "sold": sold})
            first = await client.call_tool("scan_ticket", {"code": f"MCPDOOR-{era}"})
            second = await client.call_tool("scan_ticket", {"code": f"MCPDOOR-{era}"})
            return reported, first, second

    reported, first, second = run(work)
    assert reported.structured_content["data"] == _rest(
        rest, agenda["token"], f"/events/{event.id}/external-sales")["data"]
    assert first.structured_content["data"]["ok"] is True
    assert (second.structured_content["data"]["ok"],
            second.structured_content["data"]["status"]) == (False, "used")


@pytest.mark.parametrize("era", ERAS)
def test_a_missing_resource_is_a_tool_error_with_the_rest_message(served, agenda, era):
    result = call(served.site, era, agenda["token"], "get_event", {"id": "no-such-night"})
    assert result.is_error
    assert "no-such-night" in result.content[0].text


@pytest.mark.parametrize("era", ERAS)
def test_a_nul_in_an_argument_is_a_tool_error_without_internals(served, committed, era):
    # A token of its own: the module's token has the minute's requests of the other tests.
    organisation = factories.OrganisationFactory(name=f"Null Bytes {era}")
    _, token = tokens.create_token(committed, organisation=organisation, name="nul",
                                   scopes=["read", "attendance"])
    committed.commit()

    async def work():
        async with connected(served.site, era, token=token) as client:
            return [await client.call_tool(name, arguments) for name, arguments in (
                ("get_event", {"id": "a\x00"}), ("get_venue", {"id": "a\x00"}),
                ("search_events", {"city": "\x00"}), ("list_user_badges", {"user": "\x00"}),
                ("get_attendance", {"event_id": "\x00"}))]

    for result in run(work):
        assert result.is_error
        text = result.content[0].text
        assert "NUL" in text and "psycopg" not in text and "SELECT" not in text, text


@pytest.mark.parametrize("era", ERAS)
def test_a_bad_argument_is_named_as_the_tool_names_it(served, committed, era):
    # A token of its own: the module's token has the minute's requests of the other tests.
    organisation = factories.OrganisationFactory(name=f"Backwards Dates {era}")
    _, token = tokens.create_token(committed, organisation=organisation, name="dates",
                                   scopes=["read"])
    committed.commit()
    backwards = {"date_from": api.day(0).isoformat(),
                 "date_to": api.day(-1).isoformat()}

    result = call(served.site, era, token, "search_events", backwards)
    assert result.is_error
    assert result.content[0].text.endswith("date_to: is before date_from"), result.content


def _scan(rest, token):
    """scan_ticket called over plain HTTP."""
    return rest.post("/mcp", headers={
        "Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json", "MCP-Protocol-Version": "2025-11-25"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
              "params": {"name": "scan_ticket", "arguments": {"code": "MCPDOOR1"}}})


@pytest.mark.parametrize("era", ERAS)
def test_a_token_without_a_scope_does_not_see_its_tools_and_gets_403(served, agenda, rest, era):
    async def work():
        async with connected(served.site, era, token=agenda["reader"]) as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
            assert "scan_ticket" not in listed and "get_attendance" not in listed
            assert "search_events" in listed

    run(work)
    response = _scan(rest, agenda["reader"])
    assert response.status_code == 403
    challenge = response.headers["WWW-Authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="scan"' in challenge
    assert response.json()["error"]["code"] == "insufficient_scope"


def test_a_missing_scope_403_on_mcp_carries_the_limit_headers(served, agenda, rest):
    # Counted before its tool's scope is checked, as REST's missing-scope 403 is.
    response = _scan(rest, agenda["reader"])
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "insufficient_scope"
    assert int(response.headers["X-RateLimit-Remaining"]) < int(
        response.headers["X-RateLimit-Limit"])
    assert int(response.headers["X-RateLimit-Reset"]) > 0
    assert "RateLimit" in response.headers and "RateLimit-Policy" in response.headers


def test_without_a_valid_token_the_answer_is_401_pointing_at_the_metadata(served, rest):
    for headers in ({}, {"Authorization": "Bearer svc_live_nope"},
                    {"Authorization": "Bearer svc_oat_nope"}):
        response = rest.post("/mcp", headers=headers, json={})
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"] == (
            f'Bearer resource_metadata="{served.site}/.well-known/oauth-protected-resource", '
            f'scope="read attendance scan"')


def test_requests_count_against_the_token_limits(served, agenda, rest):
    response = rest.post("/mcp", headers={
        "Authorization": f"Bearer {agenda['reader']}", "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json", "MCP-Protocol-Version": "2025-11-25"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.status_code == 200
    assert int(response.headers["X-RateLimit-Remaining"]) < int(
        response.headers["X-RateLimit-Limit"])
    assert "RateLimit" in response.headers


def test_a_host_other_than_the_site_is_refused_by_the_sdk(served, agenda, rest):
    response = rest.post("/mcp", headers={
        "Host": "evil.example", "Authorization": f"Bearer {agenda['reader']}",
        "Accept": "application/json, text/event-stream", "Content-Type": "application/json"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.status_code == 421


def _list_tools(rest, token):
    return rest.post("/mcp", headers={
        "Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json", "MCP-Protocol-Version": "2025-11-25"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})


def test_past_the_minute_limit_the_answer_is_429_with_retry_after(served, committed, rest,
                                                                  monkeypatch):
    organisation = factories.OrganisationFactory(name="Busy Bots")
    _, token = tokens.create_token(committed, organisation=organisation, name="busy",
                                   scopes=["read"])
    committed.commit()
    monkeypatch.setattr(served.service.usage, "per_minute", 3)
    # 20 seconds into a minute, for every request of the test.
    monkeypatch.setattr(served.service.usage, "clock", lambda: 1_800_000_000 - 40)
    assert [_list_tools(rest, token).status_code for _ in range(3)] == [200, 200, 200]
    refused = _list_tools(rest, token)
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "40"
    assert refused.json()["error"]["code"] == "rate_limited"
    assert refused.headers["X-RateLimit-Remaining"] == "0"


def test_a_suspended_organisations_token_is_refused(served, committed, rest):
    organisation = factories.OrganisationFactory(name="Closed Club")
    _, token = tokens.create_token(committed, organisation=organisation, name="closed",
                                   scopes=["read"])
    organisation.suspended = True
    committed.commit()
    response = _list_tools(rest, token)
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"


def test_a_get_holds_no_stream_open_but_answers_405(served, agenda, rest):
    response = rest.get("/mcp", headers={"Authorization": f"Bearer {agenda['reader']}",
                                         "Accept": "text/event-stream"})
    assert response.status_code == 405 and response.headers["Allow"] == "POST"
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_agenda_serve_workers_list_the_same_tools_and_answer(served, agenda, mcp_database_url):
    """`agenda serve` runs its workers with `python -OO`, without docstrings: the tools an
    assistant sees there (names, titles, descriptions, schemas) are those served in process,
    and a tool call is answered."""
    def listing(tools):
        return {tool.name: tool.model_dump(exclude_none=True) for tool in tools}

    async def work(site):
        async with connected(served.site, "legacy", token=agenda["token"]) as client:
            expected = listing((await client.list_tools()).tools)
        async with connected(site, "legacy", token=agenda["token"]) as client:
            listed = listing((await client.list_tools()).tools)
            result = await client.call_tool("get_event", {"id": agenda["event"].slug})
        return expected, listed, result

    env = {"AGENDA_DATABASE_URL": mcp_database_url, "AGENDA_SECRET_KEY": "mcp-test-secret"}
    with agenda_serve(env, workers=1) as site:
        expected, listed, result = run(work, site)
    assert all(tool["description"] for tool in listed.values())
    assert listed == expected
    assert not result.is_error
    assert result.structured_content["data"]["slug"] == agenda["event"].slug


def test_cors_a_page_of_another_origin_calls_the_tools(served, agenda, rest):
    """Issue 22: a browser-based MCP client (a page of another origin) gets its preflight
    answered and its tool calls served and readable; the Host is still checked."""
    origin = "https://assistant.example"
    preflight = rest.options("/mcp", headers={
        "Origin": origin, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version"})
    assert preflight.status_code == 204
    assert preflight.headers["Access-Control-Allow-Origin"] == "*"
    called = rest.post("/mcp", headers={
        "Origin": origin, "Authorization": f"Bearer {agenda['reader']}",
        "Accept": "application/json, text/event-stream", "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-11-25"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
              "params": {"name": "get_event", "arguments": {"id": agenda["event"].slug}}})
    assert called.status_code == 200, called.text
    assert called.json()["result"]["structuredContent"]["data"]["slug"] == agenda["event"].slug
    assert called.headers["Access-Control-Allow-Origin"] == "*"
    assert "mcp-protocol-version" in called.headers["Access-Control-Expose-Headers"].lower()
    rebound = rest.post("/mcp", headers={
        "Origin": origin, "Host": "evil.example", "Authorization": f"Bearer {agenda['reader']}",
        "Accept": "application/json, text/event-stream", "Content-Type": "application/json"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert rebound.status_code == 421

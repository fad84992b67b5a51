"""The catalogue tools are answered by the response cache (edge/cache.py) as a GET of the
same URL is: one kept answer for both, served again without being built, and a change to
the catalogue in the very next result, whoever wrote it."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from models import tokens
from tests import factories
from tests.api import day
from tests.mcp_server.client import connected, run


@pytest.fixture(scope="module")
def zwolle(committed):
    """Two nights in Zwolle, one in Venlo, and a live token with the scope read."""
    organisation = factories.OrganisationFactory(name="Kept Answers")
    venue = factories.VenueFactory(name="Cache Club", city="Zwolle")
    nights = [factories.EventFactory(title=f"Zwolle {offset}", venue=venue,
                                     organisation=organisation,
                                     date=day(offset)) for offset in (2, 3)]
    elsewhere = factories.EventFactory(title="Venlo Night", venue__city="Venlo",
                                       organisation=organisation,
                                       date=day(2))
    _, token = tokens.create_token(committed, organisation=organisation, name="kept",
                                   scopes=["read"])
    committed.commit()
    return {"token": token, "venue": venue, "nights": nights, "elsewhere": elsewhere}


def _tool(site: str, token: str, name: str, arguments: dict) -> dict:
    async def work():
        async with connected(site, "legacy", token=token) as client:
            result = await client.call_tool(name, arguments)
        assert not result.is_error, result.content
        return result.structured_content

    return run(work)


def _without_request_id(body: dict) -> dict:
    return {"data": body["data"],
            "meta": {k: v for k, v in body["meta"].items() if k != "request_id"}}


def test_a_tools_result_is_kept_and_served_again_to_a_get_of_the_same_query(served, zwolle,
                                                                            rest):
    headers = {"Authorization": f"Bearer {zwolle['token']}"}
    result = _tool(served.site, zwolle["token"], "search_events",
                   {"city": "Zwolle", "date_from": day(0).isoformat(), "limit": 5})
    # The same query spelled as a URL, its parameters in another order.
    got = rest.get("/v1/events", params={"limit": 5, "from": day(0).isoformat(),
                                         "city": "Zwolle"}, headers=headers)
    assert got.status_code == 200
    assert got.headers["x-cache"] == "hit"
    assert result == _without_request_id(got.json())
    assert [event["title"] for event in result["data"]] == ["Zwolle 2", "Zwolle 3"]


def test_a_gets_kept_answer_is_a_tools_result_without_building_it(served, zwolle, rest,
                                                                  monkeypatch):
    headers = {"Authorization": f"Bearer {zwolle['token']}"}
    venue = zwolle["venue"]
    first = rest.get(f"/v1/venues/{venue.id}", headers=headers)
    assert first.headers["x-cache"] == "miss"
    cache = served.service.cache
    operation = served.service.routes.identified("get_venue")
    handler, built = cache.handlers[operation], []

    def building(**arguments):
        built.append(arguments)
        return handler(**arguments)

    monkeypatch.setitem(cache.handlers, operation, building)
    result = _tool(served.site, zwolle["token"], "get_venue", {"id": venue.id})
    assert built == []
    assert result == _without_request_id(first.json())
    # Another venue's answer is built by the same handler, for the tool.
    other = _tool(served.site, zwolle["token"], "get_venue",
                  {"id": zwolle["elsewhere"].venue_id})
    assert built == [{"id_": zwolle["elsewhere"].venue_id}]
    assert other["data"]["city"] == "Venlo"


def test_a_change_written_in_plain_sql_is_in_the_next_tool_result(served, zwolle, committed):
    """Lists and details alike; a change elsewhere leaves them as they were."""
    night, elsewhere = zwolle["nights"][0], zwolle["elsewhere"]

    def seen() -> tuple[list[str], str]:
        listed = _tool(served.site, zwolle["token"], "search_events", {"city": "Zwolle"})
        detail = _tool(served.site, zwolle["token"], "get_event", {"id": night.id})
        return [event["title"] for event in listed["data"]], detail["data"]["title"]

    def rename(event, title: str) -> None:
        committed.execute(text("UPDATE events SET title = :title WHERE id = :id"),
                          {"title": title, "id": event.id})
        committed.commit()

    assert seen() == (["Zwolle 2", "Zwolle 3"], "Zwolle 2")
    rename(elsewhere, "Venlo Renamed")
    assert seen() == (["Zwolle 2", "Zwolle 3"], "Zwolle 2")
    rename(night, "Zwolle Renamed")
    assert seen() == (["Zwolle Renamed", "Zwolle 3"], "Zwolle Renamed")
    rename(night, "Zwolle 2")
    assert seen() == (["Zwolle 2", "Zwolle 3"], "Zwolle 2")

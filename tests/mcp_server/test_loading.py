"""A worker makes the SDK's server at its first admitted MCP request: one serving only REST
(and refusals of /mcp) never holds the SDK, and the first MCP requests arriving at once are
all answered by the one server it makes."""

from __future__ import annotations

import concurrent.futures
import json

import httpx

from agenda.app import create_app
from models import tokens
from tests import factories
from tests.servers import fresh_interpreter, served_in_thread

MCP_HEADERS = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json", "MCP-Protocol-Version": "2025-11-25"}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}

WORKER = """
import json, sys
import httpx
from tests.servers import served_with_a_token

seen = {}
with served_with_a_token("mcp_loading") as (app, site, token), \\
        httpx.Client(base_url=site, timeout=30) as client:
    headers = {"Authorization": f"Bearer {token}"}
    mcp = dict(json.loads(sys.argv[1]), **headers)
    seen["rest"] = client.get("/v1/genres", headers=headers).status_code
    refused = client.post("/mcp", headers=json.loads(sys.argv[1]), json=json.loads(sys.argv[2]))
    seen["refused"] = [refused.status_code, refused.headers.get("www-authenticate", "")]
    seen["loaded_before"] = "mcp" in sys.modules
    listed = client.post("/mcp", headers=mcp, json=json.loads(sys.argv[2]))
    seen["listed"] = [listed.status_code, len(listed.json()["result"]["tools"])]
    seen["loaded_after"] = "mcp" in sys.modules
print(json.dumps(seen))
"""


def test_a_worker_serving_only_rest_and_refusals_does_not_load_the_sdk():
    seen = json.loads(fresh_interpreter(WORKER, json.dumps(MCP_HEADERS), json.dumps(LIST_TOOLS)))
    assert seen["rest"] == 200
    assert seen["refused"][0] == 401
    assert 'scope="read attendance scan"' in seen["refused"][1]
    assert seen["loaded_before"] is False
    assert seen["listed"][0] == 200 and seen["listed"][1] > 0
    assert seen["loaded_after"] is True


def test_the_first_requests_at_once_are_all_answered_by_the_tools(mcp_database_url, committed):
    _, token = tokens.create_token(committed, organisation=factories.OrganisationFactory(),
                                   name="at once", scopes=["read"])
    committed.commit()

    def app_for(site):
        return create_app({"database_url": mcp_database_url, "secret_key": "mcp-test-secret",
                           "site_url": site})

    with served_in_thread(app_for) as (app, site), httpx.Client(base_url=site,
                                                                 timeout=30) as client:
        def listed(_):
            response = client.post("/mcp", json=LIST_TOOLS,
                                   headers={**MCP_HEADERS, "Authorization": f"Bearer {token}"})
            assert response.status_code == 200, response.text
            return sorted(tool["name"] for tool in response.json()["result"]["tools"])

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(listed, range(8)))
    app.service.close()
    assert "search_events" in answers[0]
    assert all(answer == answers[0] for answer in answers)

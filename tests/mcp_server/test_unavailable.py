"""Issue 22: every 503 on every surface carries Retry-After, MCP's too, with a database that
cannot be reached (a port nothing listens on) behind a service that is otherwise running."""

from __future__ import annotations

import httpx

from agenda.app import create_app
from tests.servers import free_port, served_in_thread

MCP_HEADERS = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json", "MCP-Protocol-Version": "2025-11-25"}


def test_a_503_on_mcp_carries_retry_after_as_on_rest():
    dead = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/nowhere"
    made = []

    def app_for(site):
        made.append(create_app({"database_url": dead, "site_url": site, "listen": False,
                                "secret_key": "test-secret"}))
        return made[0]

    try:
        with served_in_thread(app_for) as (_app, site), httpx.Client(base_url=site,
                                                                      timeout=30) as client:
            token = {"Authorization": "Bearer svc_live_anything"}
            mcp = client.post("/mcp", headers={**token, **MCP_HEADERS},
                              json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            rest = client.get("/v1/genres", headers=token)
    finally:
        for app in made:
            app.service.close()
    for response in (mcp, rest):
        assert response.status_code == 503, response.text
        assert response.json()["error"]["code"] == "service_unavailable"
        assert int(response.headers["Retry-After"]) > 0

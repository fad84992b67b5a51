"""The running service for the MCP tests: uvicorn on a free port, over real HTTP.

The server sees only committed data, so these tests use a database of their own
(migrated once per run and worker): what they commit never reaches other tests.
"""

from __future__ import annotations

import threading
import time

import httpx
import pytest
import uvicorn

from agenda.app import create_app
from tests.servers import drop_database, free_port, migrated_database


@pytest.fixture(scope="session")
def mcp_database_url(worker_id):
    url = migrated_database(f"{worker_id}_mcp")
    yield url
    drop_database(url)


@pytest.fixture(scope="session")
def served(mcp_database_url):
    """The whole application served by uvicorn in a thread (lifespan on); its site URL."""
    port = free_port()
    site = f"http://127.0.0.1:{port}"
    app = create_app({"database_url": mcp_database_url, "secret_key": "mcp-test-secret",
                      "site_url": site, "validate_responses": True,
                      "oauth_metadata_documents_on_loopback": True})
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="on",
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    app.site = site
    yield app
    server.should_exit = True
    thread.join(10)
    app.service.close()


@pytest.fixture(scope="session")
def committed(served):
    """A session whose work the server sees once committed (factories bound to it)."""
    from tests import factories

    session = served.service.sessions()
    factories.bind(session)
    yield session
    session.close()


@pytest.fixture
def rest(served):
    """A plain HTTP client on the running service."""
    with httpx.Client(base_url=served.site, timeout=10) as client:
        yield client

"""The running service for the MCP tests: uvicorn on a free port, over real HTTP.

The server sees only committed data, so these tests use a database of their own
(migrated once per run and worker): what they commit never reaches other tests.
"""

from __future__ import annotations

import httpx
import pytest

from agenda.app import create_app
from tests.servers import drop_database, migrated_database, served_in_thread


@pytest.fixture(scope="session")
def mcp_database_url(worker_id):
    url = migrated_database(f"{worker_id}_mcp")
    yield url
    drop_database(url)


@pytest.fixture(scope="session")
def served(mcp_database_url):
    """The whole application served by uvicorn in a thread (lifespan on); its site URL."""
    def app_for(site):
        return create_app({"database_url": mcp_database_url, "secret_key": "mcp-test-secret",
                           "site_url": site, "validate_responses": True,
                           "oauth_metadata_documents_on_loopback": True})

    with served_in_thread(app_for) as (app, site):
        app.site = site
        yield app
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

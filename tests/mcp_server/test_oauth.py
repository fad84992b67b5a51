"""The whole OAuth flow as an assistant meets it, with the SDK's `OAuthClientProvider`:
discovery from the 401, registration (dynamic, or a Client ID Metadata Document), sign-in
and consent (driven over HTTP, no browser), token, refresh after expiry, revocation."""

from __future__ import annotations

import http.server
import threading
from urllib.parse import parse_qs, urlsplit

import httpx
import orjson
import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth import oauth2 as sdk_oauth
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
from sqlalchemy import text, update

from models import members, oauth
from models.db import now
from tests import factories
from tests.mcp_server.client import ERAS, connected, run
from tests.oauth import flow

REDIRECT = "http://127.0.0.1:9999/callback"


class Storage:
    """The provider's token and client storage, in memory."""

    def __init__(self):
        self.tokens = self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


class Person:
    """A person at a browser: signs in and allows, over plain HTTP with cookies."""

    def __init__(self, site: str, email: str):
        self.http = httpx.Client(base_url=site, timeout=10)
        self.email, self.back, self.visits = email, None, 0

    async def redirect_handler(self, url: str) -> None:
        self.visits += 1
        parts = urlsplit(url)
        flow.sign_in(self.http, self.email)
        page = flow.consent_page(self.http, {k: v[0] for k, v in parse_qs(parts.query).items()})
        self.back = flow.decide(self.http, page)

    async def callback_handler(self) -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=self.back["code"], state=self.back.get("state"),
                                       iss=self.back.get("iss"))


@pytest.fixture(scope="module")
def person(committed):
    found = members.create_person(committed, email="noor@mail.example", handle="noor",
                                  name="Noor", password=flow.PASSWORD, now=now())
    committed.commit()
    return found


@pytest.fixture(scope="module")
def metadata_document():
    """A client's metadata document served on loopback: its URL is the client id."""
    holder = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the http.server interface
            body = orjson.dumps({"client_id": holder["url"], "client_name": "Document App",
                                 "redirect_uris": [REDIRECT],
                                 "token_endpoint_auth_method": "none"})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    holder["url"] = f"http://127.0.0.1:{server.server_address[1]}/client.json"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield holder["url"]
    server.shutdown()
    server.server_close()


def _provider(site, person_at, storage, document_url=None):
    return OAuthClientProvider(
        server_url=f"{site}/mcp",
        client_metadata=OAuthClientMetadata(client_name="Test Assistant",
                                            redirect_uris=[REDIRECT],
                                            token_endpoint_auth_method="none"),
        storage=storage, redirect_handler=person_at.redirect_handler,
        callback_handler=person_at.callback_handler, client_metadata_url=document_url)


def _expire_access_tokens(served, access_token: str) -> None:
    with served.service.sessions.begin() as session:
        session.execute(update(oauth.OAuthToken).where(
            oauth.OAuthToken.token_hash == oauth.digest(access_token)).values(
            expires_at=now() - 1))


def _whole_flow(served, person, era, monkeypatch, document_url=None):
    if document_url:
        # The SDK accepts only https document URLs; the test's document is on loopback http.
        monkeypatch.setattr(sdk_oauth, "is_valid_client_metadata_url", lambda url: True)
    storage, at_browser = Storage(), Person(served.site, person.email)
    provider = _provider(served.site, at_browser, storage, document_url)

    async def work():
        async with connected(served.site, era, auth=provider) as client:
            me = (await client.call_tool("who_am_i", {})).structured_content["data"]
            assert me["kind"] == "oauth" and me["scopes"] == ["read"]
            first = storage.tokens
            _expire_access_tokens(served, first.access_token)
            provider.context.token_expiry_time = 1.0  # the client sees the expiry too
            listed = await client.list_tools()
            assert {tool.name for tool in listed.tools} >= {"search_events", "who_am_i"}
            assert "scan_ticket" not in {tool.name for tool in listed.tools}
            assert storage.tokens.access_token != first.access_token  # refreshed
            assert at_browser.visits == 1  # no second consent
        return storage

    try:
        storage = run(work)
        revoked = at_browser.http.post("/oauth/revoke", data={
            "token": storage.tokens.refresh_token, "client_id": storage.client.client_id})
    finally:
        at_browser.http.close()
    if document_url:
        assert storage.client.client_id == document_url
    assert revoked.status_code == 200
    after = httpx.post(f"{served.site}/mcp", json={}, headers={
        "Authorization": f"Bearer {storage.tokens.access_token}"})
    assert after.status_code == 401
    rest = httpx.get(f"{served.site}/v1/events", headers={
        "Authorization": f"Bearer {storage.tokens.access_token}"})
    assert rest.status_code == 401
    return storage


@pytest.mark.parametrize("era", ERAS)
def test_the_whole_flow_with_dynamic_registration(served, person, era, monkeypatch):
    storage = _whole_flow(served, person, era, monkeypatch)
    assert storage.client.client_id.startswith("cli_")


@pytest.mark.parametrize("era", ERAS)
def test_the_whole_flow_with_a_client_metadata_document(served, person, era, monkeypatch,
                                                        metadata_document):
    _whole_flow(served, person, era, monkeypatch, metadata_document)


def _access_token(served, person) -> str:
    """An access token for {site}/mcp, consented in a browser-like client."""
    with httpx.Client(base_url=served.site) as browser:
        app = flow.register(browser)
        verifier, challenge = flow.pkce()
        flow.sign_in(browser, person.email)
        back = flow.decide(browser, flow.consent_page(browser, flow.authorize_params(
            app, challenge, resource=f"{served.site}/mcp")))
        return flow.exchange(browser, app, back["code"], verifier).json()["access_token"]


def test_an_oauth_token_works_on_the_mcp_endpoint_but_not_on_rest(served, person):
    headers = {"Authorization": f"Bearer {_access_token(served, person)}",
               "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-11-25"}
    listed = httpx.post(f"{served.site}/mcp", headers=headers,
                        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert listed.status_code == 200
    assert httpx.get(f"{served.site}/v1/me", headers=headers).status_code == 401


def test_an_oauth_connections_tool_results_show_a_change_at_once(served, person, committed):
    """The catalogue stamp is read with an OAuth token too (edge/cache.py keeps the answers
    under it): a change written meanwhile is in the next result."""
    night = factories.EventFactory(title="Consented Night")
    committed.commit()
    headers = {"Authorization": f"Bearer {_access_token(served, person)}",
               "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-11-25"}

    def title() -> str:
        called = httpx.post(f"{served.site}/mcp", headers=headers, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "get_event", "arguments": {"id": night.id}}})
        assert called.status_code == 200, called.text
        return called.json()["result"]["structuredContent"]["data"]["title"]

    assert title() == "Consented Night"
    committed.execute(text("UPDATE events SET title = 'Renamed Night' WHERE id = :id"),
                      {"id": night.id})
    committed.commit()
    assert title() == "Renamed Night"

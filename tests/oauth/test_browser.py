"""The whole OAuth flow end to end, as an MCP client and a person live it: the service served
over HTTP, Authlib's client for discovery, registration, token exchange, refresh and
revocation, and a real browser (headless Chromium driven by Playwright) for sign-in and
consent.

Needs Debian's chromium at /usr/bin/chromium; without it the tests are skipped, unless
AGENDA_REQUIRE_BROWSER=1 (CI), when they fail.
"""

from __future__ import annotations

import os
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from authlib.integrations.base_client import OAuthError
from authlib.integrations.httpx_client import OAuth2Client
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata
from click.testing import CliRunner
from playwright.sync_api import sync_playwright
from sqlalchemy import func, select

from agenda.app import create_app
from agenda.cli import main as agenda_command
from models import oauth
from models.db import now
from tests.oauth import flow
from tests.servers import served_in_thread

CHROMIUM = Path("/usr/bin/chromium")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


# --- the browser, the served site, the client's loopback server --------------------------

@pytest.fixture(scope="module")
def chromium():
    """Headless Chromium, or a skip (a failure when AGENDA_REQUIRE_BROWSER=1)."""
    if not CHROMIUM.exists():
        reason = f"no browser at {CHROMIUM} (apt-get install chromium)"
        if os.environ.get("AGENDA_REQUIRE_BROWSER") == "1":
            pytest.fail(f"AGENDA_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium):
    """A fresh browser profile (no cookies) with one tab."""
    context = chromium.new_context(locale="en-GB")
    yield context.new_page()
    context.close()


class Site:
    """The served service (`served_in_thread`): its app, at `url` (also its site URL)."""

    def __init__(self, database_url: str, url: str, app):
        self.database_url, self.url, self.app = database_url, url, app

    def access(self, token: str) -> oauth.Access | None:
        """What the token gives now, read on a fresh session of the served database."""
        with self.app.service.sessions() as fresh:
            return oauth.authenticate_access(fresh, token, now=now())


@pytest.fixture(scope="module")
def site(database_url):
    def app_for(url):
        return create_app({"database_url": database_url, "secret_key": "browser-secret",
                           "site_url": url})

    with served_in_thread(app_for) as (app, url):
        yield Site(database_url, url, app)
    app.service.close()


class Catcher(ThreadingHTTPServer):
    """The client's side on another loopback port: records the requests to `/callback`
    (the redirect URI) and serves the pages given to `serve_page`."""

    def __init__(self):
        self.callbacks: list[str] = []
        self.pages: dict[str, str] = {}
        super().__init__(("127.0.0.1", 0), _CatcherHandler)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        self.callback = f"{self.url}/callback"

    def serve_page(self, path: str, html: str) -> str:
        self.pages[path] = html
        return f"{self.url}{path}"


class _CatcherHandler(BaseHTTPRequestHandler):
    server: Catcher

    def do_GET(self):
        path = urlsplit(self.path).path
        if path == "/callback":
            self.server.callbacks.append(f"{self.server.url}{self.path}")
            body = "<!doctype html><title>Back in the app</title><p>Done."
        elif path in self.server.pages:
            body = self.server.pages[path]
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *_args):
        """Quiet: the test reads `callbacks`."""


@pytest.fixture
def catcher():
    server = Catcher()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


def _agenda(database_url: str, *args: str) -> str:
    """Run the `agenda` command on the database; its output."""
    result = CliRunner().invoke(agenda_command, list(args),
                                env={"AGENDA_DATABASE_URL": database_url},
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output.strip()


@pytest.fixture
def member(site):
    """A person who owns an organisation, committed (the served app has its own
    connections) and unique per test, so reruns on one database never collide."""
    tag = uuid.uuid4().hex[:10]
    organisation = f"Club {tag}"
    organisation_id = _agenda(site.database_url, "organisation", "create", organisation)
    email = f"p{tag}@mail.example"
    _agenda(site.database_url, "person", "create", "--email", email, "--handle", f"p-{tag}",
            "--name", f"Person {tag}", "--password", flow.PASSWORD,
            "--role", f"{organisation_id}:owner")
    return {"email": email, "organisation": organisation, "organisation_id": organisation_id}


# --- steps --------------------------------------------------------------------------------

def _discover(site: Site) -> tuple[dict, dict]:
    """(protected resource metadata, authorization server metadata), found as a client
    finds them: from the resource to its authorization server."""
    resource = httpx.get(f"{site.url}/.well-known/oauth-protected-resource/mcp")
    assert resource.status_code == 200, resource.text
    (issuer,) = resource.json()["authorization_servers"]
    server = httpx.get(f"{issuer}/.well-known/oauth-authorization-server")
    assert server.status_code == 200, server.text
    return resource.json(), server.json()


def _client(site: Site, catcher: Catcher) -> tuple[dict, OAuth2Client]:
    """Discovery and registration of a public client; (server metadata, Authlib client)."""
    resource, server = _discover(site)
    assert resource["resource"] == f"{site.url}/mcp" and server["issuer"] == site.url
    AuthorizationServerMetadata(server).validate()
    registered = httpx.post(server["registration_endpoint"], json={
        "client_name": "Browser Test App", "redirect_uris": [catcher.callback],
        "token_endpoint_auth_method": "none"})
    assert registered.status_code == 201, registered.text
    client = OAuth2Client(
        client_id=registered.json()["client_id"], token_endpoint_auth_method="none",
        revocation_endpoint_auth_method="none", redirect_uri=catcher.callback,
        scope="read attendance scan", code_challenge_method="S256")
    return server, client


def _sign_in_in_dutch(page, email: str) -> None:
    assert page.locator("html").get_attribute("lang") == "nl"
    page.get_by_label("E-mailadres").fill(email)
    page.get_by_label("Wachtwoord").fill(flow.PASSWORD)
    page.get_by_role("button", name="Inloggen").click()


def _screenshot(page, path: Path) -> None:
    page.screenshot(path=str(path), full_page=True)
    assert path.read_bytes().startswith(PNG_SIGNATURE) and path.stat().st_size > 1000


# --- tests --------------------------------------------------------------------------------

def test_a_client_connects_through_a_real_browser_then_refreshes_and_revokes(
        page, site, catcher, member, tmp_path):
    server, client = _client(site, catcher)
    verifier, state = flow.pkce()[0], uuid.uuid4().hex
    url, _ = client.create_authorization_url(
        server["authorization_endpoint"], state=state, code_verifier=verifier,
        resource=f"{site.url}/mcp", ui_locales="nl")

    page.goto(url)
    assert urlsplit(page.url).path == "/signin"
    assert page.get_by_role("heading", name="Inloggen").is_visible()
    _screenshot(page, tmp_path / "signin.png")
    _sign_in_in_dutch(page, member["email"])

    page.wait_for_url(f"{site.url}/oauth/consent?*")
    assert page.get_by_role("heading", name="Toegang geven?").is_visible()
    assert page.get_by_text("Browser Test App wil de Event Agenda Service").is_visible()
    page.get_by_label(f"{member['organisation']} (eigenaar)").check()
    offered = page.locator("li[data-scope]").all_inner_texts()
    assert "Tickets scannen aan de deur van de organisatie" in offered
    assert any(text.startswith("Bezoekcijfers") for text in offered)
    _screenshot(page, tmp_path / "consent.png")
    page.get_by_role("button", name="Toestaan").click()

    # Chromium applies the consent page's CSP `form-action` to this redirect as well.
    page.wait_for_url(f"{catcher.callback}?*", timeout=10_000)
    (callback,) = catcher.callbacks
    back = {key: values[0] for key, values in parse_qs(urlsplit(callback).query).items()}
    assert back["state"] == state and back["iss"] == server["issuer"]

    token = client.fetch_token(server["token_endpoint"], authorization_response=callback,
                               state=state, code_verifier=verifier)
    assert token["token_type"] == "Bearer" and token["expires_in"] == 3600
    assert set(token["scope"].split()) == {"read", "attendance", "scan"}
    access = site.access(token["access_token"])
    assert access.organisation_id == member["organisation_id"]
    assert access.scopes == {"read", "attendance", "scan"}
    assert access.resource == f"{site.url}/mcp"

    renewed = client.refresh_token(server["token_endpoint"],
                                   refresh_token=token["refresh_token"])
    assert renewed["refresh_token"] != token["refresh_token"]
    assert site.access(renewed["access_token"]) is not None

    revoked = client.revoke_token(server["revocation_endpoint"], renewed["access_token"],
                                  token_type_hint="access_token")
    assert revoked.status_code == 200
    assert site.access(renewed["access_token"]) is None
    # Revoking an access token leaves its grant: the refresh token still works.
    newest = client.refresh_token(server["token_endpoint"],
                                  refresh_token=renewed["refresh_token"])
    assert site.access(newest["access_token"]) is not None

    # The first refresh token was replaced: refused, and its reuse revokes the newest tokens.
    with pytest.raises(OAuthError) as reused:
        client.refresh_token(server["token_endpoint"], refresh_token=token["refresh_token"])
    assert reused.value.error == "invalid_grant"
    assert site.access(newest["access_token"]) is None
    with pytest.raises(OAuthError) as after:
        client.refresh_token(server["token_endpoint"], refresh_token=newest["refresh_token"])
    assert after.value.error == "invalid_grant"
    client.close()


def test_a_consent_form_posted_from_another_site_grants_nothing(page, site, catcher, member):
    server, client = _client(site, catcher)
    url, _ = client.create_authorization_url(
        server["authorization_endpoint"], code_verifier=flow.pkce()[0],
        resource=f"{site.url}/mcp", ui_locales="nl")
    client.close()
    page.goto(url)
    _sign_in_in_dutch(page, member["email"])
    page.wait_for_url(f"{site.url}/oauth/consent?*")
    ticket = page.locator('input[name="request"]').get_attribute("value")

    # The person, signed in, opens another site's page that posts the consent form.
    attack = catcher.serve_page("/attack", f"""<!doctype html>
<form method="post" action="{site.url}/oauth/consent">
  <input type="hidden" name="request" value="{ticket}">
  <input type="hidden" name="decision" value="allow">
  <input type="hidden" name="organisation" value="{member['organisation_id']}">
  <input type="hidden" name="csrf" value="forged">
</form>
<script>document.forms[0].submit()</script>""")
    with page.expect_response(f"{site.url}/oauth/consent") as posted:
        page.goto(attack)
    # Same site (another port of 127.0.0.1), so the session cookie went along: refused for
    # the missing CSRF token (403), not sent to sign in.
    assert posted.value.status == 403
    assert catcher.callbacks == []
    with site.app.service.sessions() as fresh:
        grants = fresh.scalar(select(func.count()).select_from(oauth.OAuthGrant).where(
            oauth.OAuthGrant.client_id == client.client_id))
    assert grants == 0

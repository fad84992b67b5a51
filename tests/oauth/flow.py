"""Steps of the OAuth flow for the tests: register, PKCE, sign in, consent, exchange."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from urllib.parse import parse_qs, urlsplit

from tests.api import SITE

REDIRECT = "http://127.0.0.1:9999/callback"
PASSWORD = "correct horse battery"


def pkce() -> tuple[str, str]:
    """(verifier, S256 challenge)."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    return verifier, challenge.rstrip(b"=").decode()


def register(client, **metadata) -> dict:
    body = {"client_name": "Test App", "redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": "none", **metadata}
    response = client.post("/oauth/register", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def authorize_params(app: dict, challenge: str, **extra) -> dict:
    return {"response_type": "code", "client_id": app["client_id"], "redirect_uri": REDIRECT,
            "code_challenge": challenge, "code_challenge_method": "S256", "state": "st-123",
            "resource": f"{SITE}/mcp", **extra}


def csrf_of(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


def sign_in(client, email: str, password: str = PASSWORD, next_path: str = "/settings/apps"):
    page = client.get("/signin", params={"next": next_path})
    return client.post("/signin", data={"email": email, "password": password,
                                        "next": next_path, "csrf": csrf_of(page.text)},
                       follow_redirects=False)


def consent_page(client, params: dict):
    """Follow /oauth/authorize to the consent page (the person is signed in)."""
    response = client.get("/oauth/authorize", params=params, follow_redirects=False)
    assert response.status_code == 302, response.text
    location = response.headers["Location"]
    assert location.startswith("/oauth/consent?"), location
    return client.get(location)


def decide(client, page, *, decision="allow", organisation="") -> dict:
    """Post the consent form; the query the client gets back on its redirect URI."""
    ticket = re.search(r'name="request" value="([^"]+)"', page.text).group(1)
    response = client.post("/oauth/consent", data={
        "csrf": csrf_of(page.text), "request": ticket, "decision": decision,
        "organisation": organisation}, follow_redirects=False)
    assert response.status_code == 302, response.text
    return callback(response.headers["Location"])


def callback(location: str) -> dict:
    assert location.startswith(REDIRECT), location
    return {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}


def exchange(client, app: dict, code: str, verifier: str, **extra):
    return client.post("/oauth/token", data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
        "client_id": app["client_id"], "code_verifier": verifier, **extra})


def refresh(client, app: dict, refresh_token: str, **extra):
    return client.post("/oauth/token", data={
        "grant_type": "refresh_token", "refresh_token": refresh_token,
        "client_id": app["client_id"], **extra})


def tokens_for(client, email: str, *, organisation: str = "", **metadata) -> tuple[dict, dict]:
    """(app, token response) after a whole flow for the signed-in person."""
    app = register(client, **metadata)
    verifier, challenge = pkce()
    sign_in(client, email)
    back = decide(client, consent_page(client, authorize_params(app, challenge)),
                  organisation=organisation)
    response = exchange(client, app, back["code"], verifier)
    assert response.status_code == 200, response.text
    return app, response.json()

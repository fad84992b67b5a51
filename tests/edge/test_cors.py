"""CORS for browser-based MCP clients (issue 22): the discovery documents, registration,
token, revocation and /mcp answer pages of other origins, preflights included; REST does
not (its tokens never go into code on users' devices)."""

from __future__ import annotations

import pytest

from edge.cors import CROSS_ORIGIN
from tests.oauth import flow

ORIGIN = "https://assistant.example"
MCP_HEADERS = "authorization, content-type, mcp-protocol-version, mcp-session-id"


def _listed(value: str | None) -> set[str]:
    return {item.strip().lower() for item in (value or "").split(",") if item.strip()}


def _cross_origin(response) -> None:
    """An actual answer a page of another origin may read, with the headers it needs."""
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Credentials" not in response.headers
    assert {"www-authenticate", "mcp-session-id", "mcp-protocol-version",
            "x-request-id"} <= _listed(response.headers.get("Access-Control-Expose-Headers"))


@pytest.mark.parametrize("path", sorted(CROSS_ORIGIN))
def test_cors_preflight_is_answered_on_each_browser_mcp_endpoint(client, path):
    method = "POST" if path == "/mcp" else CROSS_ORIGIN[path]
    response = client.options(path, headers={
        "Origin": ORIGIN, "Access-Control-Request-Method": method,
        "Access-Control-Request-Headers": MCP_HEADERS})
    assert response.status_code == 204, response.text
    assert response.content == b""
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert method.lower() in _listed(response.headers["Access-Control-Allow-Methods"])
    assert _listed(MCP_HEADERS) <= _listed(response.headers["Access-Control-Allow-Headers"])
    assert int(response.headers["Access-Control-Max-Age"]) > 0
    assert "Access-Control-Allow-Credentials" not in response.headers


def test_cors_preflight_of_mcp_needs_no_token(client):
    """The preflight carries no Authorization (browsers never send it there): it was a 401."""
    response = client.options("/mcp", headers={
        "Origin": ORIGIN, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type"})
    assert response.status_code == 204


@pytest.mark.parametrize("path", ["/.well-known/oauth-authorization-server",
                                  "/.well-known/oauth-protected-resource",
                                  "/.well-known/oauth-protected-resource/mcp"])
def test_cors_actual_request_on_the_discovery_documents(client, path):
    response = client.get(path, headers={"Origin": ORIGIN})
    assert response.status_code == 200
    _cross_origin(response)
    # The same headers without an Origin: an answer a shared cache keeps serves every origin.
    assert client.get(path).headers["Access-Control-Allow-Origin"] == "*"


def test_cors_actual_requests_on_registration_token_and_revocation(client):
    registered = client.post("/oauth/register", headers={"Origin": ORIGIN}, json={
        "client_name": "Browser Assistant", "redirect_uris": [flow.REDIRECT],
        "token_endpoint_auth_method": "none"})
    assert registered.status_code == 201
    _cross_origin(registered)
    client_id = registered.json()["client_id"]

    token = client.post("/oauth/token", headers={"Origin": ORIGIN}, data={
        "grant_type": "authorization_code", "code": "no-such-code", "client_id": client_id,
        "redirect_uri": flow.REDIRECT, "code_verifier": "v" * 43})
    assert token.status_code == 400 and token.json()["error"] == "invalid_grant"
    _cross_origin(token)

    revoked = client.post("/oauth/revoke", headers={"Origin": ORIGIN},
                          data={"token": "svc_oat_nothing", "client_id": client_id})
    assert revoked.status_code == 200
    _cross_origin(revoked)


def test_cors_actual_request_on_mcp_exposes_the_challenge(client):
    response = client.post("/mcp", headers={"Origin": ORIGIN}, json={
        "jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer resource_metadata=")
    _cross_origin(response)


def test_cors_is_absent_from_rest(client, make_token):
    """REST (/v1) answers no CORS header, to a preflight or to an actual request."""
    token = make_token("read")
    answers = [
        client.options("/v1/events", headers={
            "Origin": ORIGIN, "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "authorization"}),
        client.get("/v1/events", headers={"Origin": ORIGIN,
                                          "Authorization": f"Bearer {token}"}),
        client.get("/v1/terms", headers={"Origin": ORIGIN}),
        client.get("/v1/openapi.json", headers={"Origin": ORIGIN}),
        client.get("/v1/me", headers={"Origin": ORIGIN}),
    ]
    assert [a.status_code for a in answers[1:]] == [200, 200, 200, 401]
    for answer in answers:
        assert not [name for name in answer.headers if name.lower().startswith("access-control-")]


def test_cors_is_absent_from_the_pages_with_a_cookie(client):
    """The sign-in page (and the consent page behind it) work with a cookie: no CORS."""
    for response in (client.get("/signin", headers={"Origin": ORIGIN}),
                     client.options("/signin", headers={
                         "Origin": ORIGIN, "Access-Control-Request-Method": "POST"})):
        assert "Access-Control-Allow-Origin" not in response.headers

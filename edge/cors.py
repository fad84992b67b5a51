"""CORS: the one rule for which addresses a page of another origin may call.

Browser-based MCP clients (an assistant in a web page) discover, register, get tokens and
call {site_url}/mcp from their own origin; so those endpoints answer cross-origin requests
and their preflights, from any origin, without credentials: they read no cookie, only a
bearer token or client credentials the page itself sends, so a page can use nothing of a
visitor's it does not already hold. DNS rebinding is stopped by the MCP endpoint's Host
check, not by the origin.

The REST API (/v1) and every page stay without CORS: REST tokens never go into code that
runs on users' devices (the specification), and the sign-in and consent pages use a cookie.
"""

from __future__ import annotations

from edge import answers

# Path -> the methods a cross-origin page may use there (the preflight's answer).
CROSS_ORIGIN: dict[str, str] = {
    "/mcp": "GET, POST, DELETE",
    "/oauth/register": "POST",
    "/oauth/token": "POST",
    "/oauth/revoke": "POST",
    "/.well-known/oauth-authorization-server": "GET",
    "/.well-known/oauth-protected-resource": "GET",
    "/.well-known/oauth-protected-resource/mcp": "GET",
}
# What such a page may send beyond the safelisted headers: the bearer token and JSON
# bodies, and the MCP transport's headers of both protocol eras.
ALLOWED_HEADERS = (b"Authorization, Content-Type, Mcp-Session-Id, MCP-Protocol-Version, "
                   b"Mcp-Method, Mcp-Name, Last-Event-ID")
# What it may read beyond the safelisted ones: the 401's challenge, the MCP session and
# version, the request id a report quotes, and the limits.
EXPOSED_HEADERS = (b"WWW-Authenticate, Mcp-Session-Id, MCP-Protocol-Version, X-Request-Id, "
                   b"X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After")
# How long a browser may keep a preflight's answer (Chromium keeps at most 2 hours).
MAX_AGE = b"7200"


def methods_for(path: str) -> str | None:
    """The methods a page of another origin may use on `path`; None where CORS is off."""
    return CROSS_ORIGIN.get(path.rstrip("/") or "/")


class Cors:
    """The outermost ASGI layer: answers the preflights of the cross-origin endpoints and
    adds the CORS headers to every answer they give, whichever layer wrote it. The headers
    do not depend on the request's origin, so an answer kept by a shared cache (the
    discovery documents are public for an hour) serves every origin alike."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        methods = methods_for(scope["path"]) if scope["type"] == "http" else None
        if methods is None:
            await self.app(scope, receive, send)
            return
        if scope["method"] == "OPTIONS" and _is_preflight(scope["headers"]):
            await answers.answer(send, 204, headers=[
                (b"access-control-allow-origin", b"*"),
                (b"access-control-allow-methods", methods.encode()),
                (b"access-control-allow-headers", ALLOWED_HEADERS),
                (b"access-control-max-age", MAX_AGE),
            ])
            return

        async def with_cors(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [
                    *message.get("headers", []), (b"access-control-allow-origin", b"*"),
                    (b"access-control-expose-headers", EXPOSED_HEADERS)]}
            await send(message)

        await self.app(scope, receive, with_cors)


def _is_preflight(headers) -> bool:
    """An OPTIONS request is a CORS preflight when it names an origin and the method to come."""
    names = {name for name, _value in headers}
    return b"origin" in names and b"access-control-request-method" in names

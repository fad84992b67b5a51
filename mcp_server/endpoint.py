"""{site_url}/mcp: our authentication, scopes and limits around the SDK's Streamable HTTP app.

The SDK speaks the protocol (stateless, JSON responses, both eras) and checks
Host and Origin against the configured site; this layer, in front of it, does
what the SDK's own auth wrapper does not do the way the specification asks:
a 401 with `resource_metadata` *and* `scope`, OAuth tokens only when issued
for {site_url}/mcp, live tokens too, a 403 `insufficient_scope` naming the
scope a called tool needs, and the per-token limits of the REST API.
"""

from __future__ import annotations

import contextlib
from urllib.parse import urlsplit

import orjson
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from edge import answers
from edge.admission import admit, authorization, client_address
from edge.routes import Gate
from edge.state import RequestState
from mcp_server import identity as identities
from mcp_server import tools
from models.errors import DomainError, ScopeMissing, Unauthorized

PATH = "/mcp"
# What a client should ask for when it connects (consent narrows it to the person's role).
CONNECT_SCOPES = "read attendance scan"
# Every MCP request is counted under the endpoint's path; a called tool's scope is checked
# with the caller (`McpEndpoint._authenticate`).
GATE = Gate(PATH, frozenset())


class McpEndpoint:
    """The ASGI app answering {site_url}/mcp, and the lifespan its session manager needs."""

    def __init__(self, service):
        self.service = service
        self.server: MCPServer = tools.build_server(service.settings.provider_name,
                                                    service.settings.site_url, service.document,
                                                    middleware=[_visible_tools])
        self.transport = None

    @contextlib.asynccontextmanager
    async def lifespan(self, _app=None):
        """Enter a fresh session manager (one per lifespan: a manager runs only once)."""
        site = urlsplit(self.service.settings.site_url)
        self.transport = self.server.streamable_http_app(
            streamable_http_path=PATH, stateless_http=True, json_response=True,
            max_request_body_size=self.service.settings.max_body_bytes,
            transport_security=TransportSecuritySettings(
                allowed_hosts=[site.netloc], allowed_origins=[f"{site.scheme}://{site.netloc}"]))
        async with self.server.session_manager.run():
            yield
        self.transport = None

    def route(self, app):
        """An ASGI app sending {site_url}/mcp here and everything else on to `app`."""

        async def dispatch(scope, receive, send):
            if scope["type"] == "http" and scope["path"].rstrip("/") == PATH:
                await self(scope, receive, send)
            else:
                await app(scope, receive, send)

        return dispatch

    async def __call__(self, scope, receive, send):
        state = RequestState.of(scope)
        if self.transport is None:
            await answers.answer_error(send, 503, "The MCP server is starting.",
                                       state.request_id)
            return
        replay = _Body(receive)
        body = await replay.read()
        try:
            admission = await admit(self.service, state, GATE, authorization(scope),
                                    client_address(scope), self._authenticate)
            # Checked once counted, as admission checks REST's scopes: the refusal carries
            # the limit headers too (edge/middleware.py).
            _check_tool_scope(admission.who, _called_tool(scope, body))
        except DomainError as error:
            # RFC 6750's name for a missing scope, as MCP clients read it.
            code = "insufficient_scope" if isinstance(error, ScopeMissing) else None
            await answers.answer_problem(send, error, state.request_id, code=code,
                                         headers=self._challenge(error))
            return

        if scope["method"] == "GET":
            # Stateless, with JSON answers: there is never anything to stream to a client,
            # so no stream is held open (the protocol's other answer to a GET is 405).
            await answers.answer_error(send, 405, "The MCP endpoint answers POST only.",
                                       state.request_id, headers={"Allow": "POST"})
            return
        who = {**scope.get("state", {}), "mcp_identity": admission.who,
               "agenda_service": self.service}
        # Pages of any origin may call with a token (edge/cors.py): the SDK keeps checking
        # the Host (DNS rebinding), but not the Origin, which would refuse them all.
        headers = [(k, v) for k, v in scope["headers"] if k != b"origin"]
        await self.transport({**scope, "state": who, "headers": headers}, replay, send)

    def _authenticate(self, token: str):
        """MCP's callers: live API tokens and OAuth access tokens for {site_url}/mcp (on an
        admission thread), with the catalogue stamp the response cache serves their tools'
        answers under (tools.catalogue)."""
        who, current = identities.authenticate(
            self.service.direct, self.service.sessions, token,
            resource=f"{self.service.settings.site_url}{PATH}")
        return who.caller, current, who

    def _challenge(self, error: DomainError) -> dict[str, str]:
        """The RFC 6750 / RFC 9728 challenge of a refused request, beside the headers of its
        kind (`answers.answer_problem`)."""
        metadata = f"{self.service.settings.site_url}/.well-known/oauth-protected-resource"
        headers = {}
        if isinstance(error, Unauthorized):
            headers["WWW-Authenticate"] = (f'Bearer resource_metadata="{metadata}", '
                                           f'scope="{CONNECT_SCOPES}"')
        if isinstance(error, ScopeMissing):
            headers["WWW-Authenticate"] = (f'Bearer error="insufficient_scope", '
                                           f'scope="{error.scope}", '
                                           f'resource_metadata="{metadata}"')
        return headers


async def _visible_tools(ctx, call_next):
    """tools/list shows only the tools this token may call."""
    result = await call_next(ctx)
    if ctx.method != "tools/list" or ctx.request is None:
        return result
    who = ctx.request.scope["state"]["mcp_identity"]
    listed = result if isinstance(result, dict) else result.model_dump(by_alias=True,
                                                                       exclude_none=True)
    return {**listed, "tools": [t for t in listed["tools"]
                                if who.may(tools.SCOPES.get(t["name"], "admin"))]}


def _check_tool_scope(who: identities.Identity, called: str | None) -> None:
    """`ScopeMissing` when `who` may not call the tool `called` (None: no tool called)."""
    needed = tools.SCOPES.get(called) if called else None
    if needed is not None and not who.may(needed):
        raise ScopeMissing(needed, f"The tool {called!r} needs the scope {needed!r}.")


def _called_tool(scope, body: bytes) -> str | None:
    """The tool a `tools/call` request names (None for every other message)."""
    if scope["method"] != "POST":
        return None
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if isinstance(message, dict) and message.get("method") == "tools/call":
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        return name if isinstance(name, str) else None
    return None


class _Body:
    """The request body, read whole (the outer middleware capped its size), then replayed
    to the SDK as one message."""

    def __init__(self, receive):
        self.receive, self.data, self.delivered = receive, b"", False

    async def read(self) -> bytes:
        chunks, more = [], True
        while more:
            message = await self.receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        self.data = b"".join(chunks)
        return self.data

    async def __call__(self):
        if self.delivered:
            return await self.receive()
        self.delivered = True
        return {"type": "http.request", "body": self.data, "more_body": False}

"""{site_url}/mcp: our authentication, scopes and limits around the SDK's Streamable HTTP app.

The SDK speaks the protocol (stateless, JSON responses, both eras) and checks
Host and Origin against the configured site; this layer, in front of it, does
what the SDK's own auth wrapper does not do the way the specification asks:
a 401 with `resource_metadata` *and* `scope`, OAuth tokens only when issued
for {site_url}/mcp, live tokens too, a 403 `insufficient_scope` naming the
scope a called tool needs, and the per-token limits of the REST API.

This module does not import the SDK: a worker makes the SDK's server
(mcp_server/server.py) at its first admitted MCP request, so that a worker serving
only REST (and refusals of /mcp) holds ~25 MB less and starts ~0.4 s sooner.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars

import orjson

from edge import answers
from edge.admission import admit, authorization, client_address
from edge.routes import Gate
from edge.state import RequestState
from mcp_server import identity as identities
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
        self.open = False
        # The SDK's server being made or made (`mcp_server.server.Running`), from the first
        # admitted request of the lifespan on.
        self._running: asyncio.Task | None = None

    @contextlib.asynccontextmanager
    async def lifespan(self, _app=None):
        """Open the endpoint; as it closes, stop the SDK's server if a request made one."""
        self.open = True
        try:
            yield
        finally:
            self.open = False
            running, self._running = self._running, None
            if running is not None:
                await (await running).stop()

    async def _server(self):
        """The SDK's server, made once a lifespan whatever the requests asking for it at
        once (a request that goes away does not stop it being made)."""
        if self._running is None:
            # In a context of its own: the request's (edge/context.py's lane) is not the
            # server's, whose session manager outlives the request.
            self._running = asyncio.create_task(_started(self.service),
                                                context=contextvars.Context())
        return await asyncio.shield(self._running)

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
        if not self.open:
            await answers.answer_error(send, 503, "The MCP server is starting.",
                                       state.request_id)
            return
        replay = _Body(receive)
        body = await replay.read()
        try:
            admission = await admit(self.service, state, GATE, authorization(scope),
                                    client_address(scope), self._authenticate)
            running = await self._server()
            # Checked once counted, as admission checks REST's scopes: the refusal carries
            # the limit headers too (edge/middleware.py).
            running.check_tool_scope(admission.who, _called_tool(scope, body))
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
        await running.transport({**scope, "state": who, "headers": headers}, replay, send)

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


async def _started(service):
    """The SDK's server made (on a thread: importing the SDK takes ~0.4 s) and started."""

    def made():
        from mcp_server.server import Running  # the SDK, loaded by the first MCP request

        return Running(service, PATH)

    running = await asyncio.to_thread(made)
    await running.start()
    return running


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

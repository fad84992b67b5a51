"""The SDK's side of {site_url}/mcp: its server with every tool and its Streamable HTTP app.

A worker makes it at its first admitted MCP request (mcp_server/endpoint.py): importing the
SDK (pydantic's models of every message, its Starlette app, the tools' schemas) costs a
worker ~25 MB and ~0.4 s, which a worker serving only REST never pays.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from mcp_server import identity as identities
from mcp_server import tools
from models.errors import ScopeMissing


class Running:
    """The SDK's server and its app for one lifespan: `start`ed on the event loop, its
    session manager running in a task of its own until `stop`."""

    def __init__(self, service, path: str):
        """Build the server with every tool (slow: on a thread, beside the event loop)."""
        self.service, self.path = service, path
        self.server: MCPServer = tools.build_server(service.settings.provider_name,
                                                    service.settings.site_url, service.document,
                                                    middleware=[_visible_tools])
        self.transport = None
        self._stopping = asyncio.Event()
        self._task: asyncio.Task | None = None

    async def start(self) -> None:
        """Make the app and run its session manager (one per `Running`: a manager runs only
        once) in a task that outlives the request starting it."""
        site = urlsplit(self.service.settings.site_url)
        self.transport = self.server.streamable_http_app(
            streamable_http_path=self.path, stateless_http=True, json_response=True,
            max_request_body_size=self.service.settings.max_body_bytes,
            transport_security=TransportSecuritySettings(
                allowed_hosts=[site.netloc], allowed_origins=[f"{site.scheme}://{site.netloc}"]))
        running = asyncio.Event()

        async def run():
            async with self.server.session_manager.run():
                running.set()
                await self._stopping.wait()

        self._task = asyncio.create_task(run())
        ready = asyncio.create_task(running.wait())
        await asyncio.wait({self._task, ready}, return_when=asyncio.FIRST_COMPLETED)
        if not running.is_set():
            ready.cancel()
            self._task.result()  # the manager's failure, raised here

    async def stop(self) -> None:
        """End the session manager's task (as the lifespan ends)."""
        self._stopping.set()
        if self._task is not None:
            await self._task

    @staticmethod
    def check_tool_scope(who: identities.Identity, called: str | None) -> None:
        """`ScopeMissing` when `who` may not call the tool `called` (None: no tool called)."""
        needed = tools.SCOPES.get(called) if called else None
        if needed is not None and not who.may(needed):
            raise ScopeMissing(needed, f"The tool {called!r} needs the scope {needed!r}.")


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

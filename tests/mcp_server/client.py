"""Driving the MCP endpoint with the SDK's own client, in either protocol era."""

from __future__ import annotations

import contextlib

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

# The 2025-11-25 initialize handshake, and the 2026-07-28 era without it.
ERAS = ["legacy", "2026-07-28"]


@contextlib.asynccontextmanager
async def connected(site: str, era: str, *, token: str | None = None, auth=None):
    """An SDK client on {site}/mcp with a bearer token or an `httpx2.Auth` (OAuth)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, auth=auth, timeout=20) as http, \
            Client(streamable_http_client(f"{site}/mcp", http_client=http), mode=era,
                   cache=None) as client:
        yield client


def run(work, *args):
    """Run an async test body to its end."""
    return anyio.run(work, *args)


def call(site: str, era: str, token: str, name: str, arguments: dict):
    """One tool call on a connection of its own: its result."""
    async def work():
        async with connected(site, era, token=token) as client:
            return await client.call_tool(name, arguments)

    return run(work)

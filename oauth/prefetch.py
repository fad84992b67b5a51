"""An authorization request that names a metadata document waits for it here, on the event
loop, before it reaches a handler thread (see oauth/documents.py)."""

from __future__ import annotations

import asyncio
import logging

from edge.admission import client_address
from edge.limits import per_address
from oauth import documents

log = logging.getLogger("agenda.oauth")
# Authorization requests per client address and minute: a person starts a handful; each
# may make the service fetch a document. (name, limit, seconds, counted per address).
AUTHORIZATIONS_PER_MINUTE = 60
AUTHORIZATIONS = (("authorize-address", AUTHORIZATIONS_PER_MINUTE, 60, True),)


def windows_of(windows, address: str) -> list[tuple[str, int, int]]:
    """`(name, limit, seconds)` windows for `Usage.throttle`, per address (an IPv6 /64)
    where they say so."""
    return [per_address(name, limit, address, seconds) if by_address else (name, limit, seconds)
            for name, limit, seconds, by_address in windows]


class Prefetch:
    """ASGI layer: fetch the document of `/oauth/authorize?client_id=https://...` (unless
    this address is already over its limit there, which the handler then answers)."""

    def __init__(self, app, service):
        self.app = app
        self.service = service

    async def __call__(self, scope, receive, send):
        url = documents.authorization_client_id(scope)
        if url is not None and documents.cached(url) is None:
            over = await self.service.admitting(
                self.service.usage.over, windows_of(AUTHORIZATIONS, client_address(scope)))
            if over is None:
                await self._fetch(url)
        await self.app(scope, receive, send)

    async def _fetch(self, url: str) -> None:
        fetching = documents.fetch_soon(
            url, allow_loopback=self.service.settings.oauth_metadata_documents_on_loopback)
        try:
            # The fetch keeps its own deadline; this one only guards the wait for it. Shielded:
            # other requests for the same URL share the fetch.
            async with asyncio.timeout(documents.DEADLINE + 1):
                await asyncio.shield(asyncio.wrap_future(fetching))
        except documents.DocumentError:
            pass  # kept as the URL's failure, or not (busy): the handler reads which
        except TimeoutError:
            log.warning("a client metadata document outlived its deadline: %s", url)

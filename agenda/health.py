"""/healthz: whether the database answers, within a deadline, for load balancers.

Answered on the event loop, right inside the outermost layer, with a thread of its own for
the database: not on the handler threads, which a frozen database can hold every one of
(a health check queued behind them answered only when they did). The check waits at most
`HEALTH_SECONDS` (or the statement deadline, when shorter); a check still running then is
a 503, and so is the next one while it runs.
"""

from __future__ import annotations

import asyncio
import logging

import orjson
from sqlalchemy import text

from edge import answers
from edge.problems import DATABASE_RETRY_AFTER
from edge.threads import Threads

log = logging.getLogger("agenda")
PATH = "/healthz"
# What a load balancer's probe waits for, at most, before it counts the check as failed.
HEALTH_SECONDS = 2.0


class HealthCheck:
    """ASGI layer answering /healthz (see the module's text)."""

    def __init__(self, app, service):
        self.app = app
        self.service = service
        self.seconds = min(HEALTH_SECONDS, service.settings.statement_timeout_ms / 1000)
        self._thread = Threads(1, "health")
        self._running: asyncio.Future | None = None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] != PATH:
            await self.app(scope, receive, send)
            return
        if await self._database_answers():
            await answers.answer(send, 200, orjson.dumps({"status": "ok"}))
            return
        await answers.answer(send, 503, orjson.dumps({"status": "unavailable"}),
                             [(b"retry-after", str(DATABASE_RETRY_AFTER).encode()),
                              (b"cache-control", b"no-store")])

    async def _database_answers(self) -> bool:
        if self._running is None or self._running.done():
            self._running = self._thread.run(self._ask)
        try:
            async with asyncio.timeout(self.seconds):
                return await asyncio.shield(self._running)
        except TimeoutError:
            log.warning("health check failed: the database did not answer in %.1f s",
                        self.seconds)
            return False

    def _ask(self) -> bool:
        """Whether the database answers a statement (on the check's thread)."""
        try:
            with self.service.engine.connect() as connection:
                connection.execute(text("SELECT 1"))
        except Exception as error:  # noqa: BLE001 - any failure means "not healthy"
            log.warning("health check failed: %s", error.__class__.__name__)
            return False
        return True

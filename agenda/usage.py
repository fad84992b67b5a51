"""Per-token request counters: the minute window, the daily quota, usage per route.

Counters live in a `limits` storage (the engine under flask-limiter): `memory://`
in one process, Redis when several workers or hosts serve
(`AGENDA_RATELIMIT_STORAGE`). flask-limiter itself is not used: its windows
start at a key's first hit and know no time zone, while the specification wants
a minute window aligned to the clock and a day that ends at midnight in
Europe/Amsterdam. Here every window is a key named after the clock (the minute
number, the Amsterdam date), counted with one atomic increment.

When the store cannot be reached the service fails open: requests are answered
without limits and a warning is logged (at most once a minute) until the store
is back, which happens by itself (see README, "Rate limits").
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import time
from zoneinfo import ZoneInfo

from limits.errors import StorageError
from limits.storage import storage_from_string

from models.errors import RateLimited
from models.tokens import Caller

log = logging.getLogger("agenda.usage")
AMSTERDAM = ZoneInfo("Europe/Amsterdam")
DAY_SECONDS = 26 * 3600  # a calendar day is at most 25 hours; keys outlive it a little
# Requests without a valid token, per client address and minute, before 429.
UNAUTHENTICATED_PER_MINUTE = 30


@dataclasses.dataclass(frozen=True)
class Figures:
    """Where a token stands: its limits, what it used, and when the windows reset."""

    per_minute: int
    remaining_this_minute: int
    reset: int
    per_day: int
    used_today: int
    day_reset: int
    now: int

    def headers(self) -> dict[str, str]:
        """`X-RateLimit-*` for the minute window; `RateLimit(-Policy)` (IETF draft) for both."""
        minute_left = max(0, self.reset - self.now)
        day_left = max(0, self.day_reset - self.now)
        remaining_today = max(0, self.per_day - self.used_today)
        return {
            "X-RateLimit-Limit": str(self.per_minute),
            "X-RateLimit-Remaining": str(self.remaining_this_minute),
            "X-RateLimit-Reset": str(self.reset),
            "RateLimit-Policy": f'"minute";q={self.per_minute};w=60, '
                                f'"day";q={self.per_day};w=86400',
            "RateLimit": f'"minute";r={self.remaining_this_minute};t={minute_left}, '
                         f'"day";r={remaining_today};t={day_left}',
        }


def amsterdam_day(timestamp: float) -> dt.date:
    """The calendar date in Europe/Amsterdam at `timestamp`."""
    return dt.datetime.fromtimestamp(timestamp, AMSTERDAM).date()


def next_amsterdam_midnight(timestamp: float) -> int:
    """Unix seconds of the next midnight in Europe/Amsterdam (DST days included)."""
    tomorrow = amsterdam_day(timestamp) + dt.timedelta(days=1)
    return int(dt.datetime.combine(tomorrow, dt.time(0), AMSTERDAM).timestamp())


class Usage:
    """Counts requests per token and refuses those over a limit."""

    def __init__(self, storage_url: str, *, per_minute: int, per_day: int, clock=time.time):
        self.storage = storage_from_string(storage_url, wrap_exceptions=True)
        self.per_minute = per_minute
        self.per_day = per_day
        self.clock = clock
        self._warned_at = 0.0

    def hit(self, caller: Caller, route: str) -> Figures:
        """Count one request of `caller` on `route`; `RateLimited` when over a limit."""
        moment = self.clock()
        keys = _Keys(caller.token_id, moment)
        per_day = caller.per_day or self.per_day
        try:
            in_minute = self.storage.incr(keys.minute, 120)
            if in_minute > self.per_minute:
                figures = self._figures(caller, moment, in_minute=in_minute)
                raise RateLimited(f"Over {self.per_minute} requests per minute.", headers={
                    **figures.headers(), "Retry-After": str(max(1, figures.reset - int(moment)))})
            used = self.storage.incr(keys.day, DAY_SECONDS)
            if used > per_day:
                figures = self._figures(caller, moment, in_minute=in_minute, used=per_day)
                raise RateLimited(f"Over the daily quota of {per_day} requests.", headers={
                    **figures.headers(),
                    "Retry-After": str(max(1, figures.day_reset - int(moment)))})
            self.storage.incr(keys.route(route), DAY_SECONDS)
        except StorageError as error:
            self._warn(error)
            return self._unknown(caller, moment)
        return self._figures(caller, moment, in_minute=in_minute, used=used)

    def refund_day(self, caller: Caller) -> None:
        """Take one request off today's quota (a 304 is free of it; it still counted a minute)."""
        try:
            self.storage.incr(_Keys(caller.token_id, self.clock()).day, DAY_SECONDS, amount=-1)
        except StorageError as error:
            self._warn(error)

    def refuse_unauthenticated(self, address: str) -> None:
        """Count a request without a valid token from `address`; `RateLimited` past the limit."""
        moment = self.clock()
        minute = int(moment // 60)
        try:
            count = self.storage.incr(f"agenda:anon:{address}:{minute}", 120)
        except StorageError as error:
            self._warn(error)
            return
        if count > UNAUTHENTICATED_PER_MINUTE:
            raise RateLimited("Too many requests without a valid token from this address.",
                              headers={"Retry-After": str(max(1, (minute + 1) * 60 - int(moment)))})

    def figures(self, caller: Caller) -> Figures:
        """The token's standing now, without counting a request."""
        moment = self.clock()
        try:
            return self._figures(caller, moment)
        except StorageError as error:
            self._warn(error)
            return self._unknown(caller, moment)

    def usage_today(self, caller: Caller, routes: list[str]) -> list[dict]:
        """Today's count per route template, for the routes used at least once."""
        keys = _Keys(caller.token_id, self.clock())
        try:
            counts = [(route, self.storage.get(keys.route(route))) for route in routes]
        except StorageError as error:
            self._warn(error)
            return []
        return [{"path": route, "count": count} for route, count in counts if count]

    def _figures(self, caller: Caller, moment: float, *, in_minute: int | None = None,
                 used: int | None = None) -> Figures:
        keys = _Keys(caller.token_id, moment)
        per_day = caller.per_day or self.per_day
        if in_minute is None:
            in_minute = self.storage.get(keys.minute)
        if used is None:
            used = self.storage.get(keys.day)
        return Figures(self.per_minute, max(0, self.per_minute - in_minute),
                       (int(moment // 60) + 1) * 60, per_day, min(max(used, 0), per_day),
                       next_amsterdam_midnight(moment), int(moment))

    def _unknown(self, caller: Caller, moment: float) -> Figures:
        """Figures while the store is unreachable: the limits, nothing counted."""
        return Figures(self.per_minute, self.per_minute, (int(moment // 60) + 1) * 60,
                       caller.per_day or self.per_day, 0, next_amsterdam_midnight(moment),
                       int(moment))

    def _warn(self, error: Exception) -> None:
        now = time.monotonic()
        if now - self._warned_at >= 60:
            self._warned_at = now
            log.warning("rate-limit store unreachable, answering without limits: %s", error)


class _Keys:
    """The storage keys of one token at one moment."""

    def __init__(self, token_id: str, moment: float):
        self.token_id = token_id
        self.minute = f"agenda:m:{token_id}:{int(moment // 60)}"
        self.date = amsterdam_day(moment).isoformat()
        self.day = f"agenda:d:{token_id}:{self.date}"

    def route(self, route: str) -> str:
        return f"agenda:u:{self.token_id}:{self.date}:{route}"

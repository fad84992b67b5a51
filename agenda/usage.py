"""Per-token request counters: the minute window, the daily quota, usage per route.

Counters live in a `limits` storage: `memory://` in one process, Redis when
several workers or hosts serve (`AGENDA_RATELIMIT_STORAGE`). Windows are keyed
by the clock, not by a token's first request: the minute window is aligned to
the minute and the day is the calendar day in Europe/Amsterdam.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from zoneinfo import ZoneInfo

from limits.storage import storage_from_string

from models.errors import RateLimited
from models.tokens import Caller

AMSTERDAM = ZoneInfo("Europe/Amsterdam")
DAY_SECONDS = 26 * 3600  # a calendar day is at most 25 hours; keys outlive it a little


@dataclasses.dataclass(frozen=True)
class Figures:
    """Where a token stands: its limits and what it used."""

    per_minute: int
    remaining_this_minute: int
    reset: int
    per_day: int
    used_today: int

    def headers(self) -> dict[str, str]:
        """The `X-RateLimit-*` headers of the minute window."""
        return {
            "X-RateLimit-Limit": str(self.per_minute),
            "X-RateLimit-Remaining": str(self.remaining_this_minute),
            "X-RateLimit-Reset": str(self.reset),
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
        self.storage = storage_from_string(storage_url)
        self.per_minute = per_minute
        self.per_day = per_day
        self.clock = clock

    def hit(self, caller: Caller, route: str) -> Figures:
        """Count one request of `caller` on `route`; `RateLimited` when over a limit."""
        moment = self.clock()
        minute = int(moment // 60)
        day = amsterdam_day(moment).isoformat()
        per_day = caller.per_day or self.per_day
        in_minute = self.storage.incr(f"agenda:m:{caller.token_id}:{minute}", 120)
        reset = (minute + 1) * 60
        if in_minute > self.per_minute:
            figures = self._figures(caller, minute=in_minute, day=day, reset=reset)
            raise RateLimited(
                f"Over {self.per_minute} requests per minute.",
                headers={**figures.headers(), "Retry-After": str(max(1, reset - int(moment)))},
            )
        used = self.storage.incr(f"agenda:d:{caller.token_id}:{day}", DAY_SECONDS)
        if used > per_day:
            retry = next_amsterdam_midnight(moment) - int(moment)
            figures = Figures(self.per_minute, max(0, self.per_minute - in_minute), reset,
                              per_day, per_day)
            raise RateLimited(f"Over the daily quota of {per_day} requests.",
                              headers={**figures.headers(), "Retry-After": str(max(1, retry))})
        self.storage.incr(f"agenda:u:{caller.token_id}:{day}:{route}", DAY_SECONDS)
        return Figures(self.per_minute, max(0, self.per_minute - in_minute), reset, per_day,
                       used)

    def figures(self, caller: Caller) -> Figures:
        """The token's standing now, without counting a request."""
        moment = self.clock()
        minute = int(moment // 60)
        in_minute = self.storage.get(f"agenda:m:{caller.token_id}:{minute}")
        return self._figures(caller, minute=in_minute, day=amsterdam_day(moment).isoformat(),
                             reset=(minute + 1) * 60)

    def usage_today(self, caller: Caller, routes: list[str]) -> list[dict]:
        """Today's count per route template, for the routes used at least once."""
        day = amsterdam_day(self.clock()).isoformat()
        counts = [(route, self.storage.get(f"agenda:u:{caller.token_id}:{day}:{route}"))
                  for route in routes]
        return [{"path": route, "count": count} for route, count in counts if count]

    def _figures(self, caller: Caller, *, minute: int, day: str, reset: int) -> Figures:
        per_day = caller.per_day or self.per_day
        used = min(self.storage.get(f"agenda:d:{caller.token_id}:{day}"), per_day)
        return Figures(self.per_minute, max(0, self.per_minute - minute), reset, per_day, used)

"""Per-token request counters: the minute window, the daily quota, usage per route.

Every window is a counter named after the clock (the minute number, the date in
Europe/Amsterdam), so the minute is aligned to the clock and the day ends at
Amsterdam midnight. (flask-limiter is not used: its windows start at a key's
first hit and know no time zone.) One request is one atomic step: in memory
under a lock, in Redis one Lua script (one round trip), so that several workers
and hosts sharing Redis (`AGENDA_RATELIMIT_STORAGE=redis://...`) count exactly.
A server also opens an asyncio client for Redis in its lifespan (`Usage.open`), so that
a request whose token the process knows is counted from the event loop (`hit_async`)
instead of on a thread (~135 against ~235 µs of CPU for a cached answer).

When Redis cannot be reached the service fails open: requests are answered
without limits and a warning is logged (at most once a minute) until Redis is
back, which the clients notice by themselves (see README, "Rate limits"; the event
loop's connection: edge/redis_counters.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
import logging
import threading
import time

from models.calendar import day_of_minute
from models.errors import RateLimited
from models.tokens import Caller

log = logging.getLogger("agenda.usage")
MINUTE_TTL = 120
DAY_TTL = 26 * 3600  # a calendar day is at most 25 hours; keys outlive it a little
# REST requests without a valid token (a failed authentication; GET /terms and
# GET /openapi.json, which need none), per client address and minute, before 429.
UNAUTHENTICATED_PER_MINUTE = 30
# Public pages (pages/, /docs included) per client address and minute: a person reading the
# agenda opens a page every few seconds at most, an office behind one address a few at once;
# a scraper is held below a token's pace.
PAGES_PER_MINUTE = 60


def per_address(name: str, limit: int, address: str, seconds: int = 60) -> tuple[str, int, int]:
    """The window of `seconds` (the clock minute) of `address` under the limit `name`, as
    `Usage.throttle` counts it: every per-address limit counts by `address_key`."""
    return (f"{name}:{address_key(address)}", limit, seconds)


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

    def headers(self, window: str = "minute") -> dict[str, str]:
        """`X-RateLimit-*` for the minute window (the day's when the day refused the
        request: `window="day"`); `RateLimit(-Policy)` (IETF draft) for both."""
        minute_left = max(0, self.reset - self.now)
        day_left = max(0, self.day_reset - self.now)
        remaining_today = max(0, self.per_day - self.used_today)
        limit, remaining, reset = (
            (self.per_day, remaining_today, self.day_reset) if window == "day"
            else (self.per_minute, self.remaining_this_minute, self.reset))
        return {
            "X-RateLimit-Limit": str(limit),
            "X-RateLimit-Remaining": str(remaining),
            "X-RateLimit-Reset": str(reset),
            "RateLimit-Policy": f'"minute";q={self.per_minute};w=60, '
                                f'"day";q={self.per_day};w=86400',
            "RateLimit": f'"minute";r={self.remaining_this_minute};t={minute_left}, '
                         f'"day";r={remaining_today};t={day_left}',
        }


class _Keys:
    """The counters of one token at one moment; `{token}` keeps them in one Redis slot."""

    def __init__(self, token_id: str, moment: float):
        self.minute_number = int(moment // 60)
        self.date, self.midnight = day_of_minute(self.minute_number)
        self.prefix = f"agenda:{{{token_id}}}"
        self.minute = f"{self.prefix}:m:{self.minute_number}"
        self.day = f"{self.prefix}:d:{self.date}"

    def route(self, route: str) -> str:
        return f"{self.prefix}:u:{self.date}:{route}"


def _throttle_windows(windows: list[tuple[str, int, int]], moment: float):
    """(keys, limits, ttls, ends) of `(name, limit, seconds)` windows at `moment`."""
    keys, limits, ttls, ends = [], [], [], []
    for name, limit, seconds in windows:
        number = int(moment // seconds)
        keys.append(f"agenda:{{throttle}}:{name}:{seconds}:{number}")
        limits.append(limit)
        ttls.append(2 * seconds)
        ends.append((number + 1) * seconds)
    return keys, limits, ttls, ends


def _wait(counts: list[int], limits: list[int], ends: list[int], moment: float) -> int | None:
    """The seconds until the first window whose count is over its limit ends, or None."""
    for count, limit, end in zip(counts, limits, ends):
        if count > limit:
            return max(1, end - int(moment))
    return None


def address_key(address: str) -> str:
    """What a client address counts as in a per-address limit: an IPv6 address as its /64
    (a single host or home is given a whole /64), an IPv4 one (also mapped into IPv6) as
    itself."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(getattr(ip, "ipv4_mapped", None) or ip)


def refusal(message: str, window: str, limit: int, reset: int, moment: float,
            headers: dict[str, str] | None = None) -> RateLimited:
    """The 429 of `window` (over `limit`, open again at `reset`): `Retry-After`, and
    `details` naming the window and when it opens again."""
    wait = max(1, reset - int(moment))
    return RateLimited(message, headers={**(headers or {}), "Retry-After": str(wait)},
                       details={"window": window, "limit": limit, "reset": reset,
                                "retry_after": wait})


class StoreUnavailable(Exception):
    """The counter store cannot be reached."""


class MemoryCounters:
    """Counters of one process (the single-worker default, `memory://`)."""

    def __init__(self):
        self._counts: dict[str, int] = {}
        self._expiry: dict[str, float] = {}
        self._lock = threading.Lock()
        self._swept = time.monotonic()

    def count(self, keys: list[str], limits: list[int], ttls: list[int]) -> list[int]:
        """Increment keys in order, stopping after the first one past its limit."""
        with self._lock:
            self._sweep()
            values = []
            for key, limit, ttl in zip(keys, limits, ttls):
                value = self._counts.get(key, 0) + 1
                self._counts[key] = value
                self._expiry.setdefault(key, time.monotonic() + ttl)
                values.append(value)
                if value > limit:
                    break
            return values

    def backoff(self, key: str, moment: int, free: int, longest: int, ttl: int) -> int:
        """Redis's `_BACKOFF` (edge/redis_counters.py) in memory: 0 when an attempt is
        admitted (and counted), otherwise the seconds until the next one is."""
        failures, until = f"{key}:f", f"{key}:u"
        with self._lock:
            self._sweep()
            if moment < self._counts.get(until, 0):
                return self._counts[until] - moment
            count = self._counts.get(failures, 0) + 1
            self._counts[failures] = count
            self._counts[until] = moment + _delay(count, free, longest)
            for name in (failures, until):
                self._expiry[name] = time.monotonic() + ttl
            return 0

    def clear(self, key: str) -> None:
        """Forget a backoff (`backoff`)."""
        with self._lock:
            for name in (f"{key}:f", f"{key}:u"):
                self._counts.pop(name, None)
                self._expiry.pop(name, None)

    def add(self, key: str, amount: int) -> None:
        """Add `amount` (may be negative) to an existing counter."""
        with self._lock:
            if key in self._counts:
                self._counts[key] = max(0, self._counts[key] + amount)

    def get(self, keys: list[str]) -> list[int]:
        """Current values (0 for absent counters)."""
        with self._lock:
            return [self._counts.get(key, 0) for key in keys]

    def _sweep(self) -> None:
        now = time.monotonic()
        if now - self._swept < 60:
            return
        self._swept = now
        for key in [k for k, expires in self._expiry.items() if expires <= now]:
            self._counts.pop(key, None)
            self._expiry.pop(key, None)


def _delay(failures: int, free: int, longest: int) -> int:
    """The wait after the `failures`-th admitted attempt: none for the first `free`, then
    1, 2, 4, ... seconds, at most `longest` (as Redis's `_BACKOFF`)."""
    return 0 if failures <= free else min(longest, 2 ** min(failures - free - 1, 30))


class OncePerMinute:
    """A warning logged at most once a minute: an outage would otherwise log every request."""

    def __init__(self, logger: logging.Logger, message: str):
        self.logger, self.message = logger, message
        self._warned_at: float | None = None

    def __call__(self, error: Exception) -> None:
        now = time.monotonic()
        if self._warned_at is None or now - self._warned_at >= 60:
            self._warned_at = now
            self.logger.warning(self.message, error)


def counters_for(url: str):
    """The counter store an `AGENDA_RATELIMIT_STORAGE` URL names."""
    if url.startswith("memory://"):
        return MemoryCounters()
    if url.startswith(("redis://", "rediss://", "unix://")):
        # Imported only when named: redis-py (with the cryptography it loads) is ~3.3 MB
        # of every worker that counts in memory.
        from edge.redis_counters import RedisCounters

        return RedisCounters(url)
    raise ValueError(f"unsupported rate-limit storage {url!r} (memory:// or redis://)")


class Usage:
    """Counts requests per token and refuses those over a limit."""

    def __init__(self, storage_url: str, *, per_minute: int, per_day: int, clock=time.time):
        self.store = counters_for(storage_url)
        self.per_minute = per_minute
        self.per_day = per_day
        self.clock = clock
        self._warn = OncePerMinute(
            log, "rate-limit store unreachable, answering without limits: %s")

    @property
    def in_process(self) -> bool:
        """Whether requests are counted in this process (no round trip to count one)."""
        return isinstance(self.store, MemoryCounters)

    @property
    def counts_on_loop(self) -> bool:
        """Whether `hit_async` counts without a thread: in memory, or in Redis once the
        server opened its client for the event loop (`open`)."""
        return self.in_process or self.store.client_async is not None

    async def open(self) -> None:
        """Connect what counting on the event loop needs (the server's lifespan)."""
        if not self.in_process:
            await self.store.open()

    async def close(self) -> None:
        if not self.in_process:
            await self.store.close()

    def hit(self, caller: Caller, route: str) -> Figures:
        """Count one request of `caller` on `route`; `RateLimited` when over a limit."""
        moment, keys, counted = self._counting(caller, route)
        try:
            values = self.store.count(*counted)
        except StoreUnavailable as error:
            self._warn(error)
            return self._unknown(caller, moment)
        return self._counted(caller, moment, keys, values)

    async def hit_async(self, caller: Caller, route: str) -> Figures:
        """`hit` on the event loop, no thread (`counts_on_loop`): in memory, or with one
        round trip to Redis."""
        if self.in_process:
            return self.hit(caller, route)
        moment, keys, counted = self._counting(caller, route)
        try:
            values = await self.store.count_async(*counted)
        except StoreUnavailable as error:
            self._warn(error)
            return self._unknown(caller, moment)
        if values[0] > self.per_minute:
            # Refused: its figures read the day's count, a round trip of its own (a thread).
            return await asyncio.to_thread(self._counted, caller, moment, keys, values)
        return self._counted(caller, moment, keys, values)

    def _counting(self, caller: Caller, route: str) -> tuple[float, _Keys, tuple]:
        """(moment, keys, the arguments of `store.count`) for one request."""
        moment = self.clock()
        keys = _Keys(caller.token_id, moment)
        # The route's counter never limits; it only feeds GET /me's usage_today.
        return moment, keys, ([keys.minute, keys.day, keys.route(route)],
                              [self.per_minute, caller.per_day or self.per_day, 2**62],
                              [MINUTE_TTL, DAY_TTL, DAY_TTL])

    def _counted(self, caller: Caller, moment: float, keys: _Keys, values: list[int]) -> Figures:
        """The figures of a counted request; `RateLimited` when it went over a limit."""
        per_day = caller.per_day or self.per_day
        in_minute = values[0]
        if in_minute > self.per_minute:
            used = self._safe_get(keys.day)
            figures = self._figures(caller, keys, moment, in_minute, used)
            raise refusal(f"Over {self.per_minute} requests per minute.", "minute",
                          self.per_minute, figures.reset, moment, figures.headers())
        if values[1] > per_day:
            figures = self._figures(caller, keys, moment, in_minute, per_day)
            raise refusal(f"Over the daily quota of {per_day} requests.", "day", per_day,
                          keys.midnight, moment, figures.headers("day"))
        return self._figures(caller, keys, moment, in_minute, values[1])

    def refund_day(self, caller: Caller) -> None:
        """Take one request off today's quota (a 304 is free of it; it still counted a minute)."""
        try:
            self.store.add(_Keys(caller.token_id, self.clock()).day, -1)
        except StoreUnavailable as error:
            self._warn(error)

    async def refund_day_async(self, caller: Caller) -> None:
        """`refund_day` on the event loop (`counts_on_loop`): in memory, or one round trip
        to Redis; otherwise on a thread."""
        if self.in_process:
            self.refund_day(caller)
        elif not self.counts_on_loop:
            await asyncio.to_thread(self.refund_day, caller)
        else:
            try:
                await self.store.add_async(_Keys(caller.token_id, self.clock()).day, -1)
            except StoreUnavailable as error:
                self._warn(error)

    def refuse_unauthenticated(self, address: str) -> None:
        """Count a REST request without a valid token from `address`; `RateLimited` past
        the limit."""
        self._refuse_unauthenticated(self.throttle(self._unauthenticated(address)))

    async def refuse_unauthenticated_async(self, address: str) -> None:
        """`refuse_unauthenticated` from the event loop (`throttle_async`)."""
        self._refuse_unauthenticated(await self.throttle_async(self._unauthenticated(address)))

    @staticmethod
    def _unauthenticated(address: str) -> list[tuple[str, int, int]]:
        # Read at each request: the contract tests lift it.
        return [per_address("unauthenticated", UNAUTHENTICATED_PER_MINUTE, address)]

    def _refuse_unauthenticated(self, wait: int | None) -> None:
        if wait is not None:
            now = int(self.clock())
            raise refusal("Too many requests without a valid token from this address.",
                          "address", UNAUTHENTICATED_PER_MINUTE, now + wait, now)

    async def throttle_async(self, windows: list[tuple[str, int, int]]) -> int | None:
        """`throttle` from the event loop: in memory at once, in Redis with one round trip
        (`counts_on_loop`), otherwise on a thread."""
        if self.in_process:
            return self.throttle(windows)
        if not self.counts_on_loop:
            return await asyncio.to_thread(self.throttle, windows)
        moment = self.clock()
        keys, limits, ttls, ends = _throttle_windows(windows, moment)
        try:
            counts = await self.store.count_async(keys, limits, ttls)
        except StoreUnavailable as error:
            self._warn(error)
            return None
        return _wait(counts, limits, ends, moment)

    def throttle(self, windows: list[tuple[str, int, int]]) -> int | None:
        """Count one request in each `(name, limit, seconds)` window (aligned to the clock);
        the seconds until a window that is over its limit ends, or None when all admit.

        For limits that are not per token, such as registrations per address; the keys
        share one hash tag, so a Redis cluster keeps them in one slot for the script.
        """
        moment = self.clock()
        keys, limits, ttls, ends = _throttle_windows(windows, moment)
        try:
            counts = self.store.count(keys, limits, ttls)
        except StoreUnavailable as error:
            self._warn(error)
            return None
        return _wait(counts, limits, ends, moment)

    def over(self, windows: list[tuple[str, int, int]]) -> int | None:
        """As `throttle`, without counting: the seconds until a window already over its
        limit ends, or None (for work worth skipping when the request will be refused)."""
        moment = self.clock()
        keys, limits, _ttls, ends = _throttle_windows(windows, moment)
        try:
            counts = self.store.get(keys)
        except StoreUnavailable as error:
            self._warn(error)
            return None
        return _wait(counts, limits, ends, moment)

    def backoff(self, name: str, *, free: int, longest: int, forget_after: int) -> int | None:
        """Admit one attempt of the series `name` (a sign-in to one account) unless it must
        wait: the first `free` at once, then each after a delay that doubles from one second
        up to `longest`; None when admitted, else the seconds to wait. An admitted attempt
        counts until `forgive` (on success) or `forget_after` seconds after the last one."""
        try:
            wait = self.store.backoff(f"agenda:{{throttle}}:backoff:{name}", int(self.clock()),
                                      free, longest, forget_after)
        except StoreUnavailable as error:
            self._warn(error)
            return None
        return wait or None

    def forgive(self, name: str) -> None:
        """Start the series `name` afresh (`backoff`)."""
        try:
            self.store.clear(f"agenda:{{throttle}}:backoff:{name}")
        except StoreUnavailable as error:
            self._warn(error)

    def figures(self, caller: Caller) -> Figures:
        """The token's standing now, without counting a request."""
        moment = self.clock()
        keys = _Keys(caller.token_id, moment)
        try:
            in_minute, used = self.store.get([keys.minute, keys.day])
        except StoreUnavailable as error:
            self._warn(error)
            return self._unknown(caller, moment)
        return self._figures(caller, keys, moment, in_minute, used)

    def used_today(self, callers: list[Caller]) -> list[int]:
        """Each caller's requests counted today (as `figures(...).used_today`), in one read."""
        moment = self.clock()
        try:
            used = self.store.get([_Keys(caller.token_id, moment).day for caller in callers])
        except StoreUnavailable as error:
            self._warn(error)
            used = [0] * len(callers)
        return [min(max(count, 0), caller.per_day or self.per_day)
                for caller, count in zip(callers, used)]

    def usage_today(self, caller: Caller, routes: list[str]) -> list[dict]:
        """Today's count per route template, for the routes used at least once."""
        keys = _Keys(caller.token_id, self.clock())
        try:
            counts = self.store.get([keys.route(route) for route in routes])
        except StoreUnavailable as error:
            self._warn(error)
            return []
        return [{"path": route, "count": count} for route, count in zip(routes, counts) if count]

    def _safe_get(self, key: str) -> int:
        try:
            return self.store.get([key])[0]
        except StoreUnavailable:
            return 0

    def _figures(self, caller: Caller, keys: _Keys, moment: float, in_minute: int,
                 used: int) -> Figures:
        per_day = caller.per_day or self.per_day
        return Figures(self.per_minute, max(0, self.per_minute - in_minute),
                       (keys.minute_number + 1) * 60, per_day, min(max(used, 0), per_day),
                       keys.midnight, int(moment))

    def _unknown(self, caller: Caller, moment: float) -> Figures:
        """Figures while the store is unreachable: the limits, nothing counted."""
        keys = _Keys(caller.token_id, moment)
        return self._figures(caller, keys, moment, 0, 0)

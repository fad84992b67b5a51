"""Counters in Redis, shared by every worker and host (`AGENDA_RATELIMIT_STORAGE=redis://...`):
each request one Lua script, one round trip, atomic on the server (edge/limits.py says what
is counted). Imported only when the storage names Redis (`limits.counters_for`).
"""

from __future__ import annotations

import asyncio

import redis
import redis.asyncio

from edge.limits import StoreUnavailable

# Increment KEYS in order (each with its TTL on creation), stop after the first one over
# its limit; returns the values counted. One round trip, atomic on the Redis server.
_COUNT = """
local values = {}
for i, key in ipairs(KEYS) do
  local value = redis.call('INCR', key)
  if value == 1 then redis.call('EXPIRE', key, ARGV[2 * i]) end
  values[i] = value
  if value > tonumber(ARGV[2 * i - 1]) then break end
end
return values
"""


# Add ARGV[1] to KEYS[1] if it exists (a refund never creates a counter). One round trip.
_ADD = """
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('INCRBY', KEYS[1], ARGV[1]) end
return 0
"""

# An attempt at KEYS[1] at moment ARGV[1]: refused with the seconds to wait while the last
# admitted one's delay runs, else admitted and counted (0): the first ARGV[2] without delay,
# then 1, 2, 4, ... seconds, at most ARGV[3]; forgotten ARGV[4] seconds after the last. One
# round trip, atomic: attempts made at once cannot all slip through.
_BACKOFF = """
local moment = tonumber(ARGV[1])
local wait = tonumber(redis.call('HGET', KEYS[1], 'u') or '0') - moment
if wait > 0 then return wait end
local failures = redis.call('HINCRBY', KEYS[1], 'f', 1)
local delay = 0
if failures > tonumber(ARGV[2]) then
  delay = math.min(tonumber(ARGV[3]), 2 ^ math.min(failures - tonumber(ARGV[2]) - 1, 30))
end
redis.call('HSET', KEYS[1], 'u', moment + delay)
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 0
"""


_TIMEOUTS = {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}


def _arguments(limits: list[int], ttls: list[int]) -> list[int]:
    """ARGV of `_COUNT`: each key's limit and TTL."""
    return [value for pair in zip(limits, ttls) for value in pair]


class _Batched:
    """A script run from the event loop in batches: the runs asked while a round trip is on
    its way go together in the next one, one pipeline (each run still its own script,
    atomic on the server). Under load a worker then makes one round trip for many requests
    rather than one each (a served-again answer at 32 connections: 179 instead of 210 µs
    of a worker's CPU, bench/RESULTS.md)."""

    def __init__(self, client: redis.asyncio.Redis, script):
        self.client, self.script = client, script
        self._waiting: list[tuple[list, list, asyncio.Future]] = []
        self._sending: asyncio.Task | None = None

    async def __call__(self, keys: list, args: list):
        """The script's answer for `keys` and `args`. Raises redis.RedisError."""
        loop = asyncio.get_running_loop()
        answer = loop.create_future()
        self._waiting.append((keys, args, answer))
        if self._sending is None:
            self._sending = loop.create_task(self._send())
        return await answer

    async def _send(self) -> None:
        batch: list = []
        try:
            while self._waiting:
                batch, self._waiting = self._waiting, []
                try:
                    answers = await self._round_trip(batch)
                except Exception as error:  # noqa: BLE001 - every run of the batch failed
                    answers = [error] * len(batch)
                for (_, _, answer), value in zip(batch, answers, strict=True):
                    if answer.done():  # its request was cancelled meanwhile
                        continue
                    if isinstance(value, Exception):
                        answer.set_exception(value)
                    else:
                        answer.set_result(value)
        finally:
            self._sending = None
            # Cancelled (the server stopping): no request waits for an answer never coming.
            for _, _, answer in [*batch, *self._waiting]:
                answer.cancel()
            self._waiting = []

    async def _round_trip(self, batch: list) -> list:
        """The answers of one pipeline of `batch`'s runs (an error where one failed); a
        script Redis no longer knows (restarted, flushed) is loaded and those runs sent
        again."""
        answers = await self._pipelined(batch)
        unknown = [i for i, value in enumerate(answers)
                   if isinstance(value, redis.exceptions.NoScriptError)]
        if unknown:
            await self.client.script_load(self.script.script)
            again = await self._pipelined([batch[i] for i in unknown])
            for i, value in zip(unknown, again, strict=True):
                answers[i] = value
        return answers

    async def _pipelined(self, batch: list) -> list:
        pipeline = self.client.pipeline(transaction=False)
        for keys, args, _ in batch:
            pipeline.evalsha(self.script.sha, len(keys), *keys, *args)
        return await pipeline.execute(raise_on_error=False)


class RedisCounters:
    """Counters shared by every worker and host through Redis."""

    def __init__(self, url: str):
        self.url = url
        self.client = redis.Redis.from_url(url, **_TIMEOUTS)
        self._count = self.client.register_script(_COUNT)
        self._add = self.client.register_script(_ADD)
        self._backoff = self.client.register_script(_BACKOFF)
        # The event loop's own client (`open`), for `count_async` and `add_async`.
        self.client_async: redis.asyncio.Redis | None = None

    def count(self, keys: list[str], limits: list[int], ttls: list[int]) -> list[int]:
        try:
            return [int(v) for v in self._count(keys=keys, args=_arguments(limits, ttls))]
        except redis.RedisError as error:
            raise StoreUnavailable(str(error)) from error

    async def open(self) -> None:
        """Connect a client for the running event loop (the server's lifespan)."""
        self.client_async = redis.asyncio.Redis.from_url(self.url, **_TIMEOUTS)
        self._count_async = _Batched(self.client_async,
                                     self.client_async.register_script(_COUNT))
        self._add_async = self.client_async.register_script(_ADD)

    async def close(self) -> None:
        client, self.client_async = self.client_async, None
        if client is not None:
            await client.aclose()

    async def command(self, name: str, *args, **options):
        """A Redis command from the event loop: on its own client once `open`, else on a
        thread with the blocking one. Raises StoreUnavailable."""
        try:
            if self.client_async is None:
                return await asyncio.to_thread(getattr(self.client, name), *args, **options)
            return await getattr(self.client_async, name)(*args, **options)
        except redis.RedisError as error:
            raise StoreUnavailable(str(error)) from error

    async def count_async(self, keys: list[str], limits: list[int],
                          ttls: list[int]) -> list[int]:
        """`count` on the event loop, without a thread (after `open`)."""
        try:
            return [int(v) for v in await self._count_async(keys, _arguments(limits, ttls))]
        except redis.RedisError as error:
            raise StoreUnavailable(str(error)) from error

    def add(self, key: str, amount: int) -> None:
        try:
            self._add(keys=[key], args=[amount])
        except redis.RedisError as error:
            raise StoreUnavailable(str(error)) from error

    async def add_async(self, key: str, amount: int) -> None:
        """`add` on the event loop, without a thread (after `open`)."""
        try:
            await self._add_async(keys=[key], args=[amount])
        except redis.RedisError as error:
            raise StoreUnavailable(str(error)) from error

    def backoff(self, key: str, moment: int, free: int, longest: int, ttl: int) -> int:
        try:
            return int(self._backoff(keys=[key], args=[moment, free, longest, ttl]))
        except redis.RedisError as error:
            raise StoreUnavailable(str(error)) from error

    def clear(self, key: str) -> None:
        try:
            self.client.delete(key)
        except redis.RedisError as error:
            raise StoreUnavailable(str(error)) from error

    def get(self, keys: list[str]) -> list[int]:
        try:
            return [int(v or 0) for v in self.client.mget(keys)]
        except redis.RedisError as error:
            raise StoreUnavailable(str(error)) from error

"""Counters in Redis, shared by every worker and host (`AGENDA_RATELIMIT_STORAGE=redis://...`):
each request one Lua script, atomic on the server (edge/limits.py says what is counted). On
the event loop, the counts and the response cache's shared answers go in batches, one
round trip for the commands asked while the last was on its way (`_Batched`). Imported
only when the storage names Redis (`limits.counters_for`).
"""

from __future__ import annotations

import asyncio
import hashlib

import hiredis
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


# How long a round trip of the event loop's commands may take before its connection is given
# up (as the clients' socket timeout).
ROUND_TRIP_SECONDS = _TIMEOUTS["socket_timeout"]


class _Batched:
    """The event loop's commands to Redis (counts, refunds, shared answers) in batches: the
    commands asked while a round trip is on its way go together in the next one, one
    pipeline on one connection (each script run still atomic on the server). Under load a
    worker then makes one round trip for many requests rather than one each.

    The connection is opened by redis-py (its URL's address, TLS, password and database);
    the commands are written by hiredis (`pack_command`) onto its stream and the replies
    read by hiredis's parser, not by redis-py's pipeline, which cost a worker 185 µs of CPU
    for a round trip of one count and 41 µs a count in rounds of 32 (54 and 8.5 so:
    bench/RESULTS.md, "Counts and shared answers in Redis written and read by hiredis").
    A failed or late round trip closes the connection (its replies are no longer known to
    be in order): the next one opens another."""

    def __init__(self, client: redis.asyncio.Redis):
        self.client = client
        self._waiting: list[tuple[tuple, asyncio.Future]] = []
        self._sending: asyncio.Task | None = None
        # The connection and the parser of its replies, made together (`_pipelined`).
        self._connection = None
        self._replies: hiredis.Reader | None = None
        # Each script run through it by its digest (`script`): its source, by digest.
        self._scripts: dict[str, str] = {}

    def script(self, source: str) -> str:
        """The digest to run the Lua script `source` by (EVALSHA), known from now on: where
        Redis no longer knows it (restarted, flushed), it is loaded again and the runs that
        failed sent again, in one more round trip."""
        sha = hashlib.sha1(source.encode()).hexdigest()
        self._scripts[sha] = source
        return sha

    async def __call__(self, command: tuple):
        """The reply to `command` (names and arguments). Raises redis.RedisError (an error
        reply as redis.ResponseError)."""
        loop = asyncio.get_running_loop()
        answer = loop.create_future()
        self._waiting.append((command, answer))
        if self._sending is None:
            self._sending = loop.create_task(self._send())
        return await answer

    async def _send(self) -> None:
        batch: list = []
        try:
            while self._waiting:
                batch, self._waiting = self._waiting, []
                try:
                    answers = await self._round_trip([command for command, _ in batch])
                except Exception as error:  # noqa: BLE001 - every command of the batch failed
                    answers = [error] * len(batch)
                for (_, answer), value in zip(batch, answers, strict=True):
                    if answer.done():  # its request was cancelled meanwhile
                        continue
                    if isinstance(value, Exception):
                        answer.set_exception(value)
                    else:
                        answer.set_result(value)
        finally:
            self._sending = None
            # Cancelled (the server stopping): no request waits for an answer never coming.
            for _, answer in [*batch, *self._waiting]:
                answer.cancel()
            self._waiting = []

    async def _round_trip(self, commands: list[tuple]) -> list:
        """The replies of `commands`; the scripts Redis no longer knows loaded and their
        runs sent again."""
        replies = await self._pipelined(commands)
        unknown = [i for i, reply in enumerate(replies)
                   if isinstance(reply, redis.exceptions.NoScriptError)]
        if unknown:
            scripts = dict.fromkeys(commands[i][1] for i in unknown)
            again = await self._pipelined([("SCRIPT", "LOAD", self._scripts[sha])
                                           for sha in scripts] + [commands[i] for i in unknown])
            for i, reply in zip(unknown, again[len(scripts):], strict=True):
                replies[i] = reply
        return replies

    async def _pipelined(self, commands: list[tuple]) -> list:
        """The replies of one round trip of `commands`, in order (an error reply as a
        redis.ResponseError)."""
        try:
            async with asyncio.timeout(ROUND_TRIP_SECONDS):
                if self._connection is None:
                    connection = self.client.connection_pool.make_connection()
                    await connection.connect()
                    self._connection = connection
                    self._replies = hiredis.Reader(replyError=_error)
                writer, reader = self._connection._writer, self._connection._reader
                writer.write(b"".join([hiredis.pack_command(command) for command in commands]))
                await writer.drain()
                replies = []
                while len(replies) < len(commands):
                    reply = self._replies.gets()
                    if reply is False:
                        data = await reader.read(65536)
                        if not data:
                            raise redis.ConnectionError("Redis closed the connection")
                        self._replies.feed(data)
                    else:
                        replies.append(reply)
                return replies
        except BaseException as error:
            self._disconnect()
            if isinstance(error, (OSError, TimeoutError, hiredis.ProtocolError)):
                raise redis.ConnectionError(f"Redis round trip failed: {error!r}") from error
            raise

    def _disconnect(self) -> None:
        """Close the connection now, without waiting (a failed round trip)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            connection._close()

    async def close(self) -> None:
        """Close its connection (the server stopping)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.disconnect()


def _error(message: str) -> redis.ResponseError:
    """An error reply as redis-py raises it (made by the replies' parser, returned in its
    place)."""
    if message.startswith("NOSCRIPT"):
        return redis.exceptions.NoScriptError(message)
    return redis.ResponseError(message)


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
        self._batched = _Batched(self.client_async)
        self._count_sha = self._batched.script(_COUNT)
        self._add_sha = self._batched.script(_ADD)

    async def close(self) -> None:
        client, self.client_async = self.client_async, None
        if client is not None:
            await self._batched.close()
            await client.aclose()

    async def command(self, *command):
        """A Redis command (its name and arguments, as Redis spells them) from the event
        loop: batched with the others once `open`, else on a thread with the blocking
        client. Raises StoreUnavailable."""
        try:
            if self.client_async is None:
                return await asyncio.to_thread(self.client.execute_command, *command)
            return await self._batched(command)
        except redis.RedisError as error:
            raise StoreUnavailable(str(error)) from error

    async def count_async(self, keys: list[str], limits: list[int],
                          ttls: list[int]) -> list[int]:
        """`count` on the event loop, without a thread (after `open`)."""
        try:
            return [int(v) for v in await self._batched(
                ("EVALSHA", self._count_sha, len(keys), *keys, *_arguments(limits, ttls)))]
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
            await self._batched(("EVALSHA", self._add_sha, 1, key, amount))
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

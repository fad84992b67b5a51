"""The response cache: public catalogue answers served again before the framework runs.

A public answer (a GET operation whose document declares a 304) is the same for
every token, so once Connexion and a handler have built one, this layer keeps
its parts and answers the same URL again without routing, validation, a handler
or a catalogue query. What every request still gets, exactly as on the full path:
its admission (`admission.admit`, the same function: token authenticated, the
operation's scope checked, the request counted against the token's limits and for
GET /me's usage), its own request id (in `meta.request_id` and X-Request-Id), its
limit headers, and a 304 for a matching If-None-Match (edge/conditional.py), which
costs no daily quota.

An entry is served only while it is fresh: the catalogue stamp (models/stamp.py,
renewed by database triggers on every change to public data) read with the token
in one statement, and the clock hour (the Amsterdam date, which decides where
lists start, and the hour in which cursors are issued) must both be those it was
built under. Anything else goes the full way, its admission kept on the request's
state so that nothing is counted twice, and its answer is kept again. Only answers
the handler marked public (`envelope.public`, which hands its parts over on the
request's state) are kept; private ones never are. While one request builds an
answer the full way, the process's other requests for the same URL wait for it (up
to `FOLLOW_SECONDS`) and are served what it kept: a change to the catalogue or the
turn of the hour costs each popular URL one full path per process, not one per
request arriving meanwhile.

Entries live in each process (an LRU bounded in bytes) and, when the service
counts requests in Redis (`AGENDA_RATELIMIT_STORAGE=redis://...`), in Redis too,
so that one worker's answer serves the others and other hosts. Freshness is
decided by the stamp in the database, so a shared entry is never staler than a
local one. Redis unreachable: entries are simply not shared.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import hashlib
import logging
import struct

import orjson
import redis

from edge import answers
from edge.admission import Admission, admit, authorization, client_address
from edge.conditional import matches
from edge.limits import OncePerMinute, RedisCounters
from edge.state import PublicAnswer, RequestState

log = logging.getLogger("agenda.cache")
# A kept answer's headers: those of the full path's 200 that are the answer's, not the
# request's. A 304 repeats them too (RFC 9110 15.4.5), as the full path's does.
KEPT = (b"etag", b"cache-control", b"vary")
SHARED_TTL = 3600
# The layout of a packed entry (`Entry.pack`), named in its Redis key.
LAYOUT = 3
# How long a request waits for another one building the same answer before it builds its own.
FOLLOW_SECONDS = 2.0


@dataclasses.dataclass(frozen=True)
class Entry:
    """One kept answer, in parts (`data` as serialized, `meta` but the request id), and
    what made it."""

    stamp: str
    hour: int
    headers: tuple[tuple[bytes, bytes], ...]
    answer: PublicAnswer

    def fresh(self, admission: Admission) -> bool:
        """Whether it is still the answer for a request admitted now."""
        return self.stamp == admission.stamp and self.hour == admission.hour

    def size(self) -> int:
        return len(self.answer.data)

    def pack(self) -> bytes:
        """Bytes for Redis: the lengths of the head and of `meta`, the head, `meta`, `data`."""
        head = orjson.dumps([self.stamp, self.hour, self.answer.etag,
                             [[k.decode("latin-1"), v.decode("latin-1")] for k, v in self.headers]])
        return b"".join((struct.pack(">II", len(head), len(self.answer.meta)), head,
                         self.answer.meta, self.answer.data))

    @classmethod
    def unpack(cls, packed: bytes) -> Entry:
        head_length, meta_length = struct.unpack(">II", packed[:8])
        stamp, hour, etag, headers = orjson.loads(packed[8:8 + head_length])
        meta_end = 8 + head_length + meta_length
        return cls(stamp, hour,
                   tuple((k.encode("latin-1"), v.encode("latin-1")) for k, v in headers),
                   PublicAnswer(packed[meta_end:], packed[8 + head_length:meta_end], etag))


class LocalEntries:
    """The entries of one process, least recently used first out, bounded in bytes."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.size = 0
        # Read and written on the event loop only.
        self._entries: collections.OrderedDict[str, Entry] = collections.OrderedDict()

    def get(self, url: str) -> Entry | None:
        entry = self._entries.get(url)
        if entry is not None:
            self._entries.move_to_end(url)
        return entry

    def put(self, url: str, entry: Entry) -> None:
        cost = entry.size() + len(url)
        if cost > self.max_bytes:
            return
        old = self._entries.pop(url, None)
        if old is not None:
            self.size -= old.size() + len(url)
        self._entries[url] = entry
        self.size += cost
        while self.size > self.max_bytes:
            gone_url, gone = self._entries.popitem(last=False)
            self.size -= gone.size() + len(gone_url)


class SharedEntries:
    """Entries in Redis (the rate limits' clients, `RedisCounters.command`), for every
    worker and host; failures only cost sharing."""

    def __init__(self, counters: RedisCounters):
        self.counters = counters
        self._warn = OncePerMinute(log, "Redis unreachable, cached answers are not shared: %s")

    @staticmethod
    def key(url: str) -> str:
        # The entry's layout is in the key: workers of an older release, sharing the Redis
        # during a deploy, keep their own entries apart.
        return f"agenda:cache:{LAYOUT}:" + hashlib.blake2b(url.encode(),
                                                          digest_size=20).hexdigest()

    async def get(self, url: str) -> Entry | None:
        try:
            packed = await self.counters.command("get", self.key(url))
        except redis.RedisError as error:
            self._warn(error)
            return None
        return Entry.unpack(packed) if packed else None

    async def put(self, url: str, entry: Entry) -> None:
        try:
            await self.counters.command("set", self.key(url), entry.pack(), ex=SHARED_TTL)
        except redis.RedisError as error:
            self._warn(error)


class ResponseCache:
    """ASGI layer between the request middleware and Connexion (see the module's text)."""

    def __init__(self, app, service):
        self.app = app
        self.service = service
        self.local = LocalEntries(service.settings.response_cache_bytes)
        # The Redis of the rate limits (its connections too), when limits are kept there.
        counters = service.usage.store
        self.shared = SharedEntries(counters) if isinstance(counters, RedisCounters) else None
        # URL -> done when the full path's request for it, in this process, has answered.
        self._building: dict[str, asyncio.Future] = {}

    async def __call__(self, scope, receive, send):
        operation = (self.service.routes.find("GET", scope["path"])
                     if scope["type"] == "http" and scope["method"] == "GET" else None)
        if operation is None or not operation.public or operation.needed is None:
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        header = authorization(scope)  # the first, as every layer reads it
        if header is None or not self._headers_valid(headers, operation):
            await self.app(scope, receive, send)
            return
        url = f"{scope['path']}?{scope['query_string'].decode('latin-1')}"
        state = RequestState.of(scope)
        try:
            admission = await admit(self.service, state, operation.gate, header,
                                    client_address(scope))
        except Exception:  # noqa: BLE001 - kept on the state; the full way answers it
            await self.app(scope, receive, send)
            return
        entry = await self._fresh(url, admission)
        if entry is None and url in self._building:
            entry = await self._follow(url, admission)
        if entry is None:
            await self._full_path(scope, receive, send, url, state,
                                  lead=url not in self._building)
            return
        await self._answer(send, entry, headers, state.request_id)

    @staticmethod
    def _headers_valid(headers: dict, operation) -> bool:
        """Whether every header the document bounds is within bounds (else Connexion
        refuses it, the full way)."""
        for name, validator in operation.headers:
            value = headers.get(name)
            if value is not None and not validator.is_valid(value.decode("latin-1")):
                return False
        return True

    async def _fresh(self, url: str, admission: Admission) -> Entry | None:
        """A fresh entry for `url`, here or shared (then kept here too)."""
        entry = self.local.get(url)
        if entry is not None and entry.fresh(admission):
            return entry
        if self.shared is None:
            return None
        entry = await self.shared.get(url)
        if entry is None or not entry.fresh(admission):
            return None
        self.local.put(url, entry)
        return entry

    async def _follow(self, url: str, admission: Admission) -> Entry | None:
        """Another request of this process is building this very answer (the stamp or the
        hour just turned): wait for it rather than build it again, and serve what it kept."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._building[url]), FOLLOW_SECONDS)
        entry = self.local.get(url)
        return entry if entry is not None and entry.fresh(admission) else None

    @staticmethod
    async def _answer(send, entry: Entry, headers: dict, request_id: str) -> None:
        if matches(headers.get(b"if-none-match", b"").decode("latin-1"), entry.answer.etag):
            await answers.answer(send, 304, headers=list(entry.headers), content_type=None)
            return
        body = answers.envelope(entry.answer.data, request_id, entry.answer.meta)
        await answers.answer(send, 200, body, list(entry.headers))

    async def _full_path(self, scope, receive, send, url: str, state: RequestState, *,
                         lead: bool) -> None:
        """Let Connexion answer, and keep the answer when it is public. The `lead` request
        of a URL is the one others arriving meanwhile wait for (`_follow`)."""
        if not lead:
            await self._build(scope, receive, send, url, state)
            return
        self._building[url] = asyncio.get_running_loop().create_future()
        try:
            await self._build(scope, receive, send, url, state)
        finally:
            self._building.pop(url).set_result(None)

    async def _build(self, scope, receive, send, url: str, state: RequestState) -> None:
        """Connexion's answer, passed on and kept (here and shared) when it is public."""
        start = {}

        async def keeping(message):
            if message["type"] == "http.response.start":
                start.update(message)
            await send(message)

        await self.app(scope, receive, keeping)
        admission = state.admitted()
        if start.get("status") != 200 or state.answer is None or admission is None:
            return
        kept = tuple((k.lower(), v) for k, v in start.get("headers", []) if k.lower() in KEPT)
        entry = Entry(admission.stamp, admission.hour, kept, state.answer)
        self.local.put(url, entry)
        if self.shared is not None:
            await self.shared.put(url, entry)

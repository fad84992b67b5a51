"""The response cache: public catalogue answers served again before the framework runs.

A public answer (a GET operation whose document declares a 304) is the same for
every token, so once Connexion and a handler have built one, this layer keeps
its bytes and answers the same URL again without routing, validation, a handler
or a catalogue query. What every request still gets, exactly as on the full path
(`security.admit`, the same function): its token authenticated, the operation's
scope checked, the request counted against the token's limits and for GET /me's
usage, its own request id (in `meta.request_id` and X-Request-Id), its limit
headers, and a 304 for a matching If-None-Match, which costs no daily quota.

An entry is served only while it is fresh: the catalogue stamp (models/stamp.py,
renewed by database triggers on every change to public data) read with the token
in one statement, and the clock hour (the Amsterdam date, which decides where
lists start, and the hour in which cursors are issued) must both be those it was
built under. Anything else goes the full way, carrying the admission along so
that nothing is counted twice, and its answer is kept again. Only 200 answers
marked `Cache-Control: public` are kept; private ones never are. While one request
builds an answer the full way, the process's other requests for the same URL wait
for it (up to `FOLLOW_SECONDS`) and are served what it kept: a change to the
catalogue or the turn of the hour costs each popular URL one full path per
process, not one per request arriving meanwhile.

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
import re
import struct

import orjson
import redis
from jsonschema import Draft202012Validator

from edge.admission import Admission, Admitted, admitted, client_address
from edge.limits import OncePerMinute, RedisCounters
from edge.openapi import path_pattern, resolve, scopes_needed

log = logging.getLogger("agenda.cache")
# Response headers that belong to one request, not to the answer.
PER_REQUEST = {b"x-request-id", b"x-ratelimit-limit", b"x-ratelimit-remaining",
               b"x-ratelimit-reset", b"ratelimit", b"ratelimit-policy", b"content-length"}
# A 304 repeats these of the 200 (RFC 9110 15.4.5), as the full path's does.
REVALIDATION = {b"etag", b"cache-control", b"vary"}
SHARED_TTL = 3600
# How long a request waits for another one building the same answer before it builds its own.
FOLLOW_SECONDS = 2.0
REQUEST_ID_LENGTH = 36


@dataclasses.dataclass(frozen=True)
class Entry:
    """One kept answer: its body with the request id's place marked, and what made it."""

    stamp: str
    hour: int
    etag: str
    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes
    request_id_at: int

    def fresh(self, admission: Admission) -> bool:
        """Whether it is still the answer for a request admitted now."""
        return self.stamp == admission.stamp and self.hour == admission.hour

    def body_for(self, request_id: str) -> bytes:
        """The body with this request's id in `meta.request_id`."""
        at = self.request_id_at
        return b"".join((self.body[:at], request_id.encode(),
                         self.body[at + REQUEST_ID_LENGTH:]))

    def pack(self) -> bytes:
        """Bytes for Redis."""
        head = orjson.dumps([self.stamp, self.hour, self.etag,
                             [[k.decode("latin-1"), v.decode("latin-1")] for k, v in self.headers],
                             self.request_id_at])
        return struct.pack(">I", len(head)) + head + self.body

    @classmethod
    def unpack(cls, packed: bytes) -> Entry:
        (length,) = struct.unpack(">I", packed[:4])
        stamp, hour, etag, headers, request_id_at = orjson.loads(packed[4:4 + length])
        return cls(stamp, hour, etag,
                   tuple((k.encode("latin-1"), v.encode("latin-1")) for k, v in headers),
                   packed[4 + length:], request_id_at)


def entry_of(status: int, headers: list[tuple[bytes, bytes]], body: bytes, request_id: str,
             admission: Admission) -> Entry | None:
    """The entry to keep for an answer of the full path, or None when it is not public."""
    named = {k.lower(): v for k, v in headers}
    if status != 200 or not named.get(b"cache-control", b"").startswith(b"public"):
        return None
    marker = b'"request_id":"' + request_id.encode() + b'"'
    # `meta` follows `data`, so the last occurrence is the envelope's own.
    found = body.rfind(marker)
    etag = named.get(b"etag")
    if found < 0 or etag is None or len(request_id) != REQUEST_ID_LENGTH:
        return None
    kept = tuple((k.lower(), v) for k, v in headers if k.lower() not in PER_REQUEST)
    return Entry(admission.stamp, admission.hour, etag.decode("latin-1"), kept, body,
                 found + len(b'"request_id":"'))


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
        cost = len(entry.body) + len(url)
        if cost > self.max_bytes:
            return
        old = self._entries.pop(url, None)
        if old is not None:
            self.size -= len(old.body) + len(url)
        self._entries[url] = entry
        self.size += cost
        while self.size > self.max_bytes:
            gone_url, gone = self._entries.popitem(last=False)
            self.size -= len(gone.body) + len(gone_url)


class SharedEntries:
    """Entries in Redis (the rate limits' clients, `RedisCounters.command`), for every
    worker and host; failures only cost sharing."""

    def __init__(self, counters: RedisCounters):
        self.counters = counters
        self._warn = OncePerMinute(log, "Redis unreachable, cached answers are not shared: %s")

    @staticmethod
    def key(url: str) -> str:
        return "agenda:cache:" + hashlib.blake2b(url.encode(), digest_size=20).hexdigest()

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


@dataclasses.dataclass
class Consulted:
    """What the cache found for one request."""

    admitted: Admitted
    entry: Entry | None = None
    not_modified: bool = False
    from_shared: bool = False


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
        public = (self.service.public_route(scope["path"])
                  if scope["type"] == "http" and scope["method"] == "GET" else None)
        headers = dict(scope["headers"]) if public else {}
        if public is None or b"authorization" not in headers:
            await self.app(scope, receive, send)
            return
        route, needed, declared = public
        for name, validator in declared:
            value = headers.get(name)
            if value is not None and not validator.is_valid(value.decode("latin-1")):
                # A header the document bounds is out of bounds: Connexion refuses it.
                await self.app(scope, receive, send)
                return
        url = f"{scope['path']}?{scope['query_string'].decode('latin-1')}"
        shared = scope["extensions"]["agenda"]
        if_none_match = headers.get(b"if-none-match", b"").decode("latin-1")
        consulted = await self._consult(url, route, needed,
                                        headers[b"authorization"].decode("latin-1"),
                                        client_address(scope), if_none_match)
        admitted_now = isinstance(consulted.admitted.outcome, Admission)
        if consulted.entry is None and admitted_now and url in self._building:
            await self._follow(consulted, url, if_none_match)
        if consulted.entry is None:
            shared["admitted"] = consulted.admitted
            await self._full_path(scope, receive, send, url, shared,
                                  lead=admitted_now and url not in self._building)
            return
        admission = consulted.admitted.outcome
        shared["ratelimit"] = admission.figures.headers()
        if consulted.from_shared:
            self.local.put(url, consulted.entry)
        await self._answer(send, consulted, shared["request_id"])

    async def _consult(self, url: str, route: str, needed: frozenset[str], header: str,
                       address: str, if_none_match: str) -> Consulted:
        """Admit the request (`security.admitted`); find a fresh entry, here or shared;
        refund the day of a 304. On the event loop, but for what admitting sends to a thread."""
        try:
            admission = await admitted(self.service, header, needed, route, address)
        except Exception as error:  # noqa: BLE001 - the security handler raises it again
            return Consulted(Admitted(route, needed, error))
        consulted = Consulted(Admitted(route, needed, admission))
        entry = self.local.get(url)
        if (entry is None or not entry.fresh(admission)) and self.shared is not None:
            entry = await self.shared.get(url)
            consulted.from_shared = True
        await self._found(consulted, entry, if_none_match)
        return consulted

    async def _found(self, consulted: Consulted, entry: Entry | None,
                     if_none_match: str) -> None:
        """Serve `entry` to an admitted request if it is fresh for it (a 304 when it
        matches If-None-Match, its day refunded)."""
        admission = consulted.admitted.outcome
        if entry is None or not entry.fresh(admission):
            return
        consulted.entry = entry
        if matches(if_none_match, entry.etag):
            consulted.not_modified = True
            await self.service.usage.refund_day_async(admission.caller)

    async def _follow(self, consulted: Consulted, url: str, if_none_match: str) -> None:
        """Another request of this process is building this very answer (the stamp or the
        hour just turned): wait for it rather than build it again, and serve what it kept."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._building[url]), FOLLOW_SECONDS)
        await self._found(consulted, self.local.get(url), if_none_match)

    async def _answer(self, send, consulted: Consulted, request_id: str) -> None:
        entry = consulted.entry
        if consulted.not_modified:
            await send({"type": "http.response.start", "status": 304, "headers": [
                (k, v) for k, v in entry.headers if k in REVALIDATION]})
            await send({"type": "http.response.body", "body": b""})
            return
        body = entry.body_for(request_id)
        await send({"type": "http.response.start", "status": 200, "headers": [
            *entry.headers, (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    async def _full_path(self, scope, receive, send, url: str, shared: dict, *,
                         lead: bool) -> None:
        """Let Connexion answer, and keep the answer when it is public. The `lead` request
        of a URL is the one others arriving meanwhile wait for (`_follow`)."""
        if not lead:
            await self._build(scope, receive, send, url, shared)
            return
        self._building[url] = asyncio.get_running_loop().create_future()
        try:
            await self._build(scope, receive, send, url, shared)
        finally:
            self._building.pop(url).set_result(None)

    async def _build(self, scope, receive, send, url: str, shared: dict) -> None:
        """Connexion's answer, passed on and kept (here and shared) when it is public."""
        start, chunks = {}, []

        async def keeping(message):
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
            await send(message)

        await self.app(scope, receive, keeping)
        admission = shared.get("admission")
        if not start or not isinstance(admission, Admission):
            return
        entry = entry_of(start["status"], start.get("headers", []), b"".join(chunks),
                         shared["request_id"], admission)
        if entry is None:
            return
        self.local.put(url, entry)
        if self.shared is not None:
            await self.shared.put(url, entry)


def matches(header: str, tag: str) -> bool:
    """RFC 9110 weak comparison of If-None-Match (a list of tags, or `*`) with `tag`."""
    if not header:
        return False
    if header.strip() == "*":
        return True
    wanted = tag.removeprefix("W/")
    return any(item.strip().removeprefix("W/") == wanted for item in header.split(","))


def public_routes(document: dict, prefix: str) -> list[tuple[re.Pattern, str, frozenset[str],
                                                               tuple]]:
    """(path pattern, route template, scopes needed, (header name, validator) of each header
    parameter) of every GET operation that declares a 304: the public answers, the only
    ones this cache keeps. The URL is the key; the headers the document declares are
    checked like Connexion checks them, before an answer is served again."""
    found = []
    for template, item in document["paths"].items():
        operation = item.get("get")
        if not operation or "304" not in operation.get("responses", {}):
            continue
        needed = scopes_needed(document, operation)
        if needed is None:
            continue
        parameters = [resolve(document, p) for p in
                      [*item.get("parameters", []), *operation.get("parameters", [])]]
        declared = tuple((p["name"].lower().encode("latin-1"),
                          Draft202012Validator(p.get("schema", {})))
                         for p in parameters if p.get("in") == "header")
        found.append((path_pattern(prefix + template), prefix + template, needed, declared))
    return found

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
renewed by database triggers on every change to public data) read with the token in
one statement (for a token this process knows, adapters/watch.py, the stamp it knows,
confirmed by the database's before a kept answer is served: a change committed
elsewhere is notified a moment after its commit; edge/admission.py `CurrentStamp`, one
read for every request waiting), and the clock hour (the Amsterdam date, which decides
where lists start, and the hour in which cursors are issued) must both be those it was
built under. Anything else goes the full way, its admission kept on the request's
state so that nothing is counted twice, and its answer is kept again; but an entry stale
by the stamp alone whose handler declared how to read its basis again (`revalidated_by`:
what the answer was built from, such as a list's events by id and row version) is served
again, renewed under the new stamp, when that basis is still the one it was built from.
Only answers the handler marked public (`envelope.public`, which hands its parts over on
the request's state) are kept; private ones never are. While one request builds an answer the full
way, the process's other requests for the same URL wait for it (up to
`FOLLOW_SECONDS`) and are served what it kept: a change to the catalogue or the turn
of the hour costs each popular URL one full path per process, not one per request
arriving meanwhile.

A miss is built before the framework too, when it can be: the operation's handler
(given by the wiring, agenda/app.py) is called here, on threads of its own, with the
arguments Connexion would give it (edge/arguments.py reads them from the document) and
the request's state, session and settings reached the same way (edge/context.py
`lane`); its answer, the envelope's public parts, is served and kept exactly as the full
path's. What the reader does not read (see there), a handler's error (a 404, a rule's
400) and a public answer of an operation without a handler here go the full way,
Connexion answering, the admission kept; the database away (or past its deadline) is
the 503 the full way would answer, answered here rather than waited for twice.

MCP's catalogue tools are answered here too (`public_answer`; mcp_server/tools.py): a
tool's result is the public answer of its REST request, whose parameters it gives as
values (edge/arguments.py `Arguments.given`), kept under the key a GET of the same URL
is kept under, served, renewed and built the same way; there is no full way for them, so
a handler's error is raised to the tool.

An entry is kept under its handler's arguments, not under the URL's spelling
(`Keys`): the order of the parameters, a default written out (`limit=25`) or left out,
and other spellings of the same values (`%20` or `+`) ask for the same answer and share
one entry; the handler's answer depends on its arguments alone (and on the stamp and
the hour, which every entry is checked against). A URL the reader does not read is kept
under itself.

Entries live in each process (an LRU bounded in bytes, their data compressed:
`LocalEntries`) and, when the service counts requests in Redis
(`AGENDA_RATELIMIT_STORAGE=redis://...`), in Redis too (compressed the same way), so
that one worker's answer serves the others and other hosts; counting in memory, in a
file of the host that the workers of one server share (`HostEntries`). Freshness is
decided by the stamp in the database, so a shared entry is never staler than a
local one. Redis or the file unreachable: entries are simply not shared.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import hashlib
import logging
import queue
import sqlite3
import struct
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
import zstandard
from connexion.json_schema import resolve_refs

from edge import answers, context, problems
from edge.answers import header_list
from edge.compression import MIN_BYTES, Head, negotiate, suffixed
from edge.admission import Admission, admit, authorization, client_address, confirmed_stamp
from edge.conditional import matches, public_headers
from edge.limits import OncePerMinute, StoreUnavailable
from edge.openapi import compiled, digest_of
from edge.routes import Operation
from edge.state import PublicAnswer, RequestState
from models import errors

if TYPE_CHECKING:
    from edge.redis_counters import RedisCounters

log = logging.getLogger("agenda.cache")
SHARED_TTL = 3600
# The layout of a packed entry (`Entry.pack`) and of a compressed head (`SharedEntries.
# put_head`), named in their Redis keys with the id of the dictionary entries are compressed
# with (`DICTIONARY`).
LAYOUT = 7
# Says whether a public answer was kept or built for this request (as CDNs say it): for
# operators and the benchmark's hit ratio (bench/run.py).
HIT, MISS = (b"x-cache", b"hit"), (b"x-cache", b"miss")
# A kept answer that had gone stale, served again once its handler's basis said it would be
# built the same (`revalidated_by`).
REVALIDATED = (b"x-cache", b"revalidated")
# How long a request waits for another one building the same answer before it builds its own.
FOLLOW_SECONDS = 2.0
# How many URLs a process remembers the key of (`Keys`): ~300 bytes each.
KNOWN_URLS = 8192
# A kept answer's data is compressed once (Zstandard at this level, on the thread that built
# it), with a dictionary trained on the answers of a demo catalogue (bench/dictionary.py,
# 32 KiB): the field names, the site's paths, the cities, genres and words that every
# answer repeats are in the dictionary rather than in each answer. A long tail's page at a
# million events (25 KB) keeps as 2.8 KB (3.5 without the dictionary), so the same memory
# holds ~9 times as many answers; ~58 µs to compress it and ~22 to decompress with a
# context kept per thread (52 and 27 without the dictionary), against ~2 ms of the
# workers' and PostgreSQL's CPU to build it again (bench/RESULTS.md, "A dictionary for
# kept answers"; zlib at its fastest level: 3.8 KB for a 22 KB page, 93 and 45 µs). The
# dictionary's id is in the Redis keys: a release with another one never reads entries
# compressed with this one.
PACK_LEVEL = 3
DICTIONARY = zstandard.ZstdCompressionDict(
    Path(__file__).with_name("answers.zdict").read_bytes(),
    dict_type=zstandard.DICT_TYPE_FULLDICT)
# Digested once for the level, and shared by every thread's compressor.
DICTIONARY.precompute_compress(level=PACK_LEVEL)
# Where the Redis keys of entries and heads begin, and what they name next: the layout and
# the dictionary.
SHARED_PREFIX = "agenda:cache:"
_SHARED_LAYOUT = f"{LAYOUT}.{DICTIONARY.dict_id()}"
# The share of a process's bound that also keeps the answers served most recently whole,
# so that a popular one is served again without decompressing it: a thirty-second (0.5 MiB
# of 16, ~24 pages of a long tail at a million events). An eighth held ~95 pages whole,
# each kept compressed too, where ~400 more answers fit compressed: under a uniform long
# tail at 1M the workers kept 86% of it instead of 77-78%, with 0.5-3.7 MB less RSS
# (bench/RESULTS.md, "A thirty-second of the bound kept whole").
WHOLE_SHARE = 1 / 32
# What keeping an entry costs beyond its bytes (its objects, the LRU's link; measured ~0.4 KB).
ENTRY_OVERHEAD = 512


# Zstandard's contexts, one of each a thread (they are not shared between threads; made
# once, they save 8-14 µs a call).
_contexts = threading.local()


def _compressed(data: bytes) -> bytes:
    """`data` compressed as kept (`PACK_LEVEL`, `DICTIONARY`; the frame names its size and
    the dictionary's id)."""
    compressor = getattr(_contexts, "compressor", None)
    if compressor is None:
        compressor = _contexts.compressor = zstandard.ZstdCompressor(level=PACK_LEVEL,
                                                                     dict_data=DICTIONARY)
    return answers.lasting(compressor.compress(data))


def _decompressed(packed: bytes) -> bytes:
    decompressor = getattr(_contexts, "decompressor", None)
    if decompressor is None:
        decompressor = _contexts.decompressor = zstandard.ZstdDecompressor(
            dict_data=DICTIONARY)
    return decompressor.decompress(packed)


# Public handlers whose kept answers may be served again once stale (`revalidated_by`): the
# function telling each one's basis.
_REVALIDATIONS: dict[Callable, Callable[..., bytes | None]] = {}


def revalidated_by(basis: Callable[..., bytes | None]):
    """Declares, on a public handler whose answers carry what they were built from
    (`PublicAnswer.basis`), the function that tells, from the same arguments, what the
    handler would build its answer from now (a statement cheaper than building it). A kept
    answer gone stale by a change to the catalogue (in its hour: the cursor's and the list's
    first day) is served again, renewed under the new stamp, when the two are equal; built
    again otherwise. So a change costs a check, not a build, of every answer it left as it
    was, and what a change touched is built again at once: a change is still visible in the
    very next answer."""

    def declared(handler):
        _REVALIDATIONS[handler] = basis
        return handler

    return declared


@dataclasses.dataclass(frozen=True)
class Entry:
    """One kept answer, in parts (`data` as serialized, `meta` but the request id), and
    what made it."""

    stamp: str
    hour: int
    answer: PublicAnswer
    # The envelope's start compressed once per coding (edge/compression.py `Head`), made at
    # the first request that asks for it (`ResponseCache._head`); an entry with one more is
    # a new entry, put in its place.
    heads: dict[str, Head] = dataclasses.field(default_factory=dict)
    # Its public headers as ASGI bytes per coding (None: the identity), made at the first
    # request for that form rather than at every hit.
    _headers: dict[str | None, list[tuple[bytes, bytes]]] = dataclasses.field(
        default_factory=dict, compare=False, repr=False)
    # `answer.data` compressed (`PACK_LEVEL`), as processes and Redis keep it: given when
    # it was compressed already (on the building thread, or read back), else made once.
    packed_data: bytes | None = dataclasses.field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, state: RequestState, *, packed: bool = False) -> Entry:
        """The public answer of an admitted request's `state`; with `packed`, its data
        compressed now too."""
        admission = state.admitted()
        return cls(admission.stamp, admission.hour, state.answer,
                   packed_data=_compressed(state.answer.data) if packed else None)

    def packed(self) -> Packed:
        """The entry as a process keeps it, its data compressed."""
        data = self.packed_data
        if data is None:
            data = _compressed(self.answer.data)
        return Packed(self.stamp, self.hour, data, self.answer.meta, self.answer.etag, self.heads,
                      self.answer.basis)

    def public_headers(self, coding: str | None) -> list[tuple[bytes, bytes]]:
        """The headers of its form in `coding`, which its 304 repeats (RFC 9110 15.4.5)."""
        known = self._headers.get(coding)
        if known is None:
            known = self._headers[coding] = header_list(public_headers(
                suffixed(self.answer.etag, coding), coded=self.compressible()))
        return known

    def fresh(self, admission: Admission) -> bool:
        """Whether it is still the answer for a request admitted now."""
        return self.stamp == admission.stamp and self.hour == admission.hour

    def renewable(self, admission: Admission) -> bool:
        """Whether, stale for a request admitted now, it may still be its answer: built in
        this hour (its cursor's hour, its first day), under another stamp, with a basis its
        handler can check (`revalidated_by`)."""
        return self.hour == admission.hour and self.answer.basis is not None

    def renewed(self, stamp: str) -> Entry:
        """The same answer, kept under `stamp`."""
        return dataclasses.replace(self, stamp=stamp)

    def size(self) -> int:
        return len(self.answer.data) + sum(head.size() for head in self.heads.values())

    def compressible(self) -> bool:
        """Whether its body, whatever the request id, is long enough to be compressed."""
        return len(self.answer.data) + len(self.answer.meta) >= MIN_BYTES

    def pack(self) -> bytes:
        """Bytes for Redis: the lengths of the head and of `meta`, the head, `meta`, and
        `data` compressed."""
        packed = self.packed()
        basis = self.answer.basis
        head = orjson.dumps([self.stamp, self.hour, self.answer.etag,
                             None if basis is None else basis.hex()])
        return b"".join((struct.pack(">II", len(head), len(packed.meta)), head, packed.meta,
                         packed.data))

    @classmethod
    def unpack(cls, packed: bytes) -> Entry:
        head_length, meta_length = struct.unpack(">II", packed[:8])
        stamp, hour, etag, basis = orjson.loads(packed[8:8 + head_length])
        meta_end = 8 + head_length + meta_length
        return Packed(stamp, hour, packed[meta_end:], packed[8 + head_length:meta_end], etag,
                      {}, None if basis is None else bytes.fromhex(basis)).whole()


@dataclasses.dataclass(frozen=True, slots=True)
class Packed:
    """An entry as a process keeps it: `data` compressed (`PACK_LEVEL`)."""

    stamp: str
    hour: int
    data: bytes
    meta: bytes
    etag: str
    heads: dict[str, Head]
    basis: bytes | None

    def whole(self) -> Entry:
        """The entry, its data decompressed (~7 µs a page of 25 events)."""
        return Entry(self.stamp, self.hour,
                     PublicAnswer(_decompressed(self.data), self.meta, self.etag, self.basis),
                     self.heads, packed_data=self.data)

    def size(self) -> int:
        return len(self.data) + len(self.meta) + sum(head.size() for head in self.heads.values())


class Recent:
    """Values by key, the least recently used first out once their costs (`cost`, one each
    unless a subclass says otherwise) pass `bound`. Read and written on the event loop only."""

    def __init__(self, bound: int):
        self.bound = bound
        self.size = 0
        self._entries: collections.OrderedDict = collections.OrderedDict()

    def cost(self, _key: str, _value) -> int:
        return 1

    def get(self, key: str):
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def keys(self) -> list[str]:
        return list(self._entries)

    def put(self, key: str, value) -> None:
        cost = self.cost(key, value)
        old = self._entries.pop(key, None)
        if old is not None:
            self.size -= self.cost(key, old)
        if cost > self.bound:
            return
        self._entries[key] = value
        self.size += cost
        while self.size > self.bound:
            gone_key, gone = self._entries.popitem(last=False)
            self.size -= self.cost(gone_key, gone)


class Sized(Recent):
    """Values by key, bounded in bytes (the value's `size()`, its key and `ENTRY_OVERHEAD`)."""

    def cost(self, key: str, value: Entry | Packed) -> int:
        return value.size() + len(key) + ENTRY_OVERHEAD


class LocalEntries:
    """The entries of one process by key, within `max_bytes`: every one compressed
    (`Packed`), the least recently used first out; those served most recently also whole
    (`WHOLE_SHARE` of the bound), served again as they are. Read and written on the event
    loop only."""

    def __init__(self, max_bytes: int):
        self.whole = Sized(int(max_bytes * WHOLE_SHARE))
        self.packed = Sized(max_bytes - self.whole.bound)
        # Off (`AGENDA_RESPONSE_CACHE=false`, a bound of 0): nothing is compressed or kept.
        self.keeps = max_bytes > 0

    @property
    def size(self) -> int:
        return self.whole.size + self.packed.size

    def keys(self) -> list[str]:
        return self.packed.keys()

    def get(self, key: str) -> Entry | None:
        packed = self.packed.get(key)
        entry = self.whole.get(key)
        if entry is None and packed is not None:
            entry = packed.whole()
            self.whole.put(key, entry)
        return entry

    def put(self, key: str, entry: Entry) -> Entry:
        """Keep `entry` under `key`; the entry as kept (its data compressed beside it)."""
        if not self.keeps:
            return entry
        packed = entry.packed()
        if entry.packed_data is None:
            entry = dataclasses.replace(entry, packed_data=packed.data)
        self.packed.put(key, packed)
        self.whole.put(key, entry)
        return entry


class Keys(Recent):
    """The key each URL's answer is kept under (see the module's text), remembered for the
    `size` most recently asked URLs of this process so that an answer served again costs
    a look-up, not a reading of its query."""

    def __init__(self, size: int):
        super().__init__(size)

    @staticmethod
    def of(path: str, arguments: dict) -> str:
        """The key of the answer to the handler's `arguments` (the path holds the route's
        own values; "=" sets these keys apart from URLs, which begin with "/")."""
        return "=" + path + orjson.dumps(sorted(arguments.items())).decode()


class Shared:
    """Entries (`Entry.pack`) and compressed heads kept beside the processes' own, for every
    worker that reads the same store: the layout and the dictionary in each key, so that
    workers of an older release sharing it keep their own apart, and an entry's key keyed
    by its `namespace` (`namespace_of`: what else its bytes depend on). Failures only cost
    sharing. A store says how bytes are read and written (`_read`, `_write`)."""

    def __init__(self, unavailable: str, namespace: bytes = b""):
        self.namespace = namespace
        self._warn = OncePerMinute(log, unavailable)
        self._unreadable = OncePerMinute(log, "A shared cached answer could not be read, "
                                              "built again: %s")

    @staticmethod
    def namespace_of(secret_key: str, document: dict) -> bytes:
        """What a public answer's bytes depend on beside its handler's arguments, the stamp
        and the hour: the key its cursors are signed with, and the document (its schemas,
        and the site its links point to). A server with another key, or a release with
        another document, sharing the store never serves this one's answers."""
        return hashlib.blake2b(secret_key.encode() + b"\0" + digest_of(document),
                               digest_size=32).digest()

    def key(self, name: str) -> str:
        return f"{SHARED_PREFIX}{_SHARED_LAYOUT}:" + hashlib.blake2b(
            name.encode(), digest_size=20, key=self.namespace).hexdigest()

    @staticmethod
    def head_key(tag: str, coding: str) -> str:
        # By the answer's tag (over its data): the same head for every URL with that data.
        return f"{SHARED_PREFIX}{_SHARED_LAYOUT}:{coding}:" + hashlib.blake2b(
            tag.encode(), digest_size=20).hexdigest()

    async def _read(self, key: str) -> bytes | None:
        raise NotImplementedError

    async def _write(self, key: str, value: bytes) -> None:
        raise NotImplementedError

    async def get(self, key: str) -> Entry | None:
        packed = await self._read(self.key(key))
        if not packed:
            return None
        try:
            return Entry.unpack(packed)
        except (ValueError, TypeError, struct.error, zstandard.ZstdError) as error:
            # Not an entry of this layout and dictionary (cut short, or written by something
            # else under the key): as if there were none; the answer built now replaces it.
            self._unreadable(error)
            return None

    async def put(self, key: str, entry: Entry) -> None:
        await self._write(self.key(key), entry.pack())

    async def get_head(self, tag: str, coding: str) -> Head | None:
        """The head another worker compressed for the answer tagged `tag`, if any."""
        packed = await self._read(self.head_key(tag, coding))
        if not packed or len(packed) < 8:
            return None
        crc, length = struct.unpack(">II", packed[:8])
        return Head(coding, packed[8:], crc, length)

    async def put_head(self, tag: str, head: Head) -> None:
        await self._write(self.head_key(tag, head.coding),
                          struct.pack(">II", head.crc, head.length) + head.compressed)

    def close(self) -> None:
        """Let go of what the store holds open."""


class SharedEntries(Shared):
    """Entries in Redis (the rate limits' clients, `RedisCounters.command`), for every
    worker and host, each kept `SHARED_TTL` seconds."""

    def __init__(self, counters: RedisCounters, namespace: bytes = b""):
        super().__init__("Redis unreachable, cached answers are not shared: %s", namespace)
        self.counters = counters

    async def _read(self, key: str) -> bytes | None:
        try:
            return await self.counters.command("GET", key)
        except StoreUnavailable as error:
            self._warn(error)
            return None

    async def _write(self, key: str, value: bytes) -> None:
        try:
            await self.counters.command("SET", key, value, "EX", SHARED_TTL)
        except StoreUnavailable as error:
            self._warn(error)


class HostEntries(Shared):
    """Entries in a file of this host, for the workers of one server that keep their limits
    in memory (`AGENDA_HOST_CACHE_PATH`, which `agenda serve` sets to a file of its own and
    starts empty): an SQLite database in WAL mode, so that a worker reads while another
    writes. What one worker built the others serve, instead of each building every answer
    once (after a start, a change to the catalogue, the turn of the hour), and the host
    holds `max_bytes` of them (`AGENDA_HOST_CACHE_BYTES`) beside each worker's own bound,
    outside every worker's memory.

    Read on the event loop (an entry by its key, ~10 µs: the file's pages are in memory);
    written by a thread of its own, in batches, so that no request waits for the file's
    lock. Once the file would pass its bound (SQLite's `max_page_count`), the entries
    written longest ago go, a quarter at a time: first in, first out, where each process's
    own entries are the least recently used first out (an answer asked often is served from
    the process, and written to the file again whenever it is built or renewed)."""

    # SQLite's page (its default): the bound in pages.
    PAGE = 4096
    # How many entries the writer commits at once, at most (and an eighth of the bound).
    BATCH = 64
    # How many times a batch that does not fit makes room before it is dropped: a quarter of
    # the entries each time (a tenth of them left after 8).
    EVICTIONS = 8
    # How many entries may wait for the writer (~3 MB of a long tail's pages).
    QUEUED = 1024
    # SQLite's cache of pages, a connection (KiB).
    CACHE_KIB = 512
    # How long a read waits for the file's lock (only a checkpoint may hold it): else a miss.
    READ_WAIT = 0.005

    def __init__(self, path: str, max_bytes: int, namespace: bytes = b""):
        super().__init__("The host's cached answers are not shared (%s)", namespace)
        self.path = path
        self.max_pages = max(max_bytes // self.PAGE, 16)
        # A batch's bytes, at most: one that does not fit makes room (`_commit`).
        self.batch_bytes = self.max_pages * self.PAGE // 8
        self._readers = threading.local()
        self._opened: list[sqlite3.Connection] = []
        self._writes: queue.SimpleQueue = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._lock = threading.Lock()
        # When opening the file last failed (a folder gone, a full disk): tried again a
        # minute later, not at every request.
        self._failed_at: float | None = None

    def _connect(self, timeout: float) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, timeout=timeout, isolation_level=None,
                                     check_same_thread=False)
        # A cache: what a crash of the machine loses is built again (the server starts the
        # file afresh).
        connection.execute("PRAGMA synchronous = OFF")
        connection.execute(f"PRAGMA max_page_count = {self.max_pages}")
        # The file's pages are in the operating system's cache: SQLite's own (2 MB a
        # connection by default) would only add to the worker's memory.
        connection.execute(f"PRAGMA cache_size = -{self.CACHE_KIB}")
        return connection

    def _reader(self) -> sqlite3.Connection | None:
        """This thread's connection to the file (the event loop's), opened at its first read."""
        connection = getattr(self._readers, "connection", None)
        if connection is not None:
            return connection
        if self._failed_at is not None and time.monotonic() - self._failed_at < 60:
            return None
        try:
            self._prepare()
            connection = self._connect(self.READ_WAIT)
        except sqlite3.Error as error:
            self._failed_at = time.monotonic()
            self._warn(error)
            return None
        self._readers.connection = connection
        with self._lock:
            self._opened.append(connection)
        return connection

    def _prepare(self) -> None:
        """The file in WAL mode with its table (whichever worker comes first), and this
        process's writer started."""
        with self._lock:
            if self._writer is not None:
                return
            connection = self._connect(timeout=5)
            try:
                connection.execute("PRAGMA journal_mode = WAL")
                connection.execute("CREATE TABLE IF NOT EXISTS answers "
                                   "(key TEXT PRIMARY KEY, value BLOB NOT NULL)")
            finally:
                connection.close()
            self._writer = threading.Thread(target=self._write_all, name="host answers",
                                            daemon=True)
            self._writer.start()

    async def _read(self, key: str) -> bytes | None:
        connection = self._reader()
        if connection is None:
            return None
        try:
            found = connection.execute("SELECT value FROM answers WHERE key = ?",
                                       (key,)).fetchone()
        except sqlite3.Error as error:
            self._warn(error)
            return None
        return None if found is None else found[0]

    async def _write(self, key: str, value: bytes) -> None:
        # The writer's, in its next batch; dropped while it is this far behind (a file it
        # cannot write), rather than held in the worker's memory.
        if ((self._writer is not None or self._reader() is not None)
                and self._writes.qsize() < self.QUEUED):
            self._writes.put((key, value))

    def _write_all(self) -> None:
        """The writer's thread: the entries put, in batches, until `close`."""
        try:
            connection = self._connect(timeout=1)
        except sqlite3.Error as error:
            self._warn(error)
            return
        try:
            while True:
                # What waits, up to a batch (`None`: closed).
                item, batch, size = self._writes.get(), [], 0
                while item is not None:
                    batch.append(item)
                    size += len(item[1])
                    if (len(batch) == self.BATCH or size >= self.batch_bytes
                            or self._writes.empty()):
                        break
                    item = self._writes.get()
                try:
                    if batch:
                        self._commit(connection, batch)
                except sqlite3.Error as error:
                    self._warn(error)
                if item is None:
                    return
        finally:
            connection.close()

    def _commit(self, connection: sqlite3.Connection, batch: list[tuple[str, bytes]]) -> None:
        """`batch` written, the oldest entries gone first while it would not fit (a quarter
        of them at a time)."""
        for attempt in range(self.EVICTIONS + 1):
            try:
                connection.execute("BEGIN IMMEDIATE")
                # A key written again moves to the end (`OR REPLACE`: a new row id).
                connection.executemany("INSERT OR REPLACE INTO answers VALUES (?, ?)", batch)
                connection.execute("COMMIT")
                return
            except sqlite3.OperationalError as error:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                if error.sqlite_errorcode != sqlite3.SQLITE_FULL or attempt == self.EVICTIONS:
                    raise
                connection.execute(
                    "DELETE FROM answers WHERE rowid <= (SELECT rowid FROM answers ORDER BY "
                    "rowid LIMIT 1 OFFSET (SELECT count(*) / 4 FROM answers))")

    def close(self) -> None:
        if self._writer is not None:
            self._writes.put(None)
            self._writer.join(timeout=5)
        with self._lock:
            for connection in self._opened:
                connection.close()
            self._opened.clear()


class ResponseCache:
    """ASGI layer between the request middleware and Connexion (see the module's text)."""

    def __init__(self, app, service, *, handlers: Iterable[Callable] = ()):
        self.app = app
        self.service = service
        # The handlers that build a miss here (see the module's text), by operation.
        self.handlers = {service.routes.of(handler): handler for handler in handlers}
        self._answer_validators = {}
        if service.settings.validate_responses:
            resolved = resolve_refs(service.document)
            for operation in self.handlers:
                definition = resolved["paths"][operation.route.removeprefix("/v1")]["get"]
                self._answer_validators[operation] = compiled(
                    definition["responses"]["200"]["content"]["application/json"]["schema"])
        self._warn = OncePerMinute(log, "a public answer failed before the framework, it "
                                        "goes the full way: %r")
        # Off (`AGENDA_RESPONSE_CACHE=false`): nothing is kept, every answer is built.
        settings, in_process = service.settings, service.usage.in_process
        keeping = settings.response_cache
        self.local = LocalEntries(settings.response_cache_bytes if keeping else 0)
        # The Redis of the rate limits (its connections too), when limits are kept there;
        # else the host's file of this server's workers, if it has one.
        self.shared: Shared | None = None
        if keeping and (not in_process or settings.host_cache_path):
            namespace = Shared.namespace_of(settings.secret_key, service.document)
            self.shared = (HostEntries(settings.host_cache_path, settings.host_cache_bytes,
                                       namespace)
                           if in_process else SharedEntries(service.usage.store, namespace))
        self.keys = Keys(KNOWN_URLS)
        # Key -> done when the full path's request for it, in this process, has answered.
        self._building: dict[str, asyncio.Future] = {}

    def close(self) -> None:
        if self.shared is not None:
            self.shared.close()

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
            await admit(self.service, state, operation.gate, header, client_address(scope))
        except Exception:  # noqa: BLE001 - kept on the state; the full way answers it
            await self.app(scope, receive, send)
            return
        key, arguments = self._key(scope, url, operation)
        entry, stale = await self._current(key, state)
        if entry is None:
            await self._miss(scope, receive, send, key, operation, state, arguments, stale)
            return
        await self._answer(send, key, entry, headers, state.request_id, HIT)

    async def public_answer(self, operation: Operation, values: dict[str, object],
                            state: RequestState) -> tuple[Entry, tuple[bytes, bytes]]:
        """The public answer of `operation` to a request with these parameters (by their
        names in the document, given as values of their types: `Arguments.given`), for a
        surface that is not HTTP's GET (MCP's tools, whose results are these answers): what
        a GET of the same URL admitted under `state` is answered, kept under the same key,
        served while fresh, renewed once checked or built by the same handler and kept.
        With how (`HIT`, `REVALIDATED`, `MISS`). The handler's domain error is raised (a 404,
        a rule's 400); the database away, `ServiceUnavailable`."""
        path, arguments = operation.arguments.given(values)
        key = Keys.of(path, arguments)
        entry, stale = await self._current(key, state)
        if entry is not None:
            return entry, HIT
        async with self._leading(key):
            found = await self._renewed_or_built(key, operation, self.handlers[operation],
                                                 arguments, state, stale)
        if found is None:
            raise LookupError(f"{operation.handler} gave no public answer")
        return found

    async def _current(self, key: str, state: RequestState
                       ) -> tuple[Entry | None, Entry | None]:
        """A fresh entry for `key` for the request admitted under `state` (waiting for the
        request of this process building it, if any), else None and a stale one that may be
        renewed (`_kept`)."""
        admission = state.admitted()
        entry, stale = await self._kept(key, admission)
        if entry is None and key in self._building:
            entry = await self._follow(key, admission)
        if entry is not None and admission.known:
            # Kept under the stamp this process knows: the database's says whether a change
            # committed elsewhere came first (its notification may be on its way).
            current = await confirmed_stamp(self.service, admission)
            if current != entry.stamp:
                older, entry, stale = entry, None, None
                if current is not None:
                    admission = dataclasses.replace(admission, stamp=current, known=False)
                    state.admission = admission
                    entry, stale = await self._kept(key, admission, older)
        return entry, stale

    def _key(self, scope, url: str, operation: Operation) -> tuple[str, dict | None]:
        """The key `url`'s answer is kept under, and its handler's arguments when they were
        read for it (a URL this process has not seen yet)."""
        key = self.keys.get(url)
        if key is not None:
            return key, None
        arguments = (operation.arguments.read(scope["path"], scope["query_string"])
                     if operation in self.handlers else None)
        key = url if arguments is None else Keys.of(scope["path"], arguments)
        self.keys.put(url, key)
        return key, arguments

    @staticmethod
    def _headers_valid(headers: dict, operation) -> bool:
        """Whether every header the document bounds is within bounds (else Connexion
        refuses it, the full way)."""
        for name, valid in operation.headers:
            value = headers.get(name)
            if value is not None and not valid(value.decode("latin-1")):
                return False
        return True

    async def _kept(self, key: str, admission: Admission, stale: Entry | None = None
                    ) -> tuple[Entry | None, Entry | None]:
        """A fresh entry for `key`, here or shared (then kept here too); else None and a
        stale one that may be renewed (`Entry.renewable`), if any (`stale`, if none)."""
        local = self.local.get(key)
        if local is not None and local.fresh(admission):
            return local, None
        shared = None
        if self.shared is not None:
            shared = await self.shared.get(key)
            if shared is not None and shared.fresh(admission):
                self.local.put(key, shared)
                return shared, None
        for kept in (shared, local, stale):
            if kept is not None and kept.renewable(admission):
                return None, kept
        return None, None

    async def _follow(self, key: str, admission: Admission) -> Entry | None:
        """Another request of this process is building this very answer (the stamp or the
        hour just turned): wait for it rather than build it again, and serve what it kept."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._building[key]), FOLLOW_SECONDS)
        entry = self.local.get(key)
        return entry if entry is not None and entry.fresh(admission) else None

    async def _answer(self, send, key: str, entry: Entry, headers: dict, request_id: str,
                      how: tuple[bytes, bytes]) -> None:
        """The kept answer for this request, in the coding it asks for (edge/compression.py)."""
        coded = entry.compressible()
        coding = (negotiate(headers.get(b"accept-encoding", b"").decode("latin-1"))
                  if coded else None)
        kept = [*entry.public_headers(coding), how]
        if matches(headers.get(b"if-none-match", b"").decode("latin-1"), entry.answer.etag):
            await answers.answer(send, 304, headers=kept, content_type=None)
            return
        if coding is None:
            body = answers.envelope(entry.answer.data, request_id, entry.answer.meta)
            await answers.answer(send, 200, body, kept)
            return
        head = await self._head(key, entry, coding)
        await answers.answer(send, 200,
                             head.complete(answers.envelope_tail(request_id, entry.answer.meta)),
                             [*kept, (b"content-encoding", coding.encode())])

    async def _head(self, key: str, entry: Entry, coding: str) -> Head:
        """`entry`'s start compressed in `coding`: kept with it, else compressed by another
        worker (in Redis), else compressed now, once, and kept and shared. On the event
        loop, so no two requests of this process compress the same one (1.1 ms gzip, 1.8 ms
        br for a 69 KB page)."""
        head = entry.heads.get(coding)
        if head is not None:
            return head
        compressed_now = False
        if self.shared is not None:
            head = await self.shared.get_head(entry.answer.etag, coding)
            if head is None:
                # Another request may have compressed it while this one waited for Redis.
                head = self._kept_head(key, entry, coding)
                if head is not None:
                    return head
        if head is None:
            head, compressed_now = Head.of(answers.envelope_start(entry.answer.data), coding), True
        current = self.local.get(key)
        if current is not None and current.answer.etag == entry.answer.etag:
            self.local.put(key, dataclasses.replace(current,
                                                    heads={**current.heads, coding: head}))
        if compressed_now and self.shared is not None:
            await self.shared.put_head(entry.answer.etag, head)
        return head

    def _kept_head(self, key: str, entry: Entry, coding: str) -> Head | None:
        current = self.local.get(key)
        if current is None or current.answer.etag != entry.answer.etag:
            return None
        return current.heads.get(coding)

    async def _miss(self, scope, receive, send, key: str, operation: Operation,
                    state: RequestState, arguments: dict | None, stale: Entry | None) -> None:
        """Build the answer (here, or Connexion), serve it and keep it when public; a
        `stale` entry of it served again instead when its handler's basis says it would be
        built the same."""
        async with self._leading(key):
            await self._build(scope, receive, send, key, operation, state, arguments, stale)

    @contextlib.asynccontextmanager
    async def _leading(self, key: str):
        """Around the building of `key`'s answer: the first request of this process to build
        it is the one others arriving meanwhile wait for (`_follow`)."""
        if key in self._building:
            yield
            return
        self._building[key] = asyncio.get_running_loop().create_future()
        try:
            yield
        finally:
            self._building.pop(key).set_result(None)

    async def _build(self, scope, receive, send, key: str, operation: Operation,
                     state: RequestState, arguments: dict | None, stale: Entry | None) -> None:
        handler = self.handlers.get(operation)
        if arguments is None and handler is not None:
            arguments = operation.arguments.read(scope["path"], scope["query_string"])
        if arguments is not None:
            try:
                found = await self._renewed_or_built(key, operation, handler, arguments, state,
                                                     stale)
            except errors.ServiceUnavailable as error:
                # Answered here: the full way would wait for the database all over again.
                await answers.answer_problem(send, error, state.request_id)
                return
            except errors.DomainError:
                found = None  # the full way answers it (a 404, a rule's 400)
            if found is not None:
                entry, how = found
                await self._answer(send, key, entry, dict(scope["headers"]), state.request_id,
                                   how)
                return
        start = {}

        async def keeping(message):
            if message["type"] == "http.response.start":
                start.update(message)
                if state.answer is not None:
                    message = {**message, "headers": [*message.get("headers", []), MISS]}
            await send(message)

        await self.app(scope, receive, keeping)
        if (start.get("status") == 200 and state.answer is not None
                and state.admitted() is not None):
            await self._keep(key, Entry.of(state))

    async def _renewed_or_built(self, key: str, operation: Operation, handler: Callable | None,
                                arguments: dict, state: RequestState, stale: Entry | None
                                ) -> tuple[Entry, tuple[bytes, bytes]] | None:
        """`stale` renewed under the request's stamp when its handler's basis says it would be
        built the same, else the handler's answer built here; kept, with how. None when the
        handler is not called here, or failed otherwise than by a domain error (raised) or
        the database (`ServiceUnavailable`)."""
        if handler is None:
            return None
        if stale is not None and await self._renewable(handler, arguments, state, stale):
            return await self._keep(key, stale.renewed(state.admitted().stamp)), REVALIDATED
        built = await self._handled(operation, handler, arguments, state)
        return None if built is None else (await self._keep(key, built), MISS)

    async def _renewable(self, handler: Callable, arguments: dict, state: RequestState,
                         stale: Entry) -> bool:
        """Whether the handler would build `stale`'s answer again now: its basis, asked of
        the function it declared (`revalidated_by`), is the one it was built from (a domain
        error there: it is built, and tells)."""
        basis = _REVALIDATIONS.get(handler)
        if basis is None:
            return False
        with contextlib.suppress(errors.DomainError):
            return stale.answer.basis == await self._on_thread(state, self._basis, basis,
                                                               arguments, state)
        return False

    def _basis(self, basis: Callable[..., bytes | None], arguments: dict,
               state: RequestState) -> bytes | None:
        """`basis` of the handler's `arguments`, on a catalogue thread, reaching the session
        as the handler does."""
        with context.lane(self.service, state):
            return basis(**arguments)

    async def _handled(self, operation: Operation, handler: Callable, arguments: dict,
                       state: RequestState) -> Entry | None:
        """The entry of the public answer the handler built here (on `state`), if it did."""
        return await self._on_thread(state, self._run, operation, handler, arguments, state)

    async def _on_thread(self, state: RequestState, function: Callable, *args):
        """`function(*args)` on a catalogue thread for the request of `state`; a domain error
        raised (a 404, a 400), the database unavailable a `ServiceUnavailable`, any other
        failure None (the full way answers it)."""
        try:
            return await self.service.catalogue_threads.run(function, *args)
        except Exception as error:
            state.answer = None
            if problems.database_unavailable(error):
                log.error("database unavailable (request %s): %s", state.request_id,
                          error.__class__.__name__)
                raise errors.ServiceUnavailable() from error
            if isinstance(error, errors.DomainError):
                raise
            self._warn(error)
            return None

    def _run(self, operation: Operation, handler: Callable, arguments: dict,
             state: RequestState) -> Entry | None:
        """The handler, on a catalogue thread, as the full path would call it; its public
        answer's entry, the data compressed there too (off the event loop) when kept."""
        with context.lane(self.service, state):
            handler(**arguments)
        if state.answer is None:
            return None
        validator = self._answer_validators.get(operation)
        if validator is not None:
            validator.validate(orjson.loads(answers.envelope(state.answer.data, state.request_id,
                                                             state.answer.meta)))
        return Entry.of(state, packed=self.local.keeps)

    async def _keep(self, key: str, entry: Entry) -> Entry:
        """`entry` kept here and shared; as kept."""
        entry = self.local.put(key, entry)
        if self.shared is not None:
            await self.shared.put(key, entry)
        return entry

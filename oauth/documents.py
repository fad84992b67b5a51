"""Client ID Metadata Documents: a client whose `client_id` is the https URL of its metadata.

The 2026-07-28 MCP authorization specification prefers them to dynamic
registration. Fetching one means talking to a server anybody may name, so:

- fetches run on one thread of their own (an asyncio loop), never on a handler
  thread: an authorization request waits for its document on the event loop
  (`Prefetch`), and the handlers only read what was fetched (`cached`);
- a fetch has one deadline for everything (resolving, connecting, reading), a
  size cap, no redirects; at most `MAX_FETCHES` run at once, and requests for
  the same URL share one fetch;
- the host is resolved once and the fetch connects to the address that was
  checked (a name cannot resolve to a public address for the check and to an
  internal one for the fetch); private, loopback and link-local addresses are
  refused unless the service is configured for loopback clients (tests);
- documents are kept for a few minutes, failures for half a minute.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import ipaddress
import socket
import ssl
import threading
import time
from urllib.parse import parse_qs, urlsplit

import h11
import orjson

# Seconds for a whole fetch: waiting for a slot, resolving, connecting, reading.
DEADLINE = 5.0
MAX_BYTES = 64 * 1024
# Fetches at once per process; more wait for a slot within their deadline.
MAX_FETCHES = 8
TTL = 300
FAILURE_TTL = 30
# Entries kept at most; past it the oldest go (a flood of URLs stays bounded).
CACHE_SIZE = 1000
_cache: dict[str, tuple[float, dict | DocumentError]] = {}
_lock = threading.Lock()


class DocumentError(Exception):
    """The URL does not give a usable metadata document."""


def is_document_url(client_id: str) -> bool:
    """Whether a client id names a metadata document (an http(s) URL) rather than a record."""
    return client_id.startswith(("https://", "http://"))


def cached(url: str) -> dict | DocumentError | None:
    """What the last fetch of `url` gave while it is kept: the document or its failure;
    None when `url` was not fetched lately."""
    with _lock:
        entry = _cache.get(url)
    if entry is None or entry[0] <= time.monotonic():
        return None
    return entry[1]


def _keep(url: str, outcome: dict | DocumentError) -> None:
    ttl = FAILURE_TTL if isinstance(outcome, DocumentError) else TTL
    with _lock:
        _cache.pop(url, None)
        _cache[url] = (time.monotonic() + ttl, outcome)
        while len(_cache) > CACHE_SIZE:
            del _cache[next(iter(_cache))]


class _Fetcher:
    """The thread and asyncio loop every fetch of this process runs on."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.slots = asyncio.Semaphore(MAX_FETCHES)
        self.running: dict[str, concurrent.futures.Future] = {}
        self.lock = threading.Lock()
        threading.Thread(target=self.loop.run_forever, name="client-documents",
                         daemon=True).start()

    def fetch(self, url: str, *, allow_loopback: bool) -> concurrent.futures.Future:
        """The document at `url` as a future; joins a fetch of the same URL under way."""
        with self.lock:
            running = self.running.get(url)
            if running is not None:
                return running
            running = asyncio.run_coroutine_threadsafe(
                self._fetch_and_keep(url, allow_loopback), self.loop)
            self.running[url] = running
        # Outside the lock: a fetch already done calls back at once, on this thread.
        running.add_done_callback(functools.partial(self._forget, url))
        return running

    def _forget(self, url: str, done: concurrent.futures.Future) -> None:
        with self.lock:
            if self.running.get(url) is done:
                del self.running[url]

    async def _fetch_and_keep(self, url: str, allow_loopback: bool) -> dict:
        fetching = False
        try:
            async with asyncio.timeout(DEADLINE):
                async with self.slots:
                    fetching = True
                    document = await _fetch(url, allow_loopback=allow_loopback)
        except TimeoutError:
            if not fetching:
                # Not the URL's fault: every slot was busy. Not kept: tried again next time.
                raise DocumentError("Too many client metadata documents are being fetched; "
                                    "try again shortly.") from None
            error = DocumentError(f"The client metadata document took longer than "
                                  f"{DEADLINE:g} s to fetch.")
        except DocumentError as failure:
            error = failure
        else:
            _keep(url, document)
            return document
        _keep(url, error)
        raise error


_fetcher: _Fetcher | None = None
_fetcher_lock = threading.Lock()


def fetch_soon(url: str, *, allow_loopback: bool) -> concurrent.futures.Future:
    """The document at `url`, kept or fetched on the documents' own thread (see the module's
    text); the future's result is the document, or it raises `DocumentError`."""
    global _fetcher
    kept = cached(url)
    if kept is not None:
        done = concurrent.futures.Future()
        if isinstance(kept, DocumentError):
            done.set_exception(kept)
        else:
            done.set_result(kept)
        return done
    with _fetcher_lock:
        if _fetcher is None:
            _fetcher = _Fetcher()
    return _fetcher.fetch(url, allow_loopback=allow_loopback)


async def _fetch(url: str, *, allow_loopback: bool) -> dict:
    parts = urlsplit(url)
    if not parts.hostname or parts.username or parts.fragment or parts.path in ("", "/"):
        raise DocumentError("A client id URL needs a host and a path, without credentials.")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise DocumentError("The port of the client id URL is not a number.") from None
    address = await _checked_address(parts.hostname, port, parts.scheme,
                                     allow_loopback=allow_loopback)
    secure = _tls() if parts.scheme == "https" else None
    try:
        reader, writer = await asyncio.open_connection(
            address, port, ssl=secure, server_hostname=parts.hostname if secure else None)
    except (OSError, ssl.SSLError) as error:
        raise DocumentError(f"The client metadata document could not be fetched: "
                            f"{error.__class__.__name__}.") from None
    try:
        body = await _get(reader, writer, parts)
    finally:
        # Closed before the slot is given back (abort: nothing left to flush to a server
        # that does not read).
        writer.transport.abort()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise DocumentError("The client metadata document is not JSON.") from None
    if not isinstance(document, dict):
        raise DocumentError("The client metadata document must be a JSON object.")
    return document


@functools.cache
def _tls() -> ssl.SSLContext:
    """The TLS context of every fetch (the system's CA certificates, read once)."""
    return ssl.create_default_context()


async def resolve(host: str, port: int) -> set[str]:
    """The addresses `host` resolves to (one lookup; `_checked_address` takes them)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return {info[4][0] for info in infos}


async def _checked_address(host: str, port: int, scheme: str, *, allow_loopback: bool) -> str:
    """The one address the fetch connects to: https to public addresses only; http or
    https to loopback only when configured."""
    try:
        addresses = await resolve(host, port)
    except (socket.gaierror, UnicodeError):
        raise DocumentError("The host of the client id URL is unknown.") from None
    ips = sorted((ipaddress.ip_address(address.split("%")[0]) for address in addresses),
                 key=lambda ip: (ip.version, int(ip)))
    if not ips:
        raise DocumentError("The host of the client id URL is unknown.")
    loopback = allow_loopback and all(ip.is_loopback for ip in ips)
    if not loopback and (scheme != "https" or not all(ip.is_global for ip in ips)):
        raise DocumentError("A client id URL must be https on a public address.")
    return str(ips[0])


async def _get(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, parts) -> bytes:
    """GET the document over an open connection; its body, at most MAX_BYTES."""
    connection = h11.Connection(h11.CLIENT)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    writer.write(connection.send(h11.Request(method="GET", target=target, headers=[
        ("Host", parts.netloc), ("Accept", "application/json"), ("Connection", "close"),
        ("User-Agent", "event-agenda-service")])))
    writer.write(connection.send(h11.EndOfMessage()))
    await writer.drain()
    chunks, size = [], 0
    while True:
        try:
            event = connection.next_event()
        except h11.RemoteProtocolError:
            raise DocumentError("The client metadata document's server did not answer "
                                "in HTTP.") from None
        if event is h11.NEED_DATA:
            data = await reader.read(16 * 1024)
            connection.receive_data(data)
        elif isinstance(event, h11.Response):
            if 300 <= event.status_code < 400:
                raise DocumentError("The client metadata document URL redirects.")
            if event.status_code != 200:
                raise DocumentError(f"The client metadata document could not be fetched: "
                                    f"HTTP {event.status_code}.")
        elif isinstance(event, h11.Data):
            size += len(event.data)
            if size > MAX_BYTES:
                raise DocumentError("The client metadata document is over 64 KiB.")
            chunks.append(event.data)
        elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
            return b"".join(chunks)


def authorization_client_id(scope) -> str | None:
    """The document URL an authorization request (ASGI scope) names as its client, if any."""
    if scope["type"] != "http" or scope["path"] != "/oauth/authorize" or \
            scope["method"] not in ("GET", "HEAD"):
        return None
    values = parse_qs(scope["query_string"].decode("latin-1")).get("client_id", [])
    if len(values) != 1 or not is_document_url(values[0]):
        return None
    return values[0]

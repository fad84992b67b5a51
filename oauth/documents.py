"""Client ID Metadata Documents: a client whose `client_id` is the https URL of its metadata.

The 2026-07-28 MCP authorization specification prefers them to dynamic
registration. A document is fetched with a timeout and a size cap, never
through a redirect, never from a private or loopback address (unless the
service is configured for loopback clients, as in tests), and cached briefly.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
import urllib.error
import urllib.request
from urllib.parse import urlsplit

import orjson

TIMEOUT = 5.0
MAX_BYTES = 64 * 1024
TTL = 300
# Documents kept at most; past it the oldest entries go (a flood of URLs stays bounded).
CACHE_SIZE = 1000
_cache: dict[str, tuple[float, dict]] = {}
_lock = threading.Lock()


class DocumentError(Exception):
    """The URL does not give a usable metadata document."""


def is_document_url(client_id: str) -> bool:
    """Whether a client id names a metadata document (an http(s) URL) rather than a record."""
    return client_id.startswith(("https://", "http://"))


def fetch(url: str, *, allow_loopback: bool) -> dict:
    """The metadata document at `url` (cached for a few minutes)."""
    with _lock:
        cached = _cache.get(url)
        if cached and cached[0] > time.monotonic():
            return cached[1]
    _check_target(url, allow_loopback=allow_loopback)
    opener = urllib.request.build_opener(_NoRedirects)
    try:
        with opener.open(urllib.request.Request(url, headers={"Accept": "application/json"}),
                         timeout=TIMEOUT) as response:
            body = response.read(MAX_BYTES + 1)
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise DocumentError(f"The client metadata document could not be fetched: {error}") \
            from None
    if len(body) > MAX_BYTES:
        raise DocumentError("The client metadata document is over 64 KiB.")
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise DocumentError("The client metadata document is not JSON.") from None
    if not isinstance(document, dict):
        raise DocumentError("The client metadata document must be a JSON object.")
    with _lock:
        _cache[url] = (time.monotonic() + TTL, document)
        while len(_cache) > CACHE_SIZE:
            del _cache[next(iter(_cache))]
    return document


def _check_target(url: str, *, allow_loopback: bool) -> None:
    """https to a public address; http or https to loopback only when configured."""
    parts = urlsplit(url)
    if not parts.hostname or parts.username or parts.fragment or parts.path in ("", "/"):
        raise DocumentError("A client id URL needs a host and a path, without credentials.")
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(
            parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))}
    except (socket.gaierror, UnicodeError):
        raise DocumentError("The host of the client id URL is unknown.") from None
    ips = [ipaddress.ip_address(address.split("%")[0]) for address in addresses]
    if allow_loopback and all(ip.is_loopback for ip in ips):
        return
    if parts.scheme != "https" or not all(ip.is_global for ip in ips):
        raise DocumentError("A client id URL must be https on a public address.")


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A metadata document is served at its own URL: a redirect is a refusal."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        fp.close()
        raise DocumentError("The client metadata document URL redirects.")

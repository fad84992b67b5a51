"""Content coding (RFC 9110 8.4.1): gzip and br for answers over `MIN_BYTES`, as the
client's Accept-Encoding allows, and every such answer with `Vary: Accept-Encoding`.

Three kinds of answers, compressed as often as they change:
- bodies that never change while the process runs (the stylesheet, /v1/openapi.json,
  /docs): compressed once, at start-up, at a high ratio (`Kept`), and sent in that form
  when the answer for their path is that very body (the views still write the identity,
  which Connexion's response validation reads);
- the response cache's kept answers (edge/cache.py): their body differs per request only
  by its tail (the request id, then `meta`), so the part before it is compressed once
  into a stream left open (`Head`), and each request appends its tail uncompressed (a
  stored deflate block, an uncompressed brotli meta-block) and closes the stream: a few
  hundred bytes copied, no compressor run;
- everything else (the full path's answers, pages, calendar feeds): compressed per
  answer by the ASGI layer `Compression`, at a ratio cheap enough for that.

A compressed form has its own tag: the answer's with `-gz` or `-br` inside the quotes (as
nginx and Apache write it), so that a cache never takes one form's bytes for another's;
If-None-Match matches any form of an answer (edge/conditional.py), since all carry the
same content, and the 304 names the form this request would be sent.
"""

from __future__ import annotations

import dataclasses
import struct
import zlib

import brotli

# Under this, compressing saves less than it costs (and a packet holds the answer anyway).
MIN_BYTES = 1024
# Preferred at equal q-value: br compresses JSON and HTML ~10% smaller than gzip.
CODINGS = ("br", "gzip")
SUFFIXES = {"br": "-br", "gzip": "-gz"}
VARY = "Accept-Encoding"
# Per answer: fast enough to pay on every answer (~0.4 ms for 60 KB of JSON each).
GZIP_LEVEL, BROTLI_QUALITY = 6, 4
# Once per process: brotli's 11 would take ~1.1 s of each worker's start for /docs and the
# document (9: 0.1 s, 10% larger).
GZIP_LEVEL_ONCE, BROTLI_QUALITY_ONCE = 9, 9
# Media types worth compressing (images and archives are compressed already).
_TEXTUAL = ("text/", "application/json", "application/javascript", "image/svg+xml")
# gzip's member header (RFC 1952): deflate, no name, no time, unknown system.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"


def negotiate(accept_encoding: str) -> str | None:
    """The coding to send (`br`, `gzip`) for an Accept-Encoding header, or None for the
    identity: the acceptable coding of highest q-value, br before gzip at equal q; `*`
    stands for any coding not named; `q=0` refuses. A client that refuses identity too
    still gets it, as RFC 9110 12.5.3 allows, rather than a 406."""
    if not accept_encoding:
        return None
    named, anything = {}, None
    for item in accept_encoding.split(","):
        coding, *params = [part.strip() for part in item.split(";")]
        quality = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        coding = coding.lower()
        if coding == "*":
            anything = quality
        elif coding:
            named[coding] = quality
    best, best_quality = None, 0.0
    for coding in CODINGS:
        quality = named.get(coding, anything or 0.0)
        if quality > best_quality:
            best, best_quality = coding, quality
    return best


def compressible(content_type: str) -> bool:
    """Whether answers of this media type are compressed."""
    media = content_type.split(";")[0].strip().lower()
    return media.startswith(_TEXTUAL) or media.endswith("+json")


def suffixed(tag: str, coding: str | None) -> str:
    """The tag of `coding`'s form of the answer tagged `tag` (`W/"abc"` -> `W/"abc-br"`)."""
    if coding is None or not tag.endswith('"'):
        return tag
    return tag[:-1] + SUFFIXES[coding] + '"'


def unsuffixed(tag: str) -> str:
    """The tag of the answer a form's tag names (the tag itself for the identity)."""
    for suffix in SUFFIXES.values():
        if tag.endswith(suffix + '"'):
            return tag[:-len(suffix) - 1] + '"'
    return tag


def vary(value: str | None) -> str:
    """A Vary header's value with Accept-Encoding added."""
    if not value:
        return VARY
    if VARY.lower() in (name.strip().lower() for name in value.split(",")):
        return value
    return f"{value}, {VARY}"


def compress(body: bytes, coding: str, *, once: bool = False) -> bytes:
    """`body` in `coding`; at the best ratio when it is compressed `once` to be kept."""
    if coding == "br":
        return brotli.compress(body, mode=brotli.MODE_TEXT,
                               quality=BROTLI_QUALITY_ONCE if once else BROTLI_QUALITY)
    compressor = zlib.compressobj(GZIP_LEVEL_ONCE if once else GZIP_LEVEL, zlib.DEFLATED,
                                  zlib.MAX_WBITS | 16)
    return compressor.compress(body) + compressor.flush()


@dataclasses.dataclass(frozen=True)
class Kept:
    """A body that does not change, with its forms compressed once (none when small)."""

    identity: bytes
    forms: dict[str, bytes]

    @classmethod
    def of(cls, body: bytes) -> Kept:
        if len(body) < MIN_BYTES:
            return cls(body, {})
        return cls(body, {coding: compress(body, coding, once=True) for coding in CODINGS})


@dataclasses.dataclass(frozen=True)
class Head:
    """The start of a body compressed once in `coding`, its stream left open, so that each
    request completes it with a tail of its own (`complete`) without compressing again."""

    coding: str
    compressed: bytes
    # gzip's trailer covers the whole body: the CRC-32 and length of the start, continued
    # over each tail.
    crc: int = 0
    length: int = 0

    @classmethod
    def of(cls, start: bytes, coding: str) -> Head:
        if coding == "br":
            compressor = brotli.Compressor(mode=brotli.MODE_TEXT, quality=BROTLI_QUALITY)
            # A flush ends on a byte boundary at the end of a meta-block (RFC 7932 9.2).
            return cls(coding, compressor.process(start) + compressor.flush())
        # Raw deflate, flushed to a byte boundary without a last block (RFC 1951 3.2.3).
        compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
        deflated = compressor.compress(start) + compressor.flush(zlib.Z_SYNC_FLUSH)
        return cls(coding, _GZIP_HEADER + deflated, zlib.crc32(start), len(start))

    def complete(self, tail: bytes) -> bytes:
        """The whole compressed body: the start, then `tail` stored as it is, then the end."""
        if self.coding == "br":
            return b"".join((self.compressed, *_brotli_stored(tail), b"\x03"))
        trailer = struct.pack("<II", zlib.crc32(tail, self.crc),
                              (self.length + len(tail)) & 0xFFFFFFFF)
        return b"".join((self.compressed, *_deflate_stored(tail), trailer))

    def size(self) -> int:
        return len(self.compressed)


def _deflate_stored(tail: bytes):
    """`tail` as stored deflate blocks, the last one final (RFC 1951 3.2.4)."""
    chunks = [tail[at:at + 0xFFFF] for at in range(0, len(tail), 0xFFFF)] or [b""]
    for index, chunk in enumerate(chunks):
        final = 1 if index == len(chunks) - 1 else 0
        yield struct.pack("<BHH", final, len(chunk), len(chunk) ^ 0xFFFF)
        yield chunk


def _brotli_stored(tail: bytes):
    """`tail` as uncompressed brotli meta-blocks (RFC 7932 9.2: ISLAST 0, four nibbles of
    MLEN-1, ISUNCOMPRESSED 1, padding to the byte); the stream's last, empty meta-block
    (`\\x03`) is written after them."""
    for at in range(0, len(tail), 0x10000):
        chunk = tail[at:at + 0x10000]
        yield (((len(chunk) - 1) << 3) | (1 << 19)).to_bytes(3, "little")
        yield chunk


class Compression:
    """ASGI layer: compresses the answers built below it (the response cache, above it,
    sends its own) that come uncompressed, when textual and over `MIN_BYTES`, and says
    `Vary: Accept-Encoding` on them whether compressed or not; a `Kept` body is sent in
    its form made at start-up. It leaves alone HEAD (no body), 204/304 (none either; a 304
    only names the form the client holds, `_revalidated`), and streamed answers (MCP's
    event streams)."""

    def __init__(self, app, kept: dict[str, Kept]):
        self.app = app
        # The bodies that do not change, by path (filled as the application starts).
        self.kept = kept

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] == "HEAD":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        coding = negotiate(headers.get(b"accept-encoding", b"").decode("latin-1"))
        held: dict = {}
        chunks: list[bytes] = []

        async def compressing(message):
            if message["type"] == "http.response.start":
                if message["status"] == 304:
                    message = _revalidated(message, coding, headers.get(b"if-none-match", b""))
                elif _candidate(message):
                    held.update(message)
                    return
                await send(message)
                return
            if message["type"] != "http.response.body" or not held:
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            body = b"".join(chunks)
            if len(body) >= MIN_BYTES:
                body = self._coded_body(scope["path"], body, coding) if coding else body
                held.update(_coded(held, coding, len(body)))
            await send(held)
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, compressing)

    def _coded_body(self, path: str, body: bytes, coding: str) -> bytes:
        """`body` in `coding`: the form made at start-up when it is a kept body."""
        kept = self.kept.get(path)
        if kept is not None and kept.identity == body:
            return kept.forms[coding]
        return compress(body, coding)


def _candidate(start) -> bool:
    """Whether an answer may be compressed: a body of a textual type, not negotiated already
    (coded, or saying it varies with Accept-Encoding, as the response cache's answers do)."""
    given = {name.lower(): value for name, value in start.get("headers", [])}
    content_type = given.get(b"content-type", b"").decode("latin-1")
    negotiated = b"content-encoding" in given or VARY.lower().encode() in given.get(
        b"vary", b"").lower()
    return (start["status"] not in (204, 304) and not negotiated
            and compressible(content_type) and not content_type.startswith("text/event-stream"))


def _coded(start, coding: str | None, length: int) -> dict:
    """The start of an answer that could be compressed: with Vary; with the coding, its
    form's tag and the compressed `length` when it is."""
    headers, seen_vary = [], False
    for name, value in start.get("headers", []):
        lowered = name.lower()
        if lowered == b"vary":
            value, seen_vary = vary(value.decode("latin-1")).encode("latin-1"), True
        elif coding and lowered == b"etag":
            value = suffixed(value.decode("latin-1"), coding).encode("latin-1")
        elif coding and lowered == b"content-length":
            continue
        headers.append((name, value))
    if not seen_vary:
        headers.append((b"vary", VARY.encode()))
    if coding:
        headers += [(b"content-encoding", coding.encode()),
                    (b"content-length", str(length).encode())]
    return {**start, "headers": headers}


def _revalidated(start, coding: str | None, if_none_match: bytes) -> dict:
    """A 304 naming the form the client holds when that is the form it would be sent now
    (its tag, `-br` or `-gz`, among those it asked with), as a cache needs to update it."""
    given = start.get("headers", [])
    tag = next((value.decode("latin-1") for name, value in given if name.lower() == b"etag"),
               None)
    if coding is None or tag is None or unsuffixed(tag) != tag:
        return start
    form = suffixed(tag, coding)
    held = [item.strip().removeprefix("W/") for item in if_none_match.decode("latin-1").split(",")]
    if form.removeprefix("W/") not in held:
        return start
    headers = [(name, form.encode("latin-1") if name.lower() == b"etag" else value)
               for name, value in given if name.lower() != b"vary"]
    current = next((value.decode("latin-1") for name, value in given if name.lower() == b"vary"),
                   None)
    return {**start, "headers": [*headers, (b"vary", vary(current).encode("latin-1"))]}

"""Conditional GET: the ETag of a public answer, If-None-Match, and the rule that a 304
costs no daily quota (it counts in the minute like any request)."""

from __future__ import annotations

import hashlib

from edge.compression import VARY, unsuffixed
from edge.state import RequestState

# Public catalogue answers, the same for every token; answers about the caller's own
# organisation or token.
PUBLIC_CACHE = "public, max-age=60"
PRIVATE_CACHE = "private, no-store"


def etag(data: bytes, meta: bytes) -> str:
    """A weak tag over what the client sees (data and meta, serialized), never over the
    request id: 128 bits of their SHA-256, which OpenSSL computes with the processor's SHA
    instructions where it has them (x86's SHA extensions, ARMv8's crypto extension): a page
    of 21 KB in ~13 µs on the benchmark's machine, where CPython's blake2b (its portable C)
    took ~26 (bench/RESULTS.md)."""
    digest = hashlib.sha256(len(data).to_bytes(8, "big"))
    digest.update(data)
    digest.update(meta)
    return f'W/"{digest.hexdigest()[:32]}"'


def public_headers(tag: str, *, coded: bool = False) -> dict[str, str]:
    """The headers of a public answer, repeated by its 304 (RFC 9110 15.4.5); one long
    enough to be `coded` (edge/compression.py) varies with Accept-Encoding too."""
    return {"ETag": tag, "Cache-Control": PUBLIC_CACHE,
            "Vary": f"Authorization, {VARY}" if coded else "Authorization"}


def matches(header: str, tag: str) -> bool:
    """RFC 9110 weak comparison of If-None-Match (a list of tags, or `*`) with `tag`, or with
    the tag of any of its compressed forms (edge/compression.py): they carry the same content."""
    if not header:
        return False
    if header.strip() == "*":
        return True
    wanted = unsuffixed(tag).removeprefix("W/")
    return any(unsuffixed(item.strip()).removeprefix("W/") == wanted
               for item in header.split(","))


async def refund_revalidation(service, state: RequestState) -> None:
    """Give a 304's day back to the token it was counted for (whoever answered it)."""
    admission = state.admitted()
    if admission is not None:
        await service.usage.refund_day_async(admission.caller)

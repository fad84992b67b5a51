"""The bytes of answers: the success envelope, and every answer written straight to ASGI.

The one place that writes `http.response.start` and `http.response.body` messages for
the layers that answer before the framework (the outermost layer's early refusals, the
response cache, the door's lane, the MCP endpoint), and the one place that lays out the
envelope `{data, meta}` (the handlers' answers and the cache's kept ones alike).
"""

from __future__ import annotations

import orjson

from edge.problems import error_body, headers_of, status_of

JSON = b"application/json"
# The envelope's bytes before `data`, and from it to the request id.
_DATA, _REQUEST_ID = b'{"data":', b',"meta":{"request_id":'


def envelope(data: bytes, request_id: str, meta: bytes = b"{}") -> bytes:
    """`{"data": ..., "meta": {"request_id": ..., **meta}}` from `data` and `meta` (an object)
    already serialized."""
    return b"".join((_DATA, data, _REQUEST_ID, *_tail(request_id, meta)))


def data_of(body: bytes) -> bytes:
    """The serialized `data` of an envelope's bytes, as `envelope` was given it."""
    return body[len(_DATA):body.rindex(b',"meta":')]


def without_request_id(data: bytes, meta: bytes = b"{}") -> bytes:
    """`{"data": ..., "meta": {**meta}}`: the envelope of an answer that is not HTTP's, with
    no request id of its own (an MCP tool's result, mcp_server/tools.py)."""
    return b"".join((_DATA, data, b',"meta":', meta, b"}"))


def envelope_start(data: bytes) -> bytes:
    """The envelope up to the request id: the same for every request of a kept answer
    (compressed once, edge/compression.py `Head`)."""
    return b"".join((_DATA, data, _REQUEST_ID))


def envelope_tail(request_id: str, meta: bytes = b"{}") -> bytes:
    """The envelope from the request id on."""
    return b"".join(_tail(request_id, meta))


def _tail(request_id: str, meta: bytes) -> tuple[bytes, ...]:
    rest = meta[1:-1]
    return orjson.dumps(request_id), b"," if rest else b"", rest, b"}}"


def lasting(serialized: bytes) -> bytes:
    """`serialized` (orjson's output, or a compressor's) copied to bytes of its own size, to
    be kept: their bytes keep the whole buffer they were written in (orjson's ~4 KB for a
    few hundred bytes; Zstandard's the room of the worst case, a page's 22 KB for its 3.4)."""
    return bytes(memoryview(serialized))


def header_list(headers: dict[str, str] | None) -> list[tuple[bytes, bytes]]:
    """ASGI headers from a dict of names and values."""
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]


async def answer(send, status: int, body: bytes = b"", headers: list[tuple[bytes, bytes]] = (),
               *, content_type: bytes | None = JSON) -> None:
    """One whole answer: `status`, `headers` (with Content-Type and Content-Length), `body`."""
    given = list(headers)
    if content_type is not None and body:
        given.append((b"content-type", content_type))
    if status not in (204, 304):  # neither has a body, nor a length (RFC 9110)
        given.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": given})
    await send({"type": "http.response.body", "body": body})


async def answer_error(send, status: int, message: str, request_id: str, *,
                     code: str | None = None, details: dict | None = None,
                     headers: dict[str, str] | None = None) -> None:
    """The error envelope, never cached."""
    await answer(send, status, error_body(status, message, request_id, code=code,
                                          details=details),
                            [(b"cache-control", b"no-store"), *header_list(headers)])


async def answer_problem(send, error, request_id: str, *, code: str | None = None,
                         headers: dict[str, str] | None = None) -> None:
    """A domain error in the error envelope, with the status, code and headers of its kind
    (edge/problems.py): how a layer before the framework answers one."""
    status, kind = status_of(error)
    await answer_error(send, status, error.message, request_id, code=code or kind,
                       headers={**headers_of(error), **(headers or {})})

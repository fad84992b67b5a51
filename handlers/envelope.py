"""The success envelope `{data, meta}`, with caching headers by kind of answer.

Public catalogue answers are the same for every token: they carry the
attribution, a weak ETag over `data` and the pagination fields of `meta`, and
`Cache-Control: public, max-age=60`; a matching `If-None-Match` gets a 304.
Answers about the token's own organisation or token are `private, no-store`.
"""

from __future__ import annotations

import hashlib

import orjson
from flask import Response, request

from edge.cache import matches
from edge.context import request_id, settings
from handlers.schemas import attribution

PUBLIC_CACHE = "public, max-age=60"
PRIVATE_CACHE = "private, no-store"


def public(data, *, meta: dict | None = None) -> Response:
    """A public catalogue answer, conditional on `If-None-Match`."""
    meta = {**(meta or {}), "attribution": attribution(settings())}
    tag = _etag(data, meta)
    headers = {"ETag": tag, "Cache-Control": PUBLIC_CACHE, "Vary": "Authorization"}
    if matches(request.headers.get("If-None-Match", ""), tag):
        return Response(status=304, headers=headers)
    return _json(data, meta, headers)


def public_page(items: list, *, limit: int, next_cursor: str | None,
                meta: dict | None = None) -> Response:
    """A public list page."""
    return public(items, meta={**(meta or {}), "count": len(items), "limit": limit,
                               "next_cursor": next_cursor})


def private(data) -> Response:
    """An answer about the caller's own token or organisation; never cached."""
    return _json(data, {}, {"Cache-Control": PRIVATE_CACHE})


def _json(data, meta: dict, headers: dict) -> Response:
    body = orjson.dumps({"data": data, "meta": {"request_id": request_id(), **meta}})
    return Response(body, status=200, headers=headers, mimetype="application/json")


def _etag(data, meta: dict) -> str:
    """A weak tag over what the client sees, never over the request id."""
    digest = hashlib.blake2b(orjson.dumps([data, meta], option=orjson.OPT_SORT_KEYS),
                             digest_size=16).hexdigest()
    return f'W/"{digest}"'

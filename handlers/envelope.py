"""The success envelope `{data, meta}`, with caching headers by kind of answer.

Public catalogue answers are the same for every token: they carry the
attribution, a weak ETag over `data` and the pagination fields of `meta`, and
`Cache-Control: public, max-age=60`; a matching `If-None-Match` gets a 304.
Answers about the token's own organisation or token are `private, no-store`.
"""

from __future__ import annotations

import orjson
from flask import Response

from edge import answers, conditional
from edge.context import before_framework, if_none_match, request_id, settings, state
from edge.state import PublicAnswer
from openapi.schemas import attribution


def public(data, *, meta: dict | None = None, basis: bytes | None = None) -> Response | None:
    """A public catalogue answer, conditional on `If-None-Match`; `basis`, what it was built
    from (`edge.state.PublicAnswer.basis`), if the handler can tell."""
    # Kept by the response cache: bytes of their own size (`answers.lasting`).
    meta = answers.lasting(orjson.dumps({**(meta or {}), "attribution": attribution(settings())}))
    data = answers.lasting(orjson.dumps(data))
    answer = PublicAnswer(data, meta, conditional.etag(data, meta), basis)
    # Kept by the response cache (edge/cache.py) in parts, not as this body's bytes; before
    # the framework, the cache answers from them (no Response made and thrown away).
    state().answer = answer
    if before_framework():
        return None
    headers = conditional.public_headers(answer.etag)
    if conditional.matches(if_none_match(), answer.etag):
        return Response(status=304, headers=headers)
    return _json(answer.data, answer.meta, headers)


def public_page(items: list, *, limit: int, next_cursor: str | None,
                meta: dict | None = None, basis: bytes | None = None) -> Response:
    """A public list page."""
    return public(items, meta={**(meta or {}), "count": len(items), "limit": limit,
                               "next_cursor": next_cursor}, basis=basis)


def private(data) -> Response:
    """An answer about the caller's own token or organisation; never cached."""
    return _json(orjson.dumps(data), b"{}", {"Cache-Control": conditional.PRIVATE_CACHE})


def _json(data: bytes, meta: bytes, headers: dict) -> Response:
    return Response(answers.envelope(data, request_id(), meta), status=200, headers=headers,
                    mimetype="application/json")

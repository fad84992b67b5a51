"""Opaque, signed pagination cursors that bind the filters they were made for.

A cursor is `base64url(payload).signature`: the payload holds the list's kind,
a digest of its filters, the keyset position and the time it was issued; the
signature is an HMAC-SHA256 with the secret key. A cursor that was tampered
with, expired, or is reused with other filters is a 400 naming `cursor`.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import hashlib
import hmac
import time

import orjson

from models.errors import BadRequest

LIFETIME = 24 * 3600
# Issue times are rounded down to the hour, so the same page gets the same cursor
# (and the same ETag) for an hour; a cursor lives 24 to 25 hours.
ISSUE_GRANULARITY = 3600
VERSION = 1


def _sign(secret: str, payload: bytes) -> str:
    mac = hmac.new(secret.encode(), payload, hashlib.sha256).digest()[:16]
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def _digest(kind: str, filters: dict) -> str:
    canonical = orjson.dumps({"kind": kind, "filters": filters},
                             option=orjson.OPT_SORT_KEYS, default=str)
    return hashlib.sha256(canonical).hexdigest()[:16]


def _plain(value):
    return value.isoformat() if isinstance(value, dt.date) else value


def encode(secret: str, *, kind: str, filters: dict, key: tuple, clock=time.time) -> str:
    """A cursor for the page after keyset position `key` of list `kind` with `filters`."""
    payload = orjson.dumps([VERSION, _digest(kind, filters), [_plain(v) for v in key],
                            int(clock()) // ISSUE_GRANULARITY * ISSUE_GRANULARITY])
    body = base64.urlsafe_b64encode(payload).rstrip(b"=").decode()
    return f"{body}.{_sign(secret, payload)}"


def _refuse(message: str):
    raise BadRequest([{"name": "cursor", "in": "query", "message": message}])


def authentic(secret: str, cursor: str) -> bytes:
    """The payload of `cursor` when this API signed it (for any list, any filters);
    `BadRequest` naming `cursor` otherwise."""
    body, _, signature = cursor.partition(".")
    try:
        payload = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        _refuse("is not a cursor of this API")
    if not signature or not hmac.compare_digest(_sign(secret, payload), signature):
        _refuse("is not a cursor of this API (take it from meta.next_cursor)")
    return payload


def decode(secret: str, cursor: str, *, kind: str, filters: dict, clock=time.time,
           lifetime: int | None = LIFETIME) -> list:
    """The keyset position inside `cursor`; `BadRequest` naming `cursor` when it is not valid.
    `lifetime` None: the list checks the age of its positions itself (the change feed)."""
    version, digest, key, issued = orjson.loads(authentic(secret, cursor))
    if version != VERSION or digest != _digest(kind, filters):
        _refuse("was made for other filters; start again without a cursor")
    if lifetime is not None and clock() - issued > lifetime + ISSUE_GRANULARITY:
        _refuse("has expired; start again without a cursor")
    return key

"""The paging kit of every list, REST and MCP alike: keyset positions as signed cursors.

A domain list function takes a keyset position (`after`, None for the first page) and
returns a `models.paging.Page` with the position after it. The list's filters
(`models.paging.Filters`) name its kind and what its cursors are bound to; this kit turns
the positions into cursors and back (edge/cursors.py signs them) with the service's secret,
which a handler takes from the request's settings and an MCP tool from its call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from edge import cursors
from models.errors import BadRequest
from models.paging import Filters, Page


@dataclasses.dataclass(frozen=True)
class Listed:
    """One page as its caller sees it: the items, and the cursor of the next page."""

    items: list
    next_cursor: str | None
    # What it was built from (`models.paging.Page.basis`), if the list tells.
    basis: bytes | None = None


def page(filters: Filters, cursor: str | None, *, secret: str,
         fetch: Callable[[list | None], Page], lifetime: int | None = cursors.LIFETIME) -> Listed:
    """The page after `cursor` (None: the first) of the list `filters` belong to; `fetch(after)`
    is the domain call. A cursor of another list or other filters is a `BadRequest`; so is
    one older than `lifetime` (None: the domain call judges its positions' age)."""
    binding = filters.binding()
    found = fetch(_position(filters, binding, cursor, secret, lifetime))
    next_cursor = None if found.next_key is None else cursors.encode(
        secret, kind=filters.kind, filters=binding, key=found.next_key)
    return Listed(items=found.items, next_cursor=next_cursor, basis=found.basis)


def position(filters: Filters, cursor: str | None, *, secret: str,
             lifetime: int | None = cursors.LIFETIME) -> list | None:
    """The keyset position `cursor` names in the list `filters` belong to (None: the first
    page); a `BadRequest` as `page` says."""
    return _position(filters, filters.binding(), cursor, secret, lifetime)


def _position(filters: Filters, binding: dict, cursor: str | None, secret: str,
              lifetime: int | None) -> list | None:
    try:
        return None if cursor is None else cursors.decode(
            secret, cursor, kind=filters.kind, filters=binding, lifetime=lifetime)
    except BadRequest as refused:
        # Named with the filters' own problems, which the list would refuse next: one 400.
        raise BadRequest([*filters.problems(), *refused.params]) from None

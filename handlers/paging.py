"""Cursors of the REST lists: decode the request's cursor, encode the next one."""

from __future__ import annotations

from edge import cursors
from edge.context import settings
from models.paging import Page


def after(cursor: str | None, *, kind: str, filters: dict,
          secret: str | None = None) -> list | None:
    """The keyset position of `cursor` (None for the first page); `secret` defaults to the
    request's service key (MCP tools pass theirs)."""
    if cursor is None:
        return None
    return cursors.decode(secret or settings().secret_key, cursor, kind=kind, filters=filters)


def next_cursor(page: Page, *, kind: str, filters: dict, secret: str | None = None) -> str | None:
    """`meta.next_cursor` for the page after `page`."""
    if page.next_key is None:
        return None
    return cursors.encode(secret or settings().secret_key, kind=kind, filters=filters,
                          key=page.next_key)

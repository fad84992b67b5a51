"""Keyset pagination: a page is the rows after a position in the list's order, never OFFSET."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from sqlalchemy import Select, tuple_
from sqlalchemy.orm import Session


@dataclasses.dataclass(frozen=True)
class Page:
    """One page of a list, and the keyset position after it (None: no further page)."""

    items: list
    next_key: tuple | None


def keyset_page(session: Session, query: Select, *, order: list, after: list | None,
                limit: int, key_of: Callable[[Any], tuple], descending: bool = False,
                scalars: bool = True) -> Page:
    """Run `query` ordered by `order` from after position `after`, `limit` items.

    All `order` columns go the same direction, so one row-value comparison both uses
    the matching index and is exact with ties (the last column must be unique).
    """
    rows = _rows(session, query, order=order, after=after, count=limit + 1,
                 descending=descending, scalars=scalars)
    more = len(rows) > limit
    rows = rows[:limit]
    return Page(items=rows, next_key=key_of(rows[-1]) if more and rows else None)


def keyset_chain(session: Session, parts: list[tuple[Select, list]], *, after: list | None,
                 limit: int, key_of: Callable[[Any], tuple]) -> Page:
    """One page of the rows of a list made of several queries, each `(query, order)`, whose
    rows follow each other in the list's order (every row of a part sorts before every row
    of the next), read part after part until the page is full. The position `after` applies to
    every part, so a part the list has left behind yields nothing."""
    rows: list = []
    for query, order in parts:
        wanted = limit + 1 - len(rows)
        if wanted <= 0:
            break
        rows += _rows(session, query, order=order, after=after, count=wanted, descending=False,
                      scalars=False)
    more = len(rows) > limit
    rows = rows[:limit]
    return Page(items=rows, next_key=key_of(rows[-1]) if more and rows else None)


def _rows(session: Session, query: Select, *, order: list, after: list | None, count: int,
          descending: bool, scalars: bool) -> list:
    if after is not None:
        position = tuple_(*order)
        query = query.where(position < tuple_(*after) if descending
                            else position > tuple_(*after))
    query = query.order_by(*[c.desc() if descending else c.asc() for c in order])
    result = session.execute(query.limit(count))
    return list(result.scalars() if scalars else result.all())

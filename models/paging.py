"""Keyset pagination: a page is the rows after a position in the list's order, never OFFSET."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from sqlalchemy import (Integer, Select, bindparam, literal_column, select, tuple_,
                        union_all)
from sqlalchemy.orm import Session

from adapters.direct import session_rows


@dataclasses.dataclass(frozen=True)
class Page:
    """One page of a list, and the keyset position after it (None: no further page)."""

    items: list
    next_key: tuple | None
    # What the page was built from, where the list can tell whether it would be built the
    # same again (`models.events.list_basis`): kept with its answer (edge/cache.py).
    basis: bytes | None = None


def row_version(table: str):
    """A row's version (PostgreSQL) as SQL over `table`: the transaction that wrote its
    current row and where that row lies, which every change to it replaces, whoever makes
    it (a request, an import, the triggers that keep an event's copies of its genres, venue
    and organisation, an operator's SQL); the place too, since a transaction that changes a
    row twice writes both versions with its own id. An answer made of rows' columns alone
    is built the same again from the same rows at the same versions (its basis)."""
    return literal_column(f"{table}.xmin::text || {table}.ctid::text")


def basis_of(*parts: object) -> bytes:
    """A basis (what an answer was built from: `Page.basis`, edge/cache.py) as a digest of
    `parts` (ids, row versions, counts, in order)."""
    return hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=16).digest()


class Filters:
    """The filters of a list (a frozen dataclass each), with the `kind` that names the list:
    together what a cursor of the list is bound to."""

    kind: ClassVar[str]

    def problems(self) -> list[dict]:
        """Combinations of these filters no query can answer, one `details.params` entry per
        bad field (none unless the list says otherwise)."""
        return []

    def binding(self) -> dict:
        """The filters a cursor is bound to (those given, as strings). Read field by field:
        `dataclasses.asdict` deep-copies every value, ~5% of a list's miss."""
        return {field.name: str(value) for field in dataclasses.fields(self)
                if (value := getattr(self, field.name)) is not None}


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


def keyset_statement(query: Select, order: list, *, after: bool) -> Select:
    """`query` in `order` (ascending), at most `count` rows, and with `after` only the rows
    after the position `position_params` gives: a statement built once, run with parameters.
    """
    if after:
        query = query.where(tuple_(*order) > tuple_(*(
            bindparam(f"after_{index}", type_=column.type) for index, column in enumerate(order))))
    return query.order_by(*order).limit(bindparam("count", type_=Integer))


def position_params(key: tuple) -> dict:
    """The parameters of `keyset_statement(after=True)` for the position `key`."""
    return {f"after_{index}": value for index, value in enumerate(key)}


def keyset_union(statements: Sequence[Select], order: Sequence[str]) -> Select:
    """One statement of the rows of several `keyset_statement`s whose rows follow each
    other in the list's order (every row of one sorts before every row of the next), each
    part limited as the whole: a page in one round trip, however many parts. `order` names
    the list's columns, as the parts select them."""
    union = union_all(*(statement.subquery().select() for statement in statements)).subquery()
    return (select(union).order_by(*(union.c[name] for name in order))
            .limit(bindparam("count", type_=Integer)))


def keyset_rows(session: Session, statement: Select, *, params: dict, limit: int,
                key_of: Callable[[Any], tuple]) -> Page:
    """One page of the rows of a `keyset_statement` (or `keyset_union`) run with `params`;
    a position among them applies to every part, so one the list has left behind yields
    nothing."""
    rows = session_rows(session, statement, {**params, "count": limit + 1})
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

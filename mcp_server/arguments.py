"""The types of the tools' arguments: as strict as the REST parameters they stand for
(tests/mcp_server/test_strict.py holds each one to its parameter in the document).

A description is given with every argument where the tool declares it; the bounds and
value sets are here, once.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from edge.openapi import NUL_MESSAGE
from models.genres import GENRES


def _without_nul(value: str | None) -> str | None:
    """No id or text has a NUL character (%00); PostgreSQL refuses it in any lookup."""
    if value is not None and "\x00" in value:
        raise ValueError(NUL_MESSAGE)
    return value


def _text(max_length: int, *, min_length: int | None = None):
    """An optional string of at most `max_length` characters, without NUL."""
    return Annotated[str | None, Field(min_length=min_length, max_length=max_length),
                     AfterValidator(_without_nul)]


# The fixed genre list (models/genres.py, the document's `GenreName`): any other value is
# refused, not answered with an empty list.
GenreName = Literal[tuple(name for name, _group in GENRES)]

Id = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_without_nul)]
# A city or a country as the agenda spells it.
Place = _text(100)
# Free text over names and titles.
Words = _text(200, min_length=1)
# The id of a venue, artist or organisation to filter on.
Ref = _text(200)
Genre = GenreName | None
Price = Annotated[float | None, Field(ge=0, le=100_000)]
Limit = Annotated[int, Field(ge=1, le=100, description="Items per page, 1..100.")]
Cursor = Annotated[str | None, Field(
    min_length=1, max_length=1024, description="`meta.next_cursor` of the previous page, "
                                               "passed back unchanged; never built by hand."),
    AfterValidator(_without_nul)]
Weeks = Literal[1, 2, 4]
Country = Literal["NL", "BE"]
Sold = Annotated[int, Field(ge=0, le=10_000_000)]
TicketCode = Annotated[str, Field(min_length=1, max_length=2048)]
EventRef = Annotated[str | None, Field(min_length=1, max_length=200),
                     AfterValidator(_without_nul)]

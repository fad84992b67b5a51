"""Items serialized once per distinct value, shared by every list they appear in.

A page of a list is mostly the same few hundred items over and over: an event appears
in its city's list, its genre's, every date window around it, every radius search
nearby. `Fragments` keeps each item's JSON as its schema (marshmallow, the definition of
the output) dumped it, keyed by the item's whole value: an immutable value, such as the
named tuple `models.events.EventSummary`, whose fields hold everything the output shows,
the venue and organisation it embeds included. So a change to any of that (an event, its venue,
its organisation, its genres, by whatever writer) is a different key, and the next page
renders it anew: there is nothing to invalidate, and nothing stale to serve. Old values
age out of a bounded LRU.
"""

from __future__ import annotations

import collections
import dataclasses
import threading
from collections.abc import Sequence

import orjson
from marshmallow import Schema

from edge.answers import lasting
from openapi.schemas import site_url


@dataclasses.dataclass(frozen=True, slots=True)
class Serialized:
    """A list's items already serialized as one JSON array (the envelope's `data`)."""

    json: bytes
    count: int

    def __len__(self) -> int:
        return self.count


class Fragments:
    """`schema`'s output for items hashable by value, kept for the `size` most recent."""

    def __init__(self, schema: Schema, *, size: int):
        self.schema = schema
        self.size = size
        # Read and written by the handler threads of the process.
        self._lock = threading.Lock()
        self._kept: collections.OrderedDict[tuple, bytes] = collections.OrderedDict()

    def dump(self, items: Sequence) -> Serialized:
        """The items as one JSON array, each item's bytes rendered at most once per value."""
        # The links in an item name the site; a surface may set another (MCP's context).
        site = site_url()
        parts = []
        for item in items:
            key = (site, item)
            with self._lock:
                part = self._kept.get(key)
                if part is not None:
                    self._kept.move_to_end(key)
            if part is None:
                part = lasting(orjson.dumps(self.schema.dump(item)))
                with self._lock:
                    self._kept[key] = part
                    if len(self._kept) > self.size:
                        self._kept.popitem(last=False)
            parts.append(part)
        return Serialized(b"[" + b",".join(parts) + b"]", len(parts))

"""What the layers in front of the handlers know of one request, in one typed place.

The outermost layer (edge/middleware.py) makes it as the request arrives; every later
layer (the response cache, the door's lane, the MCP endpoint, Connexion's security
handler, the handlers' envelope) reads and fills the same object.
"""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from edge.admission import Admission
    from edge.limits import Figures
    from edge.routes import Gate

# The one key of the ASGI scope this service uses; only this module reads or writes it.
_KEY = "agenda"


@dataclasses.dataclass(slots=True)
class RequestState:
    """One request's id and arrival, and who was admitted for what (once, by whichever
    layer admitted it first)."""

    request_id: str
    started: float = dataclasses.field(default_factory=time.perf_counter)
    # The gate the request was admitted at and the outcome: an Admission, or the error
    # the request is refused with (raised again by a later layer that asks again).
    gate: Gate | None = None
    admission: Admission | Exception | None = None
    # Where the token's limits stand once the request was counted, refused or not: the
    # limit headers every answer to a token-authenticated request carries.
    figures: Figures | None = None
    # A public answer as the handler built it, for the response cache to keep.
    answer: PublicAnswer | None = None

    def attach(self, scope) -> dict:
        """`scope` carrying this state (a new scope; the old one is not changed)."""
        return {**scope, "extensions": {**scope.get("extensions", {}), _KEY: self}}

    @classmethod
    def of(cls, scope) -> RequestState:
        """The state of the request `scope` belongs to (one without, a fresh one: a request
        that did not come through the outermost layer, such as a test's)."""
        found = scope.get("extensions", {}).get(_KEY)
        return found if found is not None else cls(request_id="")

    def admitted(self) -> Admission | None:
        """The admission of an admitted request; None while not admitted, or refused."""
        return None if isinstance(self.admission, Exception) else self.admission

    def seconds(self) -> float:
        """Seconds since the request arrived."""
        return time.perf_counter() - self.started


@dataclasses.dataclass(frozen=True)
class PublicAnswer:
    """A public answer's parts, as the envelope serialized them (`data`, and `meta` without
    the request id): what the response cache keeps, so that serving it again does not
    depend on the body's byte layout."""

    data: bytes
    meta: bytes
    etag: str
    # What the handler built it from, where it can tell whether it would build the same
    # again (`models.paging.Page.basis`): a kept answer gone stale with a change to the
    # catalogue is then served again once that says so (edge/cache.py `revalidated_by`).
    basis: bytes | None = None

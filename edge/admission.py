"""Bearer authentication for the REST API, driven by the document's security requirements.

Connexion's own bearer handler drops an operation's scopes, so this handler
(registered through `security_map`) authenticates the live token, checks the
one scope the operation names, and counts the request against the token's limits.
"""

from __future__ import annotations

import dataclasses

from connexion.security import AbstractSecurityHandler

from edge.limits import Figures
from models import tokens
from models.errors import Forbidden, Unauthorized
from models.tokens import Caller


def bearer_handler(service):
    """A Connexion security handler class bound to one running service."""

    class BearerTokenHandler(AbstractSecurityHandler):
        """Checks `Authorization: Bearer svc_live_...` and the operation's scope."""

        def get_fn(self, security_scheme, required_scopes):
            needed = frozenset(required_scopes or ())

            async def verify(request):
                operation_id = request.scope["extensions"]["connexion_routing"]["operation_id"]
                route = service.routes[operation_id]
                shared = request.scope["extensions"]["agenda"]
                earlier = shared.pop("admitted", None)
                if earlier is not None and earlier.route == route and earlier.needed == needed:
                    # The response cache admitted this request already (edge/cache.py).
                    outcome = earlier.outcome
                    if isinstance(outcome, Exception):
                        raise outcome
                else:
                    outcome = await admitted(service, request.headers.get("authorization"),
                                             needed, route, client_address(request.scope))
                shared["admission"] = outcome
                shared["ratelimit"] = outcome.figures.headers()
                return {"sub": outcome.caller.token_id, "caller": outcome.caller}

            return verify

    return BearerTokenHandler


@dataclasses.dataclass(frozen=True)
class Admission:
    """An admitted request: who calls, where its limits stand, and what the response
    cache keys on (the catalogue stamp read with the token, the clock hour)."""

    caller: Caller
    figures: Figures
    stamp: str
    hour: int


@dataclasses.dataclass(frozen=True)
class Admitted:
    """What the response cache hands on to the security handler: the outcome of admitting
    this request for `route` with `needed` scopes, an `Admission` or the error to raise."""

    route: str
    needed: frozenset[str]
    outcome: Admission | Exception


def admit(service, header: str | None, needed: frozenset[str], route: str,
          address: str) -> Admission:
    """Authenticate, check the scope, count the request: in a worker thread (database, Redis)."""
    try:
        token = bearer_token(header)
        caller, stamp = tokens.authenticate_with_stamp(service.direct, token, service.watch)
    except Unauthorized:
        # Guessing tokens is slow: failed attempts are limited per client address.
        service.usage.refuse_unauthenticated(address)
        raise
    _check_scope(caller, needed)
    return _admission(service, caller, service.usage.hit(caller, route), stamp)


async def admitted(service, header: str | None, needed: frozenset[str], route: str,
                   address: str) -> Admission:
    """The request admitted the cheapest way there is for it: a token this process knows
    (models/watch.py), counted in memory or with one round trip to Redis, on the event
    loop; any other on the admission threads (`admit`)."""
    found = _known(service, header) if service.usage.counts_on_loop else None
    if found is None:
        return await service.admitting(admit, service, header, needed, route, address)
    caller, stamp = found
    _check_scope(caller, needed)
    return _admission(service, caller, await service.usage.hit_async(caller, route), stamp)


def _known(service, header: str | None) -> tuple[Caller, str] | None:
    try:
        return tokens.known(service.watch, bearer_token(header))
    except Unauthorized:
        return None


def _check_scope(caller: Caller, needed: frozenset[str]) -> None:
    missing = needed - caller.scopes
    if missing:
        scope = " ".join(sorted(missing))
        raise Forbidden(f"This token lacks the scope {scope!r} that this endpoint needs.",
                        headers={"WWW-Authenticate":
                                 f'Bearer error="insufficient_scope", scope="{scope}"'})


def _admission(service, caller: Caller, figures: Figures, stamp: str) -> Admission:
    return Admission(caller, figures, stamp, int(service.usage.clock() // 3600))


def client_address(scope) -> str:
    """The client's address (the connecting peer; no proxy headers are trusted)."""
    client = scope.get("client")
    return client[0] if client else "unknown"


def bearer_token(header: str | None) -> str:
    """The token of an `Authorization: Bearer <token>` header."""
    if not header:
        raise Unauthorized("The Authorization header with a bearer token is missing.")
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        raise Unauthorized("The Authorization header must be 'Bearer <token>'.",
                           headers={"WWW-Authenticate": 'Bearer error="invalid_request"'})
    return token

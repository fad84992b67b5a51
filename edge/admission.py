"""Admission: token -> caller -> limits -> usage -> scope, one function for every surface.

The full path (Connexion's security handler, registered through `security_map`,
since Connexion's own bearer handler drops an operation's scopes), the response
cache, the door's lane and the MCP endpoint all admit a request with `admit`, once:
the outcome is kept on the request's state (edge/state.py), and a later layer asking
again for the same gate gets it (an error raised again), so nothing is counted twice.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable

from connexion.security import AbstractSecurityHandler

from edge.limits import Figures
from edge.problems import database_unavailable
from edge.routes import Gate
from edge.state import RequestState
from models import tokens
from models.errors import ScopeMissing, ServiceUnavailable, Unauthorized
from models.tokens import Caller

log = logging.getLogger("agenda.errors")

@dataclasses.dataclass(frozen=True)
class Admission:
    """An admitted request: who calls, where its limits stand, and what the response
    cache keys on (the catalogue stamp read with the token, the clock hour). `who` is what
    the surface's authenticator found (MCP's `Identity`; the caller itself on REST)."""

    caller: Caller
    figures: Figures
    stamp: str
    hour: int
    who: object = None
    # The stamp is what this process knows (adapters/watch.py), not read with the token: a
    # change committed elsewhere a moment ago may not have reached it (`confirmed_stamp`).
    known: bool = False


# A surface's own token lookup, run on an admission thread: (caller, stamp, who).
Authenticator = Callable[[str], tuple[Caller, str, object]]


async def admit(service, state: RequestState, gate: Gate, header: str | None,
                address: str, authenticate: Authenticator | None = None) -> Admission:
    """Admit the request at `gate` the cheapest way there is for it, once (see the module's
    text). Live API tokens by default; a surface with other tokens (MCP) passes its own
    `authenticate`. A token this process knows (adapters/watch.py) is counted on the event
    loop, in memory or with one round trip to Redis; any other on the admission threads."""
    if state.gate == gate and state.admission is not None:
        if isinstance(state.admission, Exception):
            raise state.admission
        return state.admission
    state.gate = gate
    try:
        found = (_known(service, header) if authenticate is None
                 and service.usage.counts_on_loop else None)
        if found is None:
            admission = await _within_deadline(service, service.admitting(
                _admit, service, gate, header, address, authenticate))
        else:
            caller, stamp = found
            admission = _admission(service, caller, stamp, caller,
                                   await service.usage.hit_async(caller, gate.route), known=True)
        # Counted: every answer to it carries its limit headers from here on, a refusal
        # for a missing scope too (edge/middleware.py).
        state.figures = admission.figures
        _check_scope(admission.caller, gate.needed)
    except Exception as error:
        state.admission = error
        raise
    state.admission = admission
    return admission


async def _within_deadline(service, admitting):
    """`admitting` (work on the admission threads), or a 503 once it waited longer than a
    statement may take (a frozen database holds the thread, and requests queued behind it
    would otherwise wait one deadline each) or the database cannot be reached: the same
    `ServiceUnavailable` for every surface that admits."""
    try:
        async with asyncio.timeout(service.settings.statement_timeout_ms / 1000):
            return await admitting
    except TimeoutError:
        raise ServiceUnavailable() from None
    except Exception as error:
        if not database_unavailable(error):
            raise
        log.error("database unavailable while admitting: %s", error.__class__.__name__)
        raise ServiceUnavailable() from error


def _admit(service, gate: Gate, header: str | None, address: str,
           authenticate: Authenticator | None) -> Admission:
    """`admit`'s work on an admission thread (database, Redis). A live token the watch knows
    (learnt since the event loop looked, or counted here) is admitted under the stamp the
    watch knows, confirmed before a kept answer is served (`confirmed_stamp`); any other is
    read, with the database's stamp."""
    found = None
    try:
        token = bearer_token(header)
        if authenticate is None:
            found = tokens.known(service.watch, token)
            caller, stamp = found or tokens.authenticate_with_stamp(
                service.direct, token, service.watch, read=True)
            who = caller
        else:
            caller, stamp, who = authenticate(token)
    except Unauthorized:
        # Guessing tokens is slow: failed attempts are limited per client address.
        service.usage.refuse_unauthenticated(address)
        raise
    return _admission(service, caller, stamp, who, service.usage.hit(caller, gate.route),
                      known=found is not None)


def _known(service, header: str | None) -> tuple[Caller, str] | None:
    try:
        return tokens.known(service.watch, bearer_token(header))
    except Unauthorized:
        return None


def _check_scope(caller: Caller, needed: frozenset[str]) -> None:
    missing = needed - caller.scopes
    if missing:
        scope = " ".join(sorted(missing))
        raise ScopeMissing(scope, f"This token lacks the scope {scope!r} that this endpoint "
                                  f"needs.")


def _admission(service, caller: Caller, stamp: str, who, figures: Figures, *,
               known: bool = False) -> Admission:
    return Admission(caller, figures, stamp, int(service.usage.clock() // 3600), who, known)


class CurrentStamp:
    """The catalogue stamp as committed now, for requests about to be answered with what
    was kept under the stamp this process knows (the watch learns of a change committed
    elsewhere by a notification, a moment after its commit; the answer must not come
    first). A read serves every request that was waiting when it began, so under load it is
    one round trip for many; a request arriving during a read waits for the next one.
    A read begins after the loop's turn in which it was first asked for: requests that
    arrived together share it, rather than all but the first waiting for a second.
    Every request waiting for a read is failed with a TimeoutError once `seconds` passed
    since the first of them asked (a database that does not answer): one timer a read, not
    one a request (`asyncio.timeout` was ~5% of a kept answer's time on the event loop)."""

    def __init__(self, source, seconds: float):
        # `await source.value()` reads it, on the event loop (adapters/direct.py
        # `KeptStatement`); `source.close()` lets its connection go.
        self._source = source
        self._seconds = seconds
        self._next: asyncio.Future | None = None
        self._reading = False

    def close(self) -> None:
        self._source.close()

    async def read(self) -> str:
        waiting = self._next
        if waiting is None:
            loop = asyncio.get_running_loop()
            waiting = self._next = loop.create_future()
            timer = loop.call_later(self._seconds, self._expire, waiting)

            def settled(read: asyncio.Future) -> None:
                timer.cancel()
                if not read.cancelled():
                    read.exception()  # retrieved even when every waiting request gave up

            waiting.add_done_callback(settled)
            if not self._reading:
                # Begun once the requests already ready to run on the loop (those that
                # arrived with this one) have asked too: one read for all of them.
                self._reading = True
                loop.call_soon(self._begin)
        return await asyncio.shield(waiting)

    def _begin(self) -> None:
        waiting, self._next = self._next, None
        self._reading = waiting is not None
        if waiting is None:  # expired before it began
            return

        def done(task: asyncio.Future) -> None:
            self._reading = False
            if waiting.done():  # expired: its requests were answered without it
                if not task.cancelled():
                    task.exception()  # retrieved, not logged as forgotten
            elif task.cancelled():
                waiting.cancel()
            elif task.exception() is not None:
                waiting.set_exception(task.exception())
            else:
                waiting.set_result(task.result())
            if self._next is not None:
                self._begin()

        asyncio.ensure_future(self._source.value()).add_done_callback(done)

    def _expire(self, waiting: asyncio.Future) -> None:
        if self._next is waiting:  # not begun: requests arriving from now on wait anew
            self._next = None
        if not waiting.done():
            waiting.set_exception(TimeoutError("the catalogue stamp was not read in time"))


async def confirmed_stamp(service, admission: Admission) -> str | None:
    """The stamp `admission` may serve kept answers under: its own when read with its token,
    else the current one; None when the database cannot say (within a statement's time)."""
    if not admission.known or service.current_stamp is None:
        return admission.stamp
    try:
        return await service.current_stamp.read()
    except Exception as error:  # noqa: BLE001 - not confirmed: the answer is built instead
        log.error("catalogue stamp unread: %s", error.__class__.__name__)
        return None


def client_address(scope) -> str:
    """The client's address (the connecting peer; no proxy headers are trusted)."""
    client = scope.get("client")
    return client[0] if client else "unknown"


def authorization(scope) -> str | None:
    """The request's Authorization header, if any."""
    for name, value in scope["headers"]:
        if name == b"authorization":
            return value.decode("latin-1")
    return None


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


def bearer_handler(service):
    """A Connexion security handler class bound to one running service."""

    class BearerTokenHandler(AbstractSecurityHandler):
        """Checks `Authorization: Bearer svc_live_...` and the operation's scope."""

        def get_fn(self, security_scheme, required_scopes):
            async def verify(request):
                operation = service.routes.named(
                    request.scope["extensions"]["connexion_routing"]["operation_id"])
                admission = await admit(
                    service, RequestState.of(request.scope), operation.gate,
                    request.headers.get("authorization"), client_address(request.scope))
                return {"sub": admission.caller.token_id, "caller": admission.caller}

            return verify

    return BearerTokenHandler

"""What a request handler can reach: the settings, its database session, caller and id.

The request's unit of work (models/unit_of_work.py) opens its session on first
use and commits it once after the handler returned a non-error response (or an
error that called `keep_on_error`); anything else rolls it back. Domain code calls
`flush()`, never `commit()`.

A handler runs either inside Flask (the full way) or, for a public catalogue answer,
called by the response cache before the framework (`lane`, edge/cache.py): the same
function, reaching the same things through this module.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses

from connexion.context import _operation, context
from flask import current_app, g, request

from edge.state import RequestState
from models.errors import NotFound
from models.tokens import Caller
from models.unit_of_work import UnitOfWork

# Flask endpoints and blueprints outside the OpenAPI document (served at the site root).
SITE_ENDPOINTS = {"healthz"}
SITE_BLUEPRINTS = {"oauth", "pages", "portal"}


@dataclasses.dataclass(slots=True)
class _Lane:
    """A request a handler answers before the framework: its service, state and unit."""

    service: object
    state: RequestState
    unit: UnitOfWork | None = None


_lane: contextvars.ContextVar[_Lane | None] = contextvars.ContextVar("agenda_lane", default=None)


@contextlib.contextmanager
def lane(running_service, request_state: RequestState):
    """Run a handler outside Flask for the request of `request_state` (already admitted);
    its unit of work is closed after it, nothing committed (a public answer only reads)."""
    bound = _Lane(running_service, request_state)
    token = _lane.set(bound)
    try:
        yield
    finally:
        _lane.reset(token)
        if bound.unit is not None:
            bound.unit.close(commit=False)


def service():
    """The running service (settings, database, counters) of this Flask app."""
    bound = _lane.get()
    return bound.service if bound is not None else current_app.extensions["agenda"]


def settings():
    """The settings of the running service."""
    return service().settings


def unit() -> UnitOfWork:
    """The request's unit of work (models/unit_of_work.py)."""
    bound = _lane.get()
    if bound is not None:
        if bound.unit is None:
            bound.unit = UnitOfWork(bound.service.reads)
        return bound.unit
    if "unit" not in g:
        g.unit = UnitOfWork(service().sessions)
    return g.unit


def session():
    """The request's database session, opened on first use."""
    return unit().session


def caller() -> Caller:
    """The authenticated caller (set by the bearer security handler)."""
    bound = _lane.get()
    if bound is not None:
        return bound.state.admitted().caller
    return context["token_info"]["caller"]


def keep_on_error() -> None:
    """Commit this request's session even though its answer is an error: for what a failed
    request must leave behind (a replayed OAuth code revokes its family, then fails)."""
    g.keep_on_error = True


def request_id() -> str:
    """The id of this request (also sent as X-Request-Id)."""
    bound = _lane.get()
    if bound is not None:
        return bound.state.request_id
    return request.headers.get("X-Request-Id", "")


def state() -> RequestState:
    """What the layers in front of the handler know of this request (edge/state.py)."""
    bound = _lane.get()
    if bound is not None:
        return bound.state
    return RequestState.of(request.environ.get("asgi.scope", {}))


def before_framework() -> bool:
    """Whether the handler answers before the framework (`lane`): the response cache then
    answers from `state().answer`, and no framework response is made."""
    return _lane.get() is not None


def if_none_match() -> str:
    """The request's If-None-Match (none before the framework: the response cache compares
    it with the answer it is given, edge/cache.py)."""
    return "" if _lane.get() is not None else request.headers.get("If-None-Match", "")


def seconds_since_arrival() -> float:
    """How long ago this request arrived (edge/middleware.py), in seconds."""
    return state().seconds()


def holds_nul(*, form: bool = True) -> bool:
    """Whether the request's path, query, Basic credentials or (with `form`) form hold a NUL
    character (%00). No page, OAuth parameter or address takes one and PostgreSQL refuses it
    in any text it compares, so the site's blueprints refuse such a request first, each in
    its own kind of answer (the API's parameters are checked against the document)."""
    texts = [request.path, *(value for _key, value in request.args.items(multi=True))]
    if form and request.method == "POST":
        texts += [value for _key, value in request.form.items(multi=True)]
    credentials = request.authorization
    if credentials is not None and credentials.type == "basic":
        texts += [credentials.username or "", credentials.password or ""]
    return any("\x00" in text for text in texts)


def install(flask_app) -> None:
    """Commit or roll back the request's session around each request."""

    @flask_app.before_request
    def _only_routed_requests():
        # A path Connexion's router did not match (odd characters in an id) must not
        # reach a handler through Flask's own, more lenient, router.
        if (request.endpoint not in SITE_ENDPOINTS and request.blueprint not in SITE_BLUEPRINTS
                and _operation.get(None) is None):
            raise NotFound()

    @flask_app.after_request
    def _commit(response):
        # Also set here (not only by the outer middleware) so response validation sees it.
        response.headers["X-Request-Id"] = request_id()
        request_unit = g.pop("unit", None)
        if request_unit is not None:
            request_unit.close(commit=response.status_code < 400 or g.get("keep_on_error", False))
        return response

    @flask_app.teardown_request
    def _close(_exc):
        # A request that failed before its answer: nothing it did is kept.
        request_unit = g.pop("unit", None)
        if request_unit is not None:
            request_unit.close(commit=False)

"""The error envelope: the one place that turns every failure into a response.

`KINDS` is the one table of error kinds: the HTTP status and `error.code` of each domain
error (`models.errors`) and of each transport error (defined here: a method, media type or
body size refused before any domain code runs).

Registered on the Connexion app, so errors raised in Connexion's middleware
(routing, security, validation) get the same body as errors raised in handlers.
"""

from __future__ import annotations

import logging
import re

import orjson
from connexion.exceptions import (
    BadRequestProblem,
    NonConformingResponse,
    ProblemException,
    UnsupportedMediaTypeProblem,
)
from connexion.lifecycle import ConnexionRequest, ConnexionResponse
from sqlalchemy.exc import DataError, DBAPIError, OperationalError
from starlette.exceptions import HTTPException

from models import errors

log = logging.getLogger("agenda.errors")

DATABASE_RETRY_AFTER = 5


class TransportError(Exception):
    """A request refused for how it came (method, media type, size), before any domain code."""

    default_message = "The request failed."

    def __init__(self, message: str | None = None, *, headers: dict | None = None):
        super().__init__(message or self.default_message)
        self.message = message or self.default_message
        self.headers = headers or {}


class MethodNotAllowed(TransportError):
    """The path exists but not with this method."""

    default_message = "This method is not allowed on this path."


class NotAcceptable(TransportError):
    """The client accepts no media type this service produces."""

    default_message = "This service answers with application/json only."


class PayloadTooLarge(TransportError):
    """The request body is over the size cap."""

    default_message = "The request body is too large."


class UnsupportedMediaType(TransportError):
    """The request body is not of a media type the operation accepts."""

    default_message = "The request body must be application/json."


# The one table of error kinds: each one's HTTP status and `error.code`. A kind not listed
# answers as its nearest listed base class.
KINDS: dict[type[Exception], tuple[int, str]] = {
    errors.BadRequest: (400, "bad_request"),
    errors.Unauthorized: (401, "unauthorized"),
    errors.Forbidden: (403, "forbidden"),
    # The specification's code on REST; MCP names it as RFC 6750 does (mcp_server/endpoint.py).
    errors.ScopeMissing: (403, "forbidden"),
    errors.NotFound: (404, "not_found"),
    MethodNotAllowed: (405, "method_not_allowed"),
    NotAcceptable: (406, "not_acceptable"),
    errors.Conflict: (409, "conflict"),
    PayloadTooLarge: (413, "payload_too_large"),
    UnsupportedMediaType: (415, "unsupported_media_type"),
    errors.RateLimited: (429, "rate_limited"),
    errors.NotImplementedYet: (501, "not_implemented"),
    errors.ServiceUnavailable: (503, "service_unavailable"),
    errors.DomainError: (500, "internal_error"),
    TransportError: (400, "bad_request"),
}
# The code of an answer known only by its status (Connexion's, Starlette's, the raw ASGI
# layers'): that of the first kind listed with the status.
CODES: dict[int, str] = dict(reversed(KINDS.values()))


def status_of(error: errors.DomainError | TransportError) -> tuple[int, str]:
    """The HTTP status and `error.code` that answer `error`, by its kind."""
    return next(KINDS[kind] for kind in type(error).__mro__ if kind in KINDS)


def headers_of(error: errors.DomainError | TransportError) -> dict[str, str]:
    """The headers an answer to `error` carries on every surface: its own (a challenge, a
    limit's Retry-After), and Retry-After on every 503 (a database that does not answer)."""
    headers = dict(error.headers)
    if status_of(error)[0] == 503:
        headers.setdefault("Retry-After", str(DATABASE_RETRY_AFTER))
    return headers


# The domain's field names that the REST API's query strings spell otherwise (GET /events).
QUERY_NAMES = {"date_from": "from", "date_to": "to"}
_QUERY_NAMED = re.compile(r"\b(?:{})\b".format("|".join(map(re.escape, QUERY_NAMES))))


def rest_params(params: list[dict]) -> list[dict]:
    """The bad fields of a 400 named as the REST caller knows them, in messages too."""
    return [{**param, "name": QUERY_NAMES.get(param["name"], param["name"]),
             "message": _QUERY_NAMED.sub(lambda named: QUERY_NAMES[named[0]], param["message"])}
            if param.get("in") == "query" else param for param in params]


def error_body(status: int, message: str, request_id: str, *, code: str | None = None,
               details: dict | None = None) -> bytes:
    """The serialized error envelope."""
    return orjson.dumps({
        "error": {"code": code or CODES.get(status, "internal_error"), "message": message,
                  "details": details or {}},
        "meta": {"request_id": request_id},
    })


def request_id_of(request: ConnexionRequest) -> str:
    """The id the request middleware put on this request."""
    return request.headers.get("x-request-id", "")


class ErrorHandlers:
    """Connexion error handlers; `allowed_methods` answers 405s with a correct `Allow`."""

    def __init__(self, allowed_methods):
        self.allowed_methods = allowed_methods

    def install(self, app) -> None:
        """Register every handler on the Connexion app."""
        app.add_error_handler(errors.DomainError, self.answer)
        app.add_error_handler(TransportError, self.answer)
        app.add_error_handler(ProblemException, self.connexion_problem)
        app.add_error_handler(HTTPException, self.http_exception)
        app.add_error_handler(Exception, self.unexpected)

    def respond(self, request, status: int, message: str, *, code: str | None = None,
                details: dict | None = None, headers: dict | None = None) -> ConnexionResponse:
        """A response carrying the error envelope."""
        request_id = request_id_of(request)
        all_headers = {"Cache-Control": "no-store", **(headers or {})}
        if status == 401 and "WWW-Authenticate" not in all_headers:
            all_headers["WWW-Authenticate"] = "Bearer"
        return ConnexionResponse(
            status_code=status, mimetype="application/json", content_type="application/json",
            body=error_body(status, message, request_id, code=code, details=details),
            headers=all_headers,
        )

    def answer(self, request, exc: errors.DomainError | TransportError) -> ConnexionResponse:
        """Errors raised on purpose, answered with the status and code of their kind."""
        status, code = status_of(exc)
        headers = headers_of(exc)
        if isinstance(exc, errors.ScopeMissing):
            headers["WWW-Authenticate"] = f'Bearer error="insufficient_scope", scope="{exc.scope}"'
        if isinstance(exc, MethodNotAllowed):
            headers["Allow"] = ", ".join(self.allowed_methods(request.url.path))
        details = ({"params": rest_params(exc.params)} if isinstance(exc, errors.BadRequest)
                   else exc.details if isinstance(exc, errors.RateLimited) else None)
        return self.respond(request, status, exc.message, code=code, details=details,
                            headers=headers)

    def connexion_problem(self, request, exc: ProblemException) -> ConnexionResponse:
        """Problems raised inside Connexion (body required, media type, resolver, ...)."""
        if isinstance(exc, NonConformingResponse):
            log.error("response does not conform to the document: %s (request %s)",
                      exc.detail, request_id_of(request))
            return self.answer(request, errors.DomainError())
        if isinstance(exc, UnsupportedMediaTypeProblem):
            return self.answer(request, UnsupportedMediaType(
                headers={"Accept": "application/json"}))
        if isinstance(exc, BadRequestProblem) or exc.status == 400:
            return self.answer(request, errors.BadRequest(
                [{"name": "body", "in": "body", "message": _plain(exc.detail)}],
                "The request is not valid."))
        if exc.status == 401:
            return self.answer(request, errors.Unauthorized())
        if exc.status == 403:
            return self.answer(request, errors.Forbidden())
        if exc.status == 501:
            return self.answer(request, errors.NotImplementedYet())
        if exc.status >= 500:
            log.error("%r (request %s)", exc, request_id_of(request))
            return self.respond(request, exc.status, errors.DomainError.default_message)
        return self.respond(request, exc.status, _plain(exc.detail) or "The request failed.")

    def http_exception(self, request, exc: HTTPException) -> ConnexionResponse:
        """Starlette's routing errors: unknown path (404), wrong method (405)."""
        if exc.status_code == 404:
            return self.answer(request, errors.NotFound())
        if exc.status_code == 405:
            return self.answer(request, MethodNotAllowed())
        return self.respond(request, exc.status_code, _plain(exc.detail) or "The request failed.")

    def unexpected(self, request, exc: Exception) -> ConnexionResponse:
        """Anything else: logged with the request id, answered without internals."""
        if isinstance(exc, DataError) and "NUL" in str(exc.orig):
            # PostgreSQL stores no NUL character in text; no field of this service takes one.
            return self.respond(request, 400, "The request contains a NUL character (%00), "
                                              "which no field accepts.")
        if database_unavailable(exc):
            log.error("database unavailable (request %s): %s", request_id_of(request),
                      exc.__class__.__name__)
            return self.answer(request, errors.ServiceUnavailable())
        log.error("unexpected error (request %s)", request_id_of(request), exc_info=exc)
        return self.answer(request, errors.DomainError())


def database_unavailable(exc: Exception) -> bool:
    """Whether `exc` means the database cannot be reached in time (a 503, not a fault)."""
    return isinstance(exc, (OperationalError, DBAPIError)) and _is_connection_error(exc)


def _is_connection_error(exc: DBAPIError) -> bool:
    """Whether a database error means the database cannot be reached (or is locked)."""
    return bool(exc.connection_invalidated) or isinstance(exc, OperationalError)


def _plain(detail) -> str:
    """A Connexion detail as one short sentence, without schema dumps."""
    text = str(detail or "").strip().splitlines()[0] if detail else ""
    return re.sub(r"\s+", " ", text)[:200]

"""The error envelope: the one place that turns every failure into a response.

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

CODES = {
    400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
    405: "method_not_allowed", 406: "not_acceptable", 409: "conflict",
    413: "payload_too_large", 415: "unsupported_media_type", 429: "rate_limited",
    500: "internal_error", 501: "not_implemented", 503: "service_unavailable",
}
MESSAGES = {
    404: "No such resource.",
    405: "This method is not allowed on this path.",
}
DATABASE_RETRY_AFTER = 5


class TransportError(Exception):
    """A request refused for how it came (method, media type, size), before any domain code."""

    status_code = 400
    code = "bad_request"
    default_message = "The request failed."

    def __init__(self, message: str | None = None, *, headers: dict | None = None):
        super().__init__(message or self.default_message)
        self.message = message or self.default_message
        self.headers = headers or {}


class MethodNotAllowed(TransportError):
    """The path exists but not with this method."""

    status_code = 405
    code = "method_not_allowed"
    default_message = "This method is not allowed on this path."


class NotAcceptable(TransportError):
    """The client accepts no media type this service produces."""

    status_code = 406
    code = "not_acceptable"
    default_message = "This service answers with application/json only."


class PayloadTooLarge(TransportError):
    """The request body is over the size cap."""

    status_code = 413
    code = "payload_too_large"
    default_message = "The request body is too large."


class UnsupportedMediaType(TransportError):
    """The request body is not of a media type the operation accepts."""

    status_code = 415
    code = "unsupported_media_type"
    default_message = "The request body must be application/json."


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
        app.add_error_handler(errors.DomainError, self.domain_error)
        app.add_error_handler(TransportError, self.transport_error)
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

    def domain_error(self, request, exc: errors.DomainError) -> ConnexionResponse:
        """Errors the service raises on purpose."""
        headers = dict(exc.headers)
        if isinstance(exc, errors.BadRequest):
            return self.respond(request, 400, exc.message, details={"params": exc.params})
        return self.respond(request, exc.status_code, exc.message, code=exc.code,
                            details=exc.details, headers=headers)

    def transport_error(self, request, exc: TransportError) -> ConnexionResponse:
        """Requests refused for how they came (a body over the cap read inside Connexion)."""
        headers = dict(exc.headers)
        if isinstance(exc, MethodNotAllowed):
            headers["Allow"] = ", ".join(self.allowed_methods(request.url.path))
        return self.respond(request, exc.status_code, exc.message, code=exc.code,
                            headers=headers)

    def connexion_problem(self, request, exc: ProblemException) -> ConnexionResponse:
        """Problems raised inside Connexion (body required, media type, resolver, ...)."""
        if isinstance(exc, NonConformingResponse):
            log.error("response does not conform to the document: %s (request %s)",
                      exc.detail, request_id_of(request))
            return self.respond(request, 500, errors.DomainError.default_message)
        if isinstance(exc, UnsupportedMediaTypeProblem):
            return self.respond(request, 415, UnsupportedMediaType.default_message,
                                headers={"Accept": "application/json"})
        if isinstance(exc, BadRequestProblem) or exc.status == 400:
            return self.respond(request, 400, "The request is not valid.", details={
                "params": [{"name": "body", "in": "body", "message": _plain(exc.detail)}]})
        if exc.status == 401:
            return self.respond(request, 401, errors.Unauthorized.default_message)
        if exc.status == 403:
            return self.respond(request, 403, errors.Forbidden.default_message)
        if exc.status == 501:
            return self.respond(request, 501, errors.NotImplementedYet.default_message)
        if exc.status >= 500:
            log.error("%r (request %s)", exc, request_id_of(request))
            return self.respond(request, exc.status, errors.DomainError.default_message)
        return self.respond(request, exc.status, _plain(exc.detail) or "The request failed.")

    def http_exception(self, request, exc: HTTPException) -> ConnexionResponse:
        """Starlette's routing errors: unknown path (404), wrong method (405)."""
        headers = {}
        if exc.status_code == 405:
            headers["Allow"] = ", ".join(self.allowed_methods(request.url.path))
        message = MESSAGES.get(exc.status_code) or _plain(exc.detail) or "The request failed."
        return self.respond(request, exc.status_code, message, headers=headers)

    def unexpected(self, request, exc: Exception) -> ConnexionResponse:
        """Anything else: logged with the request id, answered without internals."""
        if isinstance(exc, DataError) and "NUL" in str(exc.orig):
            # PostgreSQL stores no NUL character in text; no field of this service takes one.
            return self.respond(request, 400, "The request contains a NUL character (%00), "
                                              "which no field accepts.")
        if isinstance(exc, (OperationalError, DBAPIError)) and _is_connection_error(exc):
            log.error("database unavailable (request %s): %s", request_id_of(request),
                      exc.__class__.__name__)
            return self.respond(request, 503, errors.ServiceUnavailable.default_message,
                                headers={"Retry-After": str(DATABASE_RETRY_AFTER)})
        log.error("unexpected error (request %s)", request_id_of(request), exc_info=exc)
        return self.respond(request, 500, errors.DomainError.default_message)


def _is_connection_error(exc: DBAPIError) -> bool:
    """Whether a database error means the database cannot be reached (or is locked)."""
    return bool(exc.connection_invalidated) or isinstance(exc, OperationalError)


def _plain(detail) -> str:
    """A Connexion detail as one short sentence, without schema dumps."""
    text = str(detail or "").strip().splitlines()[0] if detail else ""
    return re.sub(r"\s+", " ", text)[:200]

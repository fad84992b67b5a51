"""The domain's errors; one handler in `edge.problems` turns each into the error envelope."""

from __future__ import annotations


class DomainError(Exception):
    """Base of every error the service answers on purpose; `status_code` is its HTTP status."""

    status_code = 500
    code = "internal_error"
    default_message = "The server failed to answer this request."

    def __init__(self, message: str | None = None, *, details: dict | None = None,
                 headers: dict | None = None):
        super().__init__(message or self.default_message)
        self.message = message or self.default_message
        self.details = details or {}
        self.headers = headers or {}


class BadRequest(DomainError):
    """The request is wrong; `params` names every bad parameter."""

    status_code = 400
    code = "bad_request"
    default_message = "The request has invalid parameters."

    def __init__(self, params: list[dict], message: str | None = None):
        super().__init__(message, details={"params": params})
        self.params = params


class Unauthorized(DomainError):
    """No token, or an unknown or revoked one."""

    status_code = 401
    code = "unauthorized"
    default_message = "A valid bearer token is required."


class Forbidden(DomainError):
    """The token is valid but may not do this."""

    status_code = 403
    code = "forbidden"
    default_message = "This token may not use this endpoint."


class NotFound(DomainError):
    """No such resource (or one the caller must not know exists)."""

    status_code = 404
    code = "not_found"
    default_message = "No such resource."

    def __init__(self, kind: str = "resource", key: str | None = None, *,
                 message: str | None = None):
        if message is None:
            message = f"No {kind} with id {key!r}." if key is not None else f"No such {kind}."
        super().__init__(message)


class Conflict(DomainError):
    """The request conflicts with the state of the resource."""

    status_code = 409
    code = "conflict"
    default_message = "The request conflicts with the current state of the resource."


class RateLimited(DomainError):
    """Over the per-minute limit or the daily quota."""

    status_code = 429
    code = "rate_limited"
    default_message = "Too many requests."


class NotImplementedYet(DomainError):
    """An operation that is declared but not built yet."""

    status_code = 501
    code = "not_implemented"
    default_message = "This operation is not implemented yet."


class ServiceUnavailable(DomainError):
    """A dependency (the database) does not answer; try again shortly."""

    status_code = 503
    code = "service_unavailable"
    default_message = "The service is temporarily unavailable."

"""The domain's errors: each class is a kind of failure, carrying a message and, where there
is one, the fields it concerns.

They name no transport. `edge.problems` maps each kind to a REST answer, `mcp_server.tools`
to a tool error; each surface names the fields as its caller knows them.
"""

from __future__ import annotations


class DomainError(Exception):
    """Base of every error the service raises on purpose; the class is the error's kind."""

    default_message = "The server failed to answer this request."

    def __init__(self, message: str | None = None, *, params: list[dict] | None = None,
                 headers: dict | None = None):
        super().__init__(message or self.default_message)
        self.message = message or self.default_message
        # The fields concerned, as the domain names them: {"name", "in", "message"} each.
        self.params = params or []
        # Set only by the edge when it raises one (an authentication challenge, Retry-After).
        self.headers = headers or {}


class BadRequest(DomainError):
    """The request is wrong; `params` names every bad field."""

    default_message = "The request has invalid parameters."

    def __init__(self, params: list[dict], message: str | None = None):
        super().__init__(message, params=params)


class Unauthorized(DomainError):
    """No token, or an unknown or revoked one."""

    default_message = "A valid bearer token is required."


class Forbidden(DomainError):
    """The token is valid but may not do this."""

    default_message = "This token may not use this endpoint."


class ScopeMissing(Forbidden):
    """A valid token asking for what its scopes do not allow; `scope` is the one it needs."""

    def __init__(self, scope: str, message: str):
        super().__init__(message)
        self.scope = scope


class NotFound(DomainError):
    """No such resource (or one the caller must not know exists)."""

    default_message = "No such resource."

    def __init__(self, kind: str = "resource", key: str | None = None, *,
                 message: str | None = None):
        if message is None:
            message = f"No {kind} with id {key!r}." if key is not None else f"No such {kind}."
        super().__init__(message)


class Conflict(DomainError):
    """The request conflicts with the state of the resource."""

    default_message = "The request conflicts with the current state of the resource."


class RateLimited(DomainError):
    """Over a limit: `details` names the window that refused (`window`, its `limit`) and when
    it opens again (`reset`, Unix seconds; `retry_after`, seconds)."""

    default_message = "Too many requests."

    def __init__(self, message: str | None = None, *, headers: dict | None = None,
                 details: dict | None = None):
        super().__init__(message, headers=headers)
        self.details = details or {}


class NotImplementedYet(DomainError):
    """An operation that is declared but not built yet."""

    default_message = "This operation is not implemented yet."


class ServiceUnavailable(DomainError):
    """A dependency (the database) does not answer; try again shortly."""

    default_message = "The service is temporarily unavailable."

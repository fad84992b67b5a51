"""The outermost ASGI layer: the request's state and id, access log, body cap, Accept
check, the address limit of the REST operations that need no token, and what every
answer carries (X-Request-Id, the limit headers of an admitted
request; a 304's day given back)."""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable
from urllib.parse import quote

import orjson

from edge import answers
from edge.admission import client_address
from edge.conditional import refund_revalidation
from edge.problems import PayloadTooLarge
from edge.state import RequestState
from models.errors import RateLimited

log = logging.getLogger("agenda.access")
JSON_RANGES = ("*/*", "application/*", "application/json")
# The paths, beside the API's, whose requests are read with their Authorization header, and
# among them those that answer errors as RFC 6749 JSON.
MCP_PATH = "/mcp"
OAUTH_JSON_PATHS = frozenset({"/oauth/token", "/oauth/revoke", "/oauth/register"})


def loggable(text: str) -> str:
    """`text` with control and other unprintable characters escaped (`\\x0a`), so that a
    request cannot write a line of its own into the log."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else
                   char.encode("unicode_escape").decode("ascii") for char in text)


def _logged(line: str) -> None:
    log.info("%s", line)


def _well_formed(value: str) -> bool:
    """An incoming X-Request-Id is echoed only when it is a UUID."""
    if len(value) != 36:  # most requests bring none: no exception raised and caught
        return False
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def new_request_id() -> str:
    """A random (version 4) UUID as text: `str(uuid.uuid4())`, without the `UUID` object
    between (a third of its cost; one a request)."""
    digits = os.urandom(16).hex()
    variant = "89ab"[int(digits[16], 16) & 3]
    return (f"{digits[:8]}-{digits[8:12]}-4{digits[13:16]}-{variant}{digits[17:20]}-"
            f"{digits[20:]}")


def _lowered_media_type(content_type: bytes) -> bytes:
    """A Content-Type with its media type in lower case, as every later layer matches it
    (media types are case-insensitive; Connexion skipped validating `APPLICATION/JSON`)."""
    media, semicolon, parameters = content_type.partition(b";")
    return media.strip().lower() + semicolon + parameters


def _accepts_json(accept: str) -> bool:
    """Whether an Accept header admits application/json (q=0 excluded)."""
    for item in accept.split(","):
        media, *params = [part.strip() for part in item.split(";")]
        if media.lower() in JSON_RANGES or media.lower().endswith("+json"):
            quality = next((p[2:] for p in params if p.lower().startswith("q=")), "1")
            try:
                if float(quality) > 0:
                    return True
            except ValueError:
                return True
    return False


class RequestMiddleware:
    """Makes every request's state, caps bodies, logs one line, adds the common headers."""

    def __init__(self, app, service, *, api_prefix: str = "/v1",
                 access_line: Callable[[str], None] | None = None):
        self.app = app
        self.service = service
        # Where each request's line goes (`log`'s, at INFO): through logging, or written
        # straight into the log's batch where the wiring found that to be all logging
        # would do (agenda/logs.py `direct_writer`).
        self.access_line = access_line or _logged
        self.max_body_bytes = service.settings.max_body_bytes
        self.api_prefix = api_prefix
        # The REST paths whose operations need no token (GET /terms, GET /openapi.json):
        # counted against their address's limit of requests without a valid token.
        self.tokenless = frozenset(operation.route for operation in service.routes.operations
                                   if operation.needed is None)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # The request's headers by name (the last of a repeated one), read once here.
        given = dict(scope["headers"])
        headers = [(k, _lowered_media_type(v) if k == b"content-type" else v)
                   for k, v in scope["headers"] if k != b"x-request-id"]
        incoming = given.get(b"x-request-id", b"").decode("latin-1")
        state = RequestState(request_id=incoming if _well_formed(incoming)
                             else new_request_id())
        headers.append((b"x-request-id", state.request_id.encode()))
        scope = state.attach({**scope, "headers": headers})
        status = 500

        async def send_with_headers(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                if status == 304:
                    await refund_revalidation(self.service, state)
                message = {**message, "headers": self._common(state, message)}
            await send(message)

        try:
            early = self._refuse_early(scope, given)
            if early is not None:
                status = early[0]
                await self._refuse(send, scope, state, *early)
                return
            redirect = self._without_slash(scope)
            if redirect is not None:
                status = 307
                await answers.answer(send, 307, headers=[
                    (b"location", redirect), (b"x-request-id", state.request_id.encode())])
                return
            refused = await self._over_address_limit(scope)
            if refused is not None:
                status = 429
                await answers.answer_error(
                    send, 429, refused.message, state.request_id, details=refused.details,
                    headers={**refused.headers, "X-Request-Id": state.request_id})
                return
            receive = self._capped(receive)
            if b"chunked" in given.get(b"transfer-encoding", b"").lower():
                scope, receive = await self._buffered(scope, receive)
            await self.app(scope, receive, send_with_headers)
        except PayloadTooLarge as error:
            status = 413
            await self._refuse(send, scope, state, 413, error.message)
        finally:
            self.access_line(f"{loggable(scope['method'])} {loggable(scope['path'])} {status} "
                             f"{state.seconds() * 1000:.1f}ms request_id={state.request_id}")

    @staticmethod
    def _common(state: RequestState, message) -> list[tuple[bytes, bytes]]:
        """The answer's headers with X-Request-Id and, for a token-authenticated request
        (counted, whatever its answer), its limit headers (unless the answer set them)."""
        extra = [(b"x-request-id", state.request_id.encode())]
        if state.figures is not None:
            extra += answers.header_list(state.figures.headers())
        given = message.get("headers", [])
        present = {k.lower() for k, _ in given}
        return [*given, *[h for h in extra if h[0] not in present]]

    def _refuse_early(self, scope, given: dict[bytes, bytes]):
        """(status, message[, details]) for requests refused before any routing, else None
        (`given`: the request's headers by name)."""
        length = given.get(b"content-length", b"").decode("latin-1")
        if length.isdigit() and int(length) > self.max_body_bytes:
            return 413, f"The request body is over {self.max_body_bytes} bytes."
        path = scope["path"]
        accept = given.get(b"accept", b"").decode("latin-1")
        if path.startswith(self.api_prefix) and accept and not _accepts_json(accept):
            return 406, "This API answers with application/json only."
        authorized = (path.startswith(self.api_prefix) or path.rstrip("/") == MCP_PATH
                      or path in OAUTH_JSON_PATHS)
        if authorized and sum(name == b"authorization" for name, _ in scope["headers"]) > 1:
            # Every layer would pick one; which one is the client's is anybody's guess.
            return 400, "The request has more than one Authorization header.", {"params": [
                {"name": "Authorization", "in": "header", "message": "is given more than once"}]}
        return None

    @staticmethod
    async def _refuse(send, scope, state: RequestState, status: int, message: str,
                      details: dict | None = None) -> None:
        """An early refusal in the envelope of the surface the request is for: RFC 6749 JSON
        on the OAuth endpoints that answer JSON, the REST envelope elsewhere."""
        headers = {"X-Request-Id": state.request_id}
        if scope["path"] in OAUTH_JSON_PATHS:
            body = orjson.dumps({"error": "invalid_request", "error_description": message})
            await answers.answer(send, status, body, [(b"cache-control", b"no-store"),
                                                      *answers.header_list(headers)])
            return
        await answers.answer_error(send, status, message, state.request_id, details=details,
                                   headers=headers)

    def _without_slash(self, scope) -> bytes | None:
        """The Location of an API path written with a trailing slash (`/v1/terms/`), on the
        configured site (never the request's Host header); None for any other path."""
        path = scope["path"]
        if not (path.startswith(self.api_prefix) and path.endswith("/")):
            return None
        bare = path.rstrip("/")
        if not self.service.routes.allowed_methods(bare):
            return None
        raw = scope.get("raw_path") or quote(path).encode("ascii")
        location = self.service.settings.site_url.encode() + raw.rstrip(b"/")
        query = scope.get("query_string", b"")
        return location + b"?" + query if query else location

    async def _over_address_limit(self, scope) -> RateLimited | None:
        """The 429 of a request to an operation that needs no token, when its address is
        over the limit of requests without a valid token (edge/limits.py), else None."""
        if scope["path"] not in self.tokenless:
            return None
        try:
            await self.service.usage.refuse_unauthenticated_async(client_address(scope))
        except RateLimited as refused:
            return refused
        return None

    def _capped(self, receive):
        """`receive`, refusing a body (chunked ones too) once it passes the cap."""
        seen = 0

        async def capped():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body_bytes:
                    raise PayloadTooLarge(f"The request body is over {self.max_body_bytes} bytes.")
            return message

        return capped

    @staticmethod
    async def _buffered(scope, receive):
        """Read a chunked body (already capped) and replay it with a Content-Length.

        Connexion's validators take a body without Content-Length for a missing one.
        """
        body, replay = await read_body(receive)
        headers = [(k, v) for k, v in scope["headers"] if k != b"transfer-encoding"]
        headers.append((b"content-length", str(len(body)).encode()))
        return {**scope, "headers": headers}, replay


async def read_body(receive):
    """The whole request body, and a `receive` that hands it on again to the layers below."""
    chunks, more = [], True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    body = b"".join(chunks)
    handed_on = False

    async def again():
        nonlocal handed_on
        if not handed_on:
            handed_on = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return body, again

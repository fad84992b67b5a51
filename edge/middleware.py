"""The outermost ASGI layer: request ids, access log, body cap, Accept check, limit headers."""

from __future__ import annotations

import logging
import time
import uuid

from edge.problems import error_body
from models.errors import PayloadTooLarge

log = logging.getLogger("agenda.access")
JSON_RANGES = ("*/*", "application/*", "application/json")


def _well_formed(value: str) -> bool:
    """An incoming X-Request-Id is echoed only when it is a UUID."""
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return len(value) == 36


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
    """Gives every request an id, caps bodies, logs one line, and adds the common headers."""

    def __init__(self, app, *, max_body_bytes: int, api_prefix: str = "/v1"):
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.api_prefix = api_prefix

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = [(k, v) for k, v in scope["headers"] if k != b"x-request-id"]
        incoming = dict(scope["headers"]).get(b"x-request-id", b"").decode("latin-1")
        request_id = incoming if _well_formed(incoming) else str(uuid.uuid4())
        headers.append((b"x-request-id", request_id.encode()))
        shared = {"request_id": request_id, "ratelimit": {}, "started": started}
        scope = {**scope, "headers": headers,
                 "extensions": {**scope.get("extensions", {}), "agenda": shared}}
        status = 500

        async def send_with_headers(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                extra = [(b"x-request-id", request_id.encode())]
                extra += [(k.lower().encode(), v.encode()) for k, v in shared["ratelimit"].items()]
                present = {k.lower() for k, _ in message.get("headers", [])}
                message = {**message, "headers": [*message.get("headers", []),
                                                  *[h for h in extra if h[0] not in present]]}
            await send(message)

        try:
            early = self._refuse_early(scope)
            if early is not None:
                status = early[0]
                await self._send_error(send, request_id, *early)
                return
            receive = self._capped(receive)
            if b"chunked" in dict(scope["headers"]).get(b"transfer-encoding", b"").lower():
                scope, receive = await self._buffered(scope, receive)
            await self.app(scope, receive, send_with_headers)
        except PayloadTooLarge as error:
            status = 413
            await self._send_error(send, request_id, 413, error.message)
        finally:
            log.info("%s %s %s %.1fms request_id=%s", scope["method"], scope["path"], status,
                     (time.perf_counter() - started) * 1000, request_id)

    def _refuse_early(self, scope):
        """(status, message) for requests refused before any routing, else None."""
        request_headers = dict(scope["headers"])
        length = request_headers.get(b"content-length", b"").decode("latin-1")
        if length.isdigit() and int(length) > self.max_body_bytes:
            return 413, f"The request body is over {self.max_body_bytes} bytes."
        accept = request_headers.get(b"accept", b"").decode("latin-1")
        if scope["path"].startswith(self.api_prefix) and accept and not _accepts_json(accept):
            return 406, "This API answers with application/json only."
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

    @staticmethod
    async def _send_error(send, request_id: str, status: int, message: str):
        body = error_body(status, message, request_id)
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"cache-control", b"no-store"),
            (b"x-request-id", request_id.encode()),
        ]})
        await send({"type": "http.response.body", "body": body})


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

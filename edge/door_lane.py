"""The door's lane: POST /scan answered before the framework, for doors waiting on it.

A door scan's own work is two short statements; Connexion's pipeline, Flask and
the thread hops between them cost three times that, and under 8 busy doors they
set the queue everyone waits in (bench/organiser.py). This layer answers a
well-formed scan without them, leaving nothing out:

- the body must be `application/json` that the document's own schema for the
  operation accepts, checked by the same validator as Connexion's
  (`edge/openapi.py`: `compiled`, `body_errors`);
- the token is authenticated, its scope checked and the request counted by the
  same function as the security handler's (`security.admitted`);
- the door's work is the handler's (`models/door.py`), on threads of its own; the
  answer is the handler's envelope and headers, checked against the document when
  response validation is on (tests).

Anything else goes the full way, untouched: a query string, another content type,
a body that is not JSON or that the schema refuses (the full way explains what is
wrong), a missing Authorization header. A refused token and a failure while
scanning (the database unreachable, say) go the full way too, carrying the
admission along as the response cache does, so that Connexion answers with its own
error and nothing is counted twice. `AGENDA_DOOR_LANE=false` sends every scan the
full way.
"""

from __future__ import annotations

import asyncio
import json
import logging

import orjson
from connexion.json_schema import resolve_refs

from edge.admission import Admitted, admitted, client_address
from edge.limits import OncePerMinute
from edge.middleware import read_body
from edge.openapi import body_errors, compiled, scopes_needed
from handlers.envelope import PRIVATE_CACHE
from handlers.schemas.organiser import ScanResultSchema
from models import door
from models.db import now

log = logging.getLogger("agenda.doors")
HANDLER = "handlers.organiser.scan_ticket"
scan_schema = ScanResultSchema()


class DoorLane:
    """ASGI layer between the response cache and Connexion (see the module's text)."""

    def __init__(self, app, service):
        self.app = app
        self.service = service
        self.route = service.routes[HANDLER]
        # The operation as Connexion sees it: every reference resolved by its own function.
        resolved = resolve_refs(service.document)
        operation = resolved["paths"][self.route.removeprefix("/v1")]["post"]
        self.needed = scopes_needed(resolved, operation)
        self.body_validator = compiled(
            operation["requestBody"]["content"]["application/json"]["schema"])
        self.answer_validator = (
            compiled(operation["responses"]["200"]["content"]["application/json"]["schema"])
            if service.settings.validate_responses else None)
        self._warn = OncePerMinute(log, "a scan failed in the door's lane, it goes the full "
                                        "way: %r")

    async def __call__(self, scope, receive, send):
        if (scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != self.route
                or scope["query_string"]):
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        if b"authorization" not in headers:
            await self.app(scope, receive, send)
            return
        raw, receive = await read_body(receive)
        body = self._valid_body(headers.get(b"content-type", b""), raw)
        if body is None:
            await self.app(scope, receive, send)
            return
        shared = scope["extensions"]["agenda"]
        try:
            admission = await admitted(self.service, headers[b"authorization"].decode("latin-1"),
                                       self.needed, self.route, client_address(scope))
        except Exception as error:  # noqa: BLE001 - the security handler raises it again
            shared["admitted"] = Admitted(self.route, self.needed, error)
            await self.app(scope, receive, send)
            return
        try:
            verdict = await asyncio.get_running_loop().run_in_executor(
                self.service.door_threads, self._scan, admission.caller.organisation_id, body)
        except Exception as error:  # noqa: BLE001 - the full way answers it (a 503, say)
            self._warn(error)
            shared["admitted"] = Admitted(self.route, self.needed, admission)
            await self.app(scope, receive, send)
            return
        shared["ratelimit"] = admission.figures.headers()
        await self._answer(send, {"data": scan_schema.dump(verdict),
                                  "meta": {"request_id": shared["request_id"]}})

    def _valid_body(self, content_type: bytes, raw: bytes) -> dict | None:
        """The body when it is JSON the document accepts, else None."""
        if content_type not in (b"application/json", b"application/json; charset=utf-8"):
            return None
        try:
            body = json.loads(raw.decode("utf-8"))
        except ValueError:
            return None
        return None if body_errors(self.body_validator, body) else body

    def _scan(self, organisation_id: str, body: dict) -> door.Verdict:
        return door.scan(self.service.direct, self.service.sessions.begin,
                         organisation_id=organisation_id, scanned=body["code"],
                         event_id=body.get("eventId"), now=now())

    async def _answer(self, send, envelope: dict) -> None:
        if self.answer_validator is not None:
            self.answer_validator.validate(envelope)
        body = orjson.dumps(envelope)
        # The request middleware adds X-Request-Id and the limit headers, as on the full way.
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"cache-control", PRIVATE_CACHE.encode()),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

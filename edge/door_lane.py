"""The door's lane: POST /scan answered before the framework, for doors waiting on it.

A door scan's own work is two short statements; Connexion's pipeline, Flask and
the thread hops between them cost three times that, and under 8 busy doors they
set the queue everyone waits in (bench/organiser.py). This layer answers a
well-formed scan without them, leaving nothing out:

- the body must be `application/json` that the document's own schema for the
  operation accepts, checked by the same validator as Connexion's
  (edge/openapi.py: `compiled`, `body_errors`);
- the request is admitted by the same function as on the full path
  (`admission.admit`: token, scope, limits, usage);
- the scan is the handler's own function (given by the wiring, agenda/app.py), on
  threads of its own; the answer is the handler's envelope and headers, checked
  against the document when response validation is on (tests).

Anything else goes the full way, untouched: a query string, another content type,
a body that is not JSON or that the schema refuses (the full way explains what is
wrong), a missing Authorization header. A refused token and a failure while
scanning (the database unreachable, say) go the full way too, the admission kept on
the request's state, so that Connexion answers with its own error and nothing is
counted twice. `AGENDA_DOOR_LANE=false` sends every scan the full way.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable

import orjson
from connexion.json_schema import resolve_refs

from edge import answers
from edge.admission import admit, authorization, client_address
from edge.conditional import PRIVATE_CACHE
from edge.limits import OncePerMinute
from edge.middleware import read_body
from edge.openapi import body_errors, compiled, parse_json
from edge.routes import Operation
from edge.state import RequestState
from models.errors import BadRequest
from models.unit_of_work import transaction

log = logging.getLogger("agenda.doors")


class DoorLane:
    """ASGI layer between the response cache and Connexion (see the module's text).
    `scan(direct, transaction, caller, body)` is the handler's scan, giving the answer's
    data."""

    def __init__(self, app, service, *, operation: Operation, scan: Callable):
        self.app = app
        self.service = service
        self.operation = operation
        self.scan = scan
        # The operation as Connexion sees it: every reference resolved by its own function.
        resolved = resolve_refs(service.document)
        definition = resolved["paths"][operation.route.removeprefix("/v1")]["post"]
        self.body_validator = compiled(
            definition["requestBody"]["content"]["application/json"]["schema"])
        self.answer_validator = (
            compiled(definition["responses"]["200"]["content"]["application/json"]["schema"])
            if service.settings.validate_responses else None)
        self._warn = OncePerMinute(log, "a scan failed in the door's lane, it goes the full "
                                        "way: %r")

    async def __call__(self, scope, receive, send):
        header = authorization(scope) if scope["type"] == "http" else None
        if (header is None or scope["method"] != "POST" or scope["path"] != self.operation.route
                or scope["query_string"]):
            await self.app(scope, receive, send)
            return
        raw, receive = await read_body(receive)
        body = self._valid_body(dict(scope["headers"]).get(b"content-type", b""), raw)
        if body is None:
            await self.app(scope, receive, send)
            return
        state = RequestState.of(scope)
        try:
            admission = await admit(self.service, state, self.operation.gate, header,
                                    client_address(scope))
            data = await self.service.door_threads.run(self._scan, admission.caller, body)
        except Exception as error:  # noqa: BLE001 - the full way answers it (a 401, a 503)
            if state.admitted() is not None:
                self._warn(error)
            await self.app(scope, receive, send)
            return
        await self._answer(send, data, state.request_id)

    def _valid_body(self, content_type: bytes, raw: bytes) -> dict | None:
        """The body when it is JSON the document accepts, else None."""
        if content_type not in (b"application/json", b"application/json; charset=utf-8"):
            return None
        try:
            body = parse_json(raw)
        except BadRequest:
            return None
        return None if body_errors(self.body_validator, body) else body

    def _scan(self, caller, body: dict) -> dict:
        """The handler's scan, on a door thread, on its own connection."""
        return self.scan(self.service.direct, functools.partial(transaction, self.service.sessions),
                         caller, body)

    async def _answer(self, send, data: dict, request_id: str) -> None:
        body = answers.envelope(orjson.dumps(data), request_id)
        if self.answer_validator is not None:
            self.answer_validator.validate(orjson.loads(body))
        # The request middleware adds X-Request-Id and the limit headers, as on the full way.
        await answers.answer(send, 200, body, [(b"cache-control", PRIVATE_CACHE.encode())])

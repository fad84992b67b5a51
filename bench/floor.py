"""The framework floor: bare Connexion FlaskApp routes returning a prebuilt body.

Served with the same server and worker count as the service, so that a ratio
to it shows what the service adds on top of the framework itself.
GET /v1/floor answers a body of `AGENDA_FLOOR_BYTES`; POST /v1/floor takes a
JSON object (parsed by Connexion, as the service's bodies are) and answers a
body of `AGENDA_FLOOR_POST_BYTES` (sizes: those of the responses compared).
"""

import os

import connexion
from flask import Response


def _body(size: int) -> bytes:
    return b'{"data":"' + b"x" * max(0, size - 11) + b'"}'


BODY = _body(int(os.environ.get("AGENDA_FLOOR_BYTES", "6800")))
POST_BODY = _body(int(os.environ.get("AGENDA_FLOOR_POST_BYTES", "300")))

DOCUMENT = {
    "openapi": "3.0.3",
    "info": {"title": "floor", "version": "1"},
    "paths": {"/floor": {
        "get": {"operationId": "bench.floor.prebuilt",
                "responses": {"200": {"description": "prebuilt"}}},
        "post": {"operationId": "bench.floor.posted",
                 "requestBody": {"required": True, "content": {
                     "application/json": {"schema": {"type": "object"}}}},
                 "responses": {"200": {"description": "prebuilt"}}},
    }},
}


def prebuilt():
    """The prebuilt body."""
    return Response(BODY, mimetype="application/json")


def posted(body: dict):
    """The prebuilt POST answer, whatever the (parsed) body held."""
    return Response(POST_BODY, mimetype="application/json")


app = connexion.FlaskApp(__name__)
app.add_api(DOCUMENT, base_path="/v1")

"""The framework floor: a bare Connexion FlaskApp route returning a prebuilt body.

Served with the same server and worker count as the service, so that a ratio
to it shows what the service adds on top of the framework itself.
`AGENDA_FLOOR_BYTES` sets the body size (that of the response compared).
"""

import os

import connexion
from flask import Response

BODY = b'{"data":"' + b"x" * max(0, int(os.environ.get("AGENDA_FLOOR_BYTES", "6800")) - 11) + b'"}'

DOCUMENT = {
    "openapi": "3.0.3",
    "info": {"title": "floor", "version": "1"},
    "paths": {"/floor": {"get": {"operationId": "bench.floor.prebuilt",
                                 "responses": {"200": {"description": "prebuilt"}}}}},
}


def prebuilt():
    """The prebuilt body."""
    return Response(BODY, mimetype="application/json")


app = connexion.FlaskApp(__name__)
app.add_api(DOCUMENT, base_path="/v1")

"""The compatibility layer that runs Connexion 3.3.0 on an OpenAPI 3.1 document.

Each test here fails when a Connexion upgrade changes what the layer relies on.
"""

import copy
from importlib.metadata import version

import connexion
import pytest
import yaml
from connexion.exceptions import InvalidSpecification
from connexion.spec import OpenAPISpecification, Specification
from openapi_spec_validator import validate
from openapi_spec_validator.validation import OpenAPIV31SpecValidator

from agenda.app import create_app
from edge import openapi
from edge.problems import ErrorHandlers

BASE = "http://127.0.0.1:8080/v1"


def test_the_document_is_valid_openapi_3_1():
    with openapi.DOCUMENT.open() as handle:
        document = yaml.safe_load(handle)
    assert document["openapi"] == "3.1.0"
    assert document["info"]["version"] == "1.0.0"
    validate(document, cls=OpenAPIV31SpecValidator)


def test_connexion_is_the_pinned_version():
    assert version("connexion") == openapi.CONNEXION_VERSION, (
        "Connexion changed: re-check edge/openapi.py (3.1 spec check, validator_map, "
        "security_map) and then update CONNEXION_VERSION and the pin in pyproject.toml")


def test_connexion_alone_still_rejects_3_1_and_the_layer_accepts_it():
    document = openapi.load_document(BASE)
    original = Specification.__dict__["_validate_spec"].__func__
    with pytest.raises(InvalidSpecification):
        original(OpenAPISpecification, copy.deepcopy(document))
    openapi.install()
    assert isinstance(Specification.from_dict(copy.deepcopy(document)), OpenAPISpecification)


def test_the_layer_still_refuses_an_invalid_3_1_document():
    openapi.install()
    document = openapi.load_document(BASE)
    document["paths"]["/me"]["get"]["parameters"] = [{"name": "x"}]
    with pytest.raises(Exception, match="parameters"):
        Specification.from_dict(document)


def _tiny_app(schema: dict, body: dict | None = None):
    """A one-operation 3.1 app wired exactly like the service's."""
    operation = {
        "operationId": "tests.edge.test_openapi.echo",
        "parameters": [{"name": "n", "in": "query", "schema": schema}],
        "responses": {"200": {"description": "ok"}},
    }
    if body is not None:
        operation["requestBody"] = {"required": True,
                                    "content": {"application/json": {"schema": body}}}
    document = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
                "paths": {"/echo": {"post": operation}}}
    openapi.install()
    app = connexion.FlaskApp(__name__)
    app.add_api(document, validator_map=openapi.VALIDATOR_MAP, strict_validation=True)
    ErrorHandlers(lambda _path: []).install(app)
    return app


def echo(**_kwargs):
    return {"ok": True}


def test_parameters_are_validated_with_draft_2020_12():
    # Draft 4 (Connexion's own) ignores a numeric exclusiveMinimum; 2020-12 enforces it.
    app = _tiny_app({"type": "number", "exclusiveMinimum": 0})
    with app.test_client() as client:
        assert client.post("/echo?n=1").status_code == 200
        assert client.post("/echo?n=0").status_code == 400


def test_bodies_are_validated_with_draft_2020_12():
    # `const` is silently ignored by draft 4.
    app = _tiny_app({"type": "integer"}, body={"type": "object", "properties": {
        "kind": {"const": "ticket"}}})
    with app.test_client() as client:
        assert client.post("/echo", json={"kind": "ticket"}).status_code == 200
        assert client.post("/echo", json={"kind": "other"}).status_code == 400


def test_operation_ids_are_short_and_unique_for_generated_clients(app):
    ids = [operation["operationId"] for item in app.service.document["paths"].values()
           for operation in item.values() if isinstance(operation, dict)]
    assert len(ids) == len(set(ids)) == 25
    assert all(operation_id.isidentifier() for operation_id in ids)


def test_every_declared_operation_is_routed_to_its_handler(app):
    declared = {f"{operation['x-openapi-router-controller']}.{operation['operationId']}"
                for item in app.service.document["paths"].values()
                for operation in item.values() if isinstance(operation, dict)}
    assert declared == {operation.handler for operation in app.service.routes.operations}


def test_the_served_document_is_serialized_once(database_url):
    app = create_app({"database_url": database_url})
    first = app.service.document_json
    with app.test_client() as client:
        assert client.get("/v1/openapi.json").content == first
        assert client.get("/v1/openapi.json").content is not None
    assert app.service.document_json is first
    app.service.close()


def test_a_worker_skips_only_the_check_of_the_document_its_server_checked(monkeypatch):
    from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

    from edge import openapi as layer

    document = layer.load_document("http://127.0.0.1:8080/v1")
    broken = {**document, "paths": {"/x": {"get": {"responses": "not a mapping"}}}}
    monkeypatch.setenv(layer.CHECKED_VARIABLE, layer.digest_of(broken).hex())
    layer.validate_31(broken)  # checked by `agenda serve` already: not again
    monkeypatch.setenv(layer.CHECKED_VARIABLE, layer.digest_of(document).hex())
    with pytest.raises(OpenAPIValidationError, match="is not of type"):
        layer.validate_31(broken)

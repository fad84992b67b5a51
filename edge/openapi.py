"""The OpenAPI 3.1 document and the layer that lets Connexion 3.3 run on it.

Connexion 3.3.0 (pinned in pyproject.toml) checks documents against its bundled
OpenAPI 3.0 meta-schema only and validates with JSON Schema draft 4, stopping at
the first bad parameter. This module, and nothing else, works around that:

* `load_document` reads `openapi/agenda.yaml`, validates it as OpenAPI 3.1 with
  openapi-spec-validator and sets `servers` to the configured base URL;
* `install` replaces Connexion's 3.0 meta-schema check with that 3.1 check;
* `VALIDATOR_MAP` (`validator_map` for a service: its cursors' key) hands Connexion
  parameter, body and response validators that use JSON Schema draft 2020-12 (the
  dialect of OpenAPI 3.1) and report every bad parameter at once as `details.params`,
  with the rules a handler declares (`rules`) and a cursor this API did not sign;
* `parse_json` reads every JSON request body, here and in the door's lane.

tests/agenda/test_openapi.py fails when a Connexion upgrade breaks any of this.
"""

from __future__ import annotations

import copy
import hashlib
import math
import os
import re
from collections.abc import Callable
from pathlib import Path

import connexion.spec
import orjson
import yaml
from connexion.datastructures import MediaTypeDict
from connexion.exceptions import NonConformingResponseBody
from connexion.lifecycle import ConnexionRequest
from connexion.validators import JSONRequestBodyValidator, JSONResponseBodyValidator
from connexion.validators.parameter import ParameterValidator
from jsonschema import Draft202012Validator
from starlette.datastructures import QueryParams

from edge import cursors
from edge.problems import QUERY_NAMES, UnsupportedMediaType
from models.errors import BadRequest

DOCUMENT = Path(__file__).resolve().parent.parent / "openapi" / "agenda.yaml"
CONNEXION_VERSION = "3.3.0"
FORMATS = Draft202012Validator.FORMAT_CHECKER


# Digests of documents already validated in this process: validation takes seconds.
_validated: set[bytes] = set()
# Set by `agenda serve` to the digest of the document it validated before starting its
# workers, which then skip the check (and its ~10 MB of validator) for that same document.
CHECKED_VARIABLE = "AGENDA_CHECKED_DOCUMENT"


def digest_of(document: dict) -> bytes:
    """A digest of the document's content."""
    return hashlib.sha256(orjson.dumps(document, option=orjson.OPT_SORT_KEYS)).digest()


def validate_31(document: dict) -> None:
    """Check `document` as OpenAPI 3.1 (once per distinct document in a process, and not at
    all in a worker of `agenda serve`, which checked this very document already)."""
    digest = digest_of(document)
    if digest in _validated or os.environ.get(CHECKED_VARIABLE) == digest.hex():
        return
    from openapi_spec_validator import validate as validate_openapi
    from openapi_spec_validator.validation import OpenAPIV31SpecValidator

    validate_openapi(copy.deepcopy(document), cls=OpenAPIV31SpecValidator)
    _validated.add(digest)


def load_document(base_url: str) -> dict:
    """The OpenAPI document, checked as 3.1, with `servers` set to `base_url`."""
    with DOCUMENT.open(encoding="utf-8") as handle:
        # libyaml's parser when PyYAML has it: 7x faster, and ~1 MB less left in each worker.
        document = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    document["servers"] = [{"url": base_url, "description": "this deployment"}]
    validate_31(document)
    return document


def path_pattern(template: str) -> re.Pattern:
    """The concrete request paths of a path template of the document (`/v1/events/{id}`)."""
    return re.compile(re.escape(template).replace(r"\{id\}", "[^/]+"))


def resolve(document: dict, item: dict) -> dict:
    """`item` with its `$ref` followed (local references only), its own keys winning."""
    seen = 0
    while "$ref" in item and seen < 10:
        target = document
        for part in item["$ref"].removeprefix("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        item = {**target, **{k: v for k, v in item.items() if k != "$ref"}}
        seen += 1
    return item


def scopes_needed(document: dict, operation: dict) -> frozenset[str] | None:
    """The scopes an operation's security requirements name (its own, else the document's);
    None when it needs no authentication at all."""
    security = operation.get("security", document.get("security", []))
    if not security:
        return None
    return frozenset(scope for requirement in security for scopes in requirement.values()
                     for scope in scopes)


def _validate_spec_31(cls, spec: dict) -> None:
    """Connexion's `_validate_spec`, for OpenAPI 3.1 documents."""
    validate_31(spec)


def install() -> None:
    """Make Connexion accept OpenAPI 3.1 documents, checked by openapi-spec-validator."""
    connexion.spec.OpenAPISpecification._validate_spec = classmethod(_validate_spec_31)


def _json_path(path) -> str:
    """`items[3].code` for the deque ['items', 3, 'code'] of a jsonschema error."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def body_errors(validator: Draft202012Validator, body) -> list[dict]:
    """One `details.params` entry per bad body field, named by its JSON path."""
    params = []
    for error in sorted(validator.iter_errors(body), key=lambda e: list(map(str, e.path))):
        path = list(error.path)
        if error.validator == "required":
            missing = [name for name in error.validator_value
                       if isinstance(error.instance, dict) and name not in error.instance]
            for name in missing:
                params.append({"name": _json_path([*path, name]), "in": "body",
                               "message": "is required"})
            continue
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = set(error.schema.get("properties", {}))
            for name in sorted(set(error.instance) - allowed):
                params.append({"name": _json_path([*path, name]), "in": "body",
                               "message": "is not a known field"})
            continue
        params.append({"name": _json_path(path) or "body", "in": "body",
                       "message": _short(error.message)})
    return params


# PostgreSQL cannot hold NUL in text and no parameter has a use for it. (In bodies
# the domain refuses it field by field: a bad delivery item is refused, not a 400.)
NUL_MESSAGE = "must not contain NUL characters"


def _short(message: str) -> str:
    """A jsonschema message without a huge echoed instance."""
    return message if len(message) <= 200 else message[:197] + "..."


class _Compiled:
    """Draft 2020-12 validators compiled once per schema object of the loaded document."""

    def __init__(self):
        self._cache: dict[int, tuple[object, Draft202012Validator]] = {}

    def __call__(self, schema: dict) -> Draft202012Validator:
        hit = self._cache.get(id(schema))
        # The schema is kept in the entry, so its id cannot be reused while cached.
        if hit is not None and hit[0] is schema:
            return hit[1]
        validator = Draft202012Validator(schema, format_checker=FORMATS)
        self._cache[id(schema)] = (schema, validator)
        return validator


compiled = _Compiled()


# operationId -> the rules of its query parameters beyond the schema (see `rules`).
_RULES: dict[str, Callable[[dict], list[dict]]] = {}


def rules(check: Callable[[dict], list[dict]]):
    """Declares, on a handler, the rules of its operation's parameters beyond the schema:
    `check(query)` gets the parameters the schema accepted (by their names in the document,
    typed) and gives one `details.params` entry per bad one. When the schema refuses a
    parameter the rules are asked too, so that one 400 names every bad parameter; otherwise
    the handler's domain function applies them itself."""

    def declared(handler):
        _RULES[f"{handler.__module__}.{handler.__name__}"] = check
        return handler

    return declared


# The lexical forms a typed parameter must have (Python's int() and float() would also take
# full-width digits, underscores, spaces, "NaN" and "Infinity").
_INTEGER = re.compile(r"-?[0-9]{1,18}")
_NUMBER = re.compile(r"-?[0-9]{1,18}(?:\.[0-9]{1,18})?(?:[eE][+-]?[0-9]{1,3})?")


def plain_integer(text: str) -> int | None:
    """`text` as an integer when it is written as one must be (ASCII digits), else None: the
    one test of the validators and of the response cache's reader (edge/arguments.py)."""
    return int(text) if _INTEGER.fullmatch(text) else None


def plain_number(text: str) -> float | None:
    """`text` as a finite number when it is written as one must be, else None (as
    `plain_integer`)."""
    if not _NUMBER.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def lexical_error(kind: str | None, value: str) -> str | None:
    """Why `value` is not written as a scalar of JSON Schema type `kind` must be, if it is
    not."""
    if "\x00" in value:
        return NUL_MESSAGE
    if kind == "integer" and plain_integer(value) is None:
        return "must be an integer in ASCII digits"
    if kind == "number" and plain_number(value) is None:
        return "must be a finite number in ASCII digits"
    return None


class AllParametersValidator(ParameterValidator):
    """Validates path, query and header parameters with draft 2020-12; reports all at once,
    with the operation's rules (`rules`) when any is bad.

    Unknown query parameters are bad parameters too (decisions.md), and so is a parameter
    of one value given more than once.
    """

    # The key the running service signs its cursors with (`validator_map`); None: a bad
    # cursor is named by the handler only.
    cursor_secret: str | None = None

    def validate(self, scope) -> None:
        request = ConnexionRequest(scope, uri_parser=self.uri_parser)
        raw = QueryParams(scope["query_string"])
        params = parameter_errors(self.parameters, {"query": request.query_params,
                                                    "path": request.path_params,
                                                    "header": request.headers}, raw)
        if params:
            refused = {param["name"] for param in params}
            routing = scope.get("extensions", {}).get("connexion_routing", {})
            check = _RULES.get(routing.get("operation_id"))
            if check is not None:
                # A rule says nothing of a parameter the schema refused (not "lat and lng go
                # together" for `lat=NaN&lng=4`).
                params += [rule for rule in check({name: value for name, value
                                                   in request.query_params.items()
                                                   if name not in refused})
                           if QUERY_NAMES.get(rule["name"], rule["name"]) not in refused]
            params += self._cursor_errors(raw, refused)
            raise BadRequest(params)

    def _cursor_errors(self, raw: QueryParams, refused: set[str]) -> list[dict]:
        """A `cursor` this API did not sign, named beside the parameters the schema refused
        (whether it fits its list and filters the handler tells, once they are valid)."""
        cursor = raw.get("cursor")
        if cursor is None or "cursor" in refused or self.cursor_secret is None:
            return []
        try:
            cursors.authentic(self.cursor_secret, cursor)
        except BadRequest as error:
            return error.params
        return []


def parameter_errors(parameters: dict[str, list[dict]], sources: dict, query) -> list[dict]:
    """Every bad parameter of a request, for Connexion's validator and for values read
    outside it (a page's query taken as GET /v1/events filters, pages/subscriptions.py):
    `parameters` by location, the values by location (coerced to their types as Connexion
    does), `query` the raw query string's values (a multi-dict: `getlist`). Unknown query
    parameters are bad parameters too (decisions.md), and so are a single-valued one given
    more than once and a typed one not written as its type must be (`lexical_error`)."""
    params = []
    known = {p["name"] for p in parameters.get("query", [])}
    for name in sorted(set(query) - known):
        params.append({"name": name, "in": "query", "message": "is not a known parameter"})
    for location, values in sources.items():
        for parameter in parameters.get(location, []):
            name = parameter["name"]
            value = values.get(name)
            if value is None:
                if parameter.get("required"):
                    params.append({"name": name, "in": location, "message": "is required"})
                continue
            schema = parameter.get("schema", {})
            given = query.getlist(name) if location == "query" else [value]
            if len(given) > 1 and schema.get("type") != "array":
                params.append({"name": name, "in": location,
                               "message": "is given more than once"})
                continue
            problem = next(filter(None, (lexical_error(schema.get("type"), text)
                                         for text in given if isinstance(text, str))), None)
            if problem is not None:
                params.append({"name": name, "in": location, "message": problem})
                continue
            for error in compiled(schema).iter_errors(value):
                params.append({"name": name, "in": location, "message": _short(error.message)})
    return params


# No body of the document nests deeper than 4; a deeper one is refused before any schema
# (validating and describing a 1,000-deep value would exhaust Python's recursion limit).
MAX_DEPTH = 32


def parse_json(raw: bytes, encoding: str = "utf-8"):
    """A request body's JSON, strictly RFC 8259 (no NaN, no lone surrogate, no number beyond
    a double) and at most `MAX_DEPTH` deep; else a 400 naming the body."""
    try:
        text = raw.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        raise _bad_body(f"is not valid {encoding} text") from None
    try:
        body = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        raise _bad_body(f"is not valid JSON: {error.msg} at line {error.lineno} "
                        f"column {error.colno}") from None
    if _deeper_than(body, MAX_DEPTH):
        raise _bad_body(f"nests arrays and objects more than {MAX_DEPTH} levels deep")
    return body


def _bad_body(message: str) -> BadRequest:
    return BadRequest([{"name": "body", "in": "body", "message": message}])


def _deeper_than(value, limit: int) -> bool:
    """Whether arrays and objects nest in `value` more than `limit` levels (no recursion)."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if not isinstance(item, (dict, list)):
            continue
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        pending.extend((child, depth + 1) for child in children)
    return False


class BodyValidator(JSONRequestBodyValidator):
    """JSON bodies: a body without Content-Type is a 415, malformed JSON or text a 400,
    fields validated with draft 2020-12."""

    async def wrap_receive(self, receive, *, scope):
        # Connexion takes a missing Content-Type for the operation's first media type.
        if not any(name == b"content-type" for name, _ in scope["headers"]):
            raise UnsupportedMediaType("The request body must be application/json, "
                                       "and say so in Content-Type.",
                                       headers={"Accept": "application/json"})
        return await super().wrap_receive(receive, scope=scope)

    async def _parse(self, stream, scope):
        raw = b"".join([message async for message in stream])
        if not raw.strip():
            return None
        return parse_json(raw, self._encoding)

    def _validate(self, body):
        if body is None:
            raise BadRequest([{"name": "body", "in": "body", "message": "is required"}])
        params = body_errors(compiled(self._schema), body)
        if params:
            raise BadRequest(params)
        return


class ResponseValidator(JSONResponseBodyValidator):
    """Checks responses against the document with draft 2020-12 (switched on in tests)."""

    def _validate(self, body):
        if self._scope.get("method") == "HEAD":
            return  # no body (RFC 9110 9.3.2): its headers are the GET's
        errors = list(compiled(self._schema).iter_errors(body))
        if errors:
            error = errors[0]
            raise NonConformingResponseBody(
                detail=f"Response body does not conform to the document: {error.message} "
                       f"at {_json_path(error.absolute_path) or 'the top'}"
            )


def validator_map(secret: str) -> dict:
    """`VALIDATOR_MAP` for a running service whose cursors are signed with `secret`."""
    return {**VALIDATOR_MAP, "parameter": type("ParameterValidator", (AllParametersValidator,),
                                               {"cursor_secret": secret})}


VALIDATOR_MAP = {
    "parameter": AllParametersValidator,
    # A MediaTypeDict, or Connexion silently skips body validation.
    "body": MediaTypeDict({"*/*json": BodyValidator}),
    "response": MediaTypeDict({"*/*json": ResponseValidator}),
}

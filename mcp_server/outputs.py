"""The output schemas of the tools, taken from the OpenAPI document: a tool's result is the
REST answer of the same operation (`{data, meta}`), without the request id (an MCP result
has none), so its schema is that answer's schema, made self-contained (JSON Schema 2020-12,
the document's components as `$defs`).

They keep what types a result (types, required fields, value sets) and leave out the
annotations (descriptions, examples): every tool list carries them, and what the fields
mean is in the API reference (/docs): with them, a tool list was half as long again.
"""

from __future__ import annotations

import copy

from edge.openapi import resolve

DIALECT = "https://json-schema.org/draft/2020-12/schema"
COMPONENTS = "#/components/schemas/"
ANNOTATIONS = frozenset({"description", "example", "examples", "title", "externalDocs"})
# Keywords whose value maps names (of properties, of definitions) to schemas.
NAMED_SCHEMAS = frozenset({"properties", "$defs", "patternProperties", "dependentSchemas"})


def of_operation(document: dict, operation_id: str) -> dict:
    """The schema of the result of a tool that answers as the operation `operation_id`."""
    body = resolve(document, _operation(document, operation_id)["responses"]["200"])
    answer = resolve(document, body["content"]["application/json"]["schema"])
    return of_answer(document, answer["properties"]["data"],
                     without_request_id(document, answer["properties"]["meta"]))


def of_answer(document: dict, data: dict, meta: dict) -> dict:
    """A self-contained schema of `{data, meta}` from the document's schemas `data`, `meta`."""
    answer = {"type": "object", "required": ["data", "meta"],
              "properties": {"data": data, "meta": meta}}
    defs: dict[str, dict] = {}
    pending = _names(answer)
    while pending:
        name = pending.pop()
        if name not in defs:
            defs[name] = document["components"]["schemas"][name]
            pending |= _names(defs[name])
    return _local({"$schema": DIALECT, **answer,
                   "$defs": {name: defs[name] for name in sorted(defs)}})


def who_am_i(document: dict) -> dict:
    """The result of the tool `who_am_i`: GET /me's data marked `kind` "live", or an OAuth
    connection's person, organisation, client and scopes."""
    live = {"type": "object", "allOf": [{"$ref": f"{COMPONENTS}Me"}], "required": ["kind"],
            "properties": {"kind": {"const": "live"}}}
    text = {"type": ["string", "null"]}
    oauth = {"type": "object", "additionalProperties": False,
             "required": ["kind", "person_id", "organisation_id", "client_id", "scopes",
                          "expires_at"],
             "properties": {
                 "kind": {"const": "oauth"},
                 "person_id": {**text, "description": "The person who consented."},
                 "organisation_id": {**text, "description": "The organisation the person "
                                                            "acts for; null: as themselves."},
                 "client_id": {**text, "description": "The OAuth client (the assistant)."},
                 "scopes": {"type": "array", "items": {"$ref": f"{COMPONENTS}Scope"}},
                 "expires_at": {"type": ["integer", "null"],
                                "description": "When the access token expires (Unix "
                                               "seconds)."}}}
    return of_answer(document, {"oneOf": [live, oauth]},
                     {"type": "object", "additionalProperties": False})


def without_request_id(document: dict, meta: dict) -> dict:
    """A meta schema of the document without `request_id` (an `allOf` of objects merged
    into one first, as `EventListMeta` is)."""
    meta = _merged(document, resolve(document, meta))
    meta["properties"].pop("request_id", None)
    meta["required"] = [name for name in meta.get("required", []) if name != "request_id"]
    return meta


def _merged(document: dict, schema: dict) -> dict:
    """`schema` with the properties and required fields of its `allOf` parts in one object."""
    merged = copy.deepcopy({key: value for key, value in schema.items() if key != "allOf"})
    for part in schema.get("allOf", []):
        part = _merged(document, resolve(document, part))
        merged.setdefault("type", part.get("type", "object"))
        merged["properties"] = {**merged.get("properties", {}), **part.get("properties", {})}
        merged["required"] = [*merged.get("required", []), *part.get("required", [])]
    return merged


def _operation(document: dict, operation_id: str) -> dict:
    for item in document["paths"].values():
        for operation in item.values():
            if isinstance(operation, dict) and operation.get("operationId") == operation_id:
                return operation
    raise LookupError(f"The document has no operation {operation_id!r}.")


def _names(schema) -> set[str]:
    """The components `schema` refers to."""
    if isinstance(schema, dict):
        found = {schema["$ref"].removeprefix(COMPONENTS)} if str(
            schema.get("$ref", "")).startswith(COMPONENTS) else set()
        return found.union(*(_names(value) for value in schema.values()))
    if isinstance(schema, list):
        return set().union(*(_names(value) for value in schema))
    return set()


def _local(schema):
    """A copy of `schema` without annotations, its references to the document's components
    pointed at `$defs`."""
    if isinstance(schema, list):
        return [_local(value) for value in schema]
    if not isinstance(schema, dict):
        return schema
    local = {}
    for key, value in schema.items():
        if key in NAMED_SCHEMAS:
            local[key] = {name: _local(named) for name, named in value.items()}
        elif key == "$ref":
            local[key] = value.replace(COMPONENTS, "#/$defs/", 1)
        elif key not in ANNOTATIONS:
            local[key] = _local(value)
    return local

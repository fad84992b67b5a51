"""The shapes of the document's schemas as the reference shows them: an object's fields
(name, type, nullable, required, meaning) and an example value made from the schema.

Examples follow each schema's own `example` when it has one; otherwise each value is made
from its type, format, enum, bounds and pattern, with a plausible value for common field
names, so that every example is valid against its schema (tests/pages/test_docs.py checks).
"""

from __future__ import annotations

import dataclasses
import re

from edge.openapi import resolve

# Values for fields of these names, when their schema allows them.
_NAMED = {
    "id": "evt_01J9Z3K8Q4", "slug": "strijkijzer-nacht-2026-06-06", "title": "Strijkijzer Nacht",
    "name": "De School", "city": "Amsterdam", "country": "NL", "currency": "EUR",
    "timezone": "Europe/Amsterdam", "address": "Doctor Jan van Breemenstraat 1",
    "start": "23:00", "end": "06:00", "code": "DN-7K2Q9XRM", "email": "info@example.org",
    "handle": "sanne.devries", "message": "is not valid", "request_id":
    "6f1c2d9e-3b7a-4c1e-9a53-0d2b8e4f7a10", "version": "2026-01-01", "genre": "Techno",
    "status": "approved", "ok": True, "age": 18, "updated_at": 1780000000, "created_at": 1780000000,
    "lat": 52.3547, "lng": 4.8553,
}
_FORMATS = {"date": "2026-06-06", "date-time": "2026-06-06T23:00:00+02:00",
            "uri": "https://agenda.example/events/strijkijzer-nacht-2026-06-06",
            "email": "info@example.org", "uuid": "6f1c2d9e-3b7a-4c1e-9a53-0d2b8e4f7a10"}
# Deep enough for every schema of the document; a cycle stops here.
_DEPTH = 8


@dataclasses.dataclass(frozen=True)
class Field:
    """One field of an object: its type in words, the schema it refers to, if any."""

    name: str
    type: str
    model: str | None
    required: bool
    nullable: bool
    description: str


def merged(document: dict, schema: dict) -> dict:
    """`schema` resolved, its `allOf` parts merged (properties and required lists joined)."""
    schema = resolve(document, schema)
    if "allOf" not in schema:
        return schema
    result = {key: value for key, value in schema.items() if key != "allOf"}
    properties, required = {}, []
    for part in schema["allOf"]:
        part = merged(document, part)
        properties |= part.get("properties", {})
        required += part.get("required", [])
        result = {**part, **result}
    result["properties"] = properties | schema.get("properties", {})
    result["required"] = required + schema.get("required", [])
    return result


def model_name(schema: dict) -> str | None:
    """The component a schema refers to (an array's items included)."""
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if schema.get("type") == "array" and "items" in schema:
        return model_name(schema["items"])
    return None


def type_of(document: dict, schema: dict) -> tuple[str, bool]:
    """(type in words, nullable) of a field's schema."""
    if "$ref" in schema:
        target = resolve(document, schema)
        name = schema["$ref"].rsplit("/", 1)[-1]
        if target.get("type") == "object" or "allOf" in target or "properties" in target:
            return name, False
        words, nullable = type_of(document, {k: v for k, v in target.items()
                                             if k not in ("description", "title")})
        return f"{words} ({name})", nullable
    for choice in ("oneOf", "anyOf"):
        if choice in schema:
            kinds = [type_of(document, option) for option in schema[choice]]
            named = [words for words, _ in kinds if words != "null"]
            return " or ".join(named), any(words == "null" or null for words, null in kinds)
    kind = schema.get("type", "any")
    kinds = kind if isinstance(kind, list) else [kind]
    nullable = "null" in kinds
    kinds = [k for k in kinds if k != "null"] or ["null"]
    words = " | ".join(kinds)
    if words == "array" and "items" in schema:
        words = f"array of {type_of(document, schema['items'])[0]}"
    if schema.get("format"):
        words += f", {schema['format']}"
    if "enum" in schema:
        words += ": " + ", ".join(str(value) for value in schema["enum"] if value is not None)
    return words, nullable


def fields(document: dict, schema: dict, prefix: str = "", depth: int = 0, *,
           expand: bool = False) -> list[Field]:
    """The fields of an object schema, in the document's order; the fields of an object
    written in place (with `expand`, of any object) follow it as `name.field`."""
    schema = merged(document, schema)
    required = set(schema.get("required", []))
    found = []
    for name, field in schema.get("properties", {}).items():
        words, nullable = type_of(document, field)
        description = field.get("description") or resolve(document, field).get("description", "")
        found.append(Field(name=prefix + name, type=words, model=model_name(field),
                           required=name in required, nullable=nullable,
                           description=description))
        whole = merged(document, field)
        inner = whole.get("items", {}) if whole.get("type") == "array" else field
        if (("$ref" not in inner or expand) and merged(document, inner).get("properties")
                and depth < _DEPTH):
            path = f"{prefix}{name}[]." if inner is not field else f"{prefix}{name}."
            found += fields(document, inner, path, depth + 1, expand=expand)
    return found


def example(document: dict, schema: dict, name: str = "", depth: int = 0):
    """An example value of `schema` (for a field called `name`)."""
    if "example" in schema:
        return schema["example"]
    schema = merged(document, schema)
    if "example" in schema:
        return schema["example"]
    if depth > _DEPTH:
        return None
    for choice in ("oneOf", "anyOf"):
        if choice in schema:
            options = [o for o in schema[choice] if resolve(document, o).get("type") != "null"]
            return example(document, (options or schema[choice])[0], name, depth + 1)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        values = [value for value in schema["enum"] if value is not None]
        return _NAMED.get(name) if _NAMED.get(name) in values else values[0] if values else None
    kind = schema.get("type", "object")
    kinds = kind if isinstance(kind, list) else [kind]
    kind = next((k for k in kinds if k != "null"), "null")
    if "null" in kinds and kind == "string" and name not in _NAMED:
        # A text that may be absent usually is (a cancel reason, a second date).
        return None
    if kind == "object":
        return {key: example(document, value, key, depth + 1)
                for key, value in schema.get("properties", {}).items()}
    if kind == "array":
        item = example(document, schema.get("items", {}), name, depth + 1)
        return [item] * max(1, schema.get("minItems", 1))
    if kind in ("integer", "number"):
        return _number(schema, name, kind)
    if kind == "boolean":
        return _NAMED.get(name) is True
    if kind == "string":
        return _string(schema, name)
    return None


def _number(schema: dict, name: str, kind: str):
    named = _NAMED.get(name)
    low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    value = named if isinstance(named, int | float) and not isinstance(named, bool) else (
        max(low, 12.5 if kind == "number" else 1))
    if high is not None and value > high:
        value = high
    return int(value) if kind == "integer" else value


def _string(schema: dict, name: str) -> str:
    candidates = [_FORMATS.get(schema.get("format", "")), _NAMED.get(name), "23:00", "example"]
    pattern = schema.get("pattern")
    for value in candidates:
        if isinstance(value, str) and (pattern is None or re.search(pattern, value)) and (
                len(value) <= schema.get("maxLength", len(value))):
            if value == "23:00" and pattern is None and name not in ("start", "end"):
                continue
            return value
    return "x" * max(1, schema.get("minLength", 1))

"""A GET request's handler arguments read from its path and query by the document, for a
layer answering before the framework (the response cache's misses, edge/cache.py).

Connexion turns parameters into arguments: each declared query parameter by its schema's
type, defaults filled in, names made Pythonic (`from` -> `from_`, `id` -> `id_`). This
does the same for the plain forms only, and checks each value with the parameter's own
schema (JSON Schema 2020-12, formats checked, as edge/openapi.py's validators do). Any
other request is not read here: an undeclared or repeated parameter, an empty value,
a value that is not UTF-8 or that holds a control character, a number that is not
plain ASCII digits, a boolean other than `true`/`false`, a value the schema refuses.
`read` gives None for those and the request goes the full way, where Connexion either
reads it the same way or explains what is wrong: this reader never answers an error.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import urllib.parse
from collections.abc import Callable

from connexion.decorators.parameter import pythonic
from jsonschema import Draft202012Validator

from edge.openapi import plain_integer, plain_number, resolve

FORMATS = Draft202012Validator.FORMAT_CHECKER
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _boolean(text: str):
    return {"true": True, "false": False}.get(text)


def _unread(_text: str) -> None:
    """A kind of value not read here (an array, an object): the full way reads it."""


# Numbers as the validators read them (edge/openapi.py: ASCII digits, finite).
_TYPES: dict[str | None, Callable[[str], object]] = {
    "boolean": _boolean, "integer": plain_integer, "number": plain_number, "string": str,
    None: str}


def _same(value):
    return value


# A value given of its parameter's type (`Arguments.given`) as `read` reads its text: a
# number as a float, so that `max_price` 30 and `max_price=30` are one key.
_GIVEN: dict[str | None, Callable[[object], object]] = {"number": float}


@dataclasses.dataclass(frozen=True)
class _Parameter:
    argument: str  # the handler's argument name
    convert: Callable[[str], object]
    valid: Callable[[object], bool]
    # A value given of its type (`Arguments.given`) as `read` reads its text.
    typed: Callable[[object], object]


# The keywords the document's parameters are checked by, as predicates over a value of the
# schema's type (`convert` made it); a schema with any other keyword is checked by
# jsonschema. The same verdicts (tests/edge/test_arguments.py), ~1 µs instead of ~9 a value.
_CHECKS: dict[str, Callable[[object], Callable[[object], bool]]] = {
    "maxLength": lambda bound: lambda value: len(value) <= bound,
    "minLength": lambda bound: lambda value: len(value) >= bound,
    "maximum": lambda bound: lambda value: value <= bound,
    "minimum": lambda bound: lambda value: value >= bound,
    "enum": lambda allowed: lambda value: value in allowed,
    "pattern": lambda pattern: re.compile(pattern).search,
    "format": lambda name: functools.partial(FORMATS.conforms, format=name),
}
_UNCHECKED = {"type", "default", "description"}  # the type is `convert`'s


def validity(schema: dict) -> Callable[[object], bool]:
    """Whether a value of the schema's type is valid by `schema`."""
    if (set(schema) - _UNCHECKED - set(_CHECKS)
            or schema.get("type") not in ("string", "integer", "number", "boolean")):
        return Draft202012Validator(schema, format_checker=FORMATS).is_valid
    checks = [_CHECKS[keyword](schema[keyword]) for keyword in schema if keyword in _CHECKS]
    return lambda value: all(check(value) for check in checks)


class Arguments:
    """The arguments of one GET operation's handler, from its path template and query."""

    def __init__(self, document: dict, route: str, parameters: list[dict]):
        self._route = route
        self._query: dict[str, _Parameter] = {}
        self._path: dict[int, tuple[str, _Parameter]] = {}
        self._defaults: dict[str, object] = {}
        # Every parameter by its name in the document, path and query alike (`given`).
        self._named: dict[str, _Parameter] = {}
        segments = route.split("/")
        for parameter in (resolve(document, p) for p in parameters):
            schema = resolve(document, parameter.get("schema", {}))
            read = _Parameter(pythonic(parameter["name"]), _TYPES.get(schema.get("type"), _unread),
                              validity(schema), _GIVEN.get(schema.get("type"), _same))
            self._named[parameter["name"]] = read
            if parameter["in"] == "query":
                self._query[parameter["name"]] = read
                if "default" in schema:
                    self._defaults[read.argument] = schema["default"]
            elif parameter["in"] == "path":
                self._path[segments.index("{" + parameter["name"] + "}")] = (parameter["name"],
                                                                              read)

    def read(self, path: str, query: bytes) -> dict | None:
        """The handler's keyword arguments for this request, or None when it is not one
        this reader reads (see the module's text)."""
        arguments = dict(self._defaults)
        segments = path.split("/")
        for index, (_name, parameter) in self._path.items():
            value = _value(parameter, segments[index])
            if value is None:
                return None
            arguments[parameter.argument] = value
        try:
            pairs = urllib.parse.parse_qsl(query.decode("latin-1"), keep_blank_values=True,
                                           encoding="utf-8", errors="strict")
        except UnicodeDecodeError:
            return None
        seen = set()
        for name, text in pairs:
            parameter = self._query.get(name)
            if parameter is None or name in seen:
                return None
            seen.add(name)
            value = _value(parameter, text)
            if value is None:
                return None
            arguments[parameter.argument] = value
        return arguments

    def given(self, values: dict[str, object]) -> tuple[str, dict]:
        """The path and handler arguments of a request whose parameters, path and query
        alike by their names in the document, a surface gives as values of their types,
        checked by types of its own (MCP's tools, mcp_server/arguments.py): what `read`
        reads of the same request written plainly, so that both are kept under one key
        (edge/cache.py `Keys`). A None value is a parameter left out; a value the
        parameter's schema refuses is a ValueError naming it."""
        arguments = dict(self._defaults)
        segments = self._route.split("/")
        for name, value in values.items():
            if value is None:
                continue
            parameter = self._named[name]
            value = parameter.typed(value)
            if not parameter.valid(value):
                raise ValueError(f"{name}: {value!r} is not a valid value.")
            arguments[parameter.argument] = value
        for index, (_name, parameter) in self._path.items():
            segments[index] = arguments[parameter.argument]
        return "/".join(segments), arguments


def _value(parameter: _Parameter, text: str):
    """`text` as the parameter's type, when plainly written and valid; else None."""
    if not text or _CONTROL.search(text):
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return None
    value = parameter.convert(text)
    if value is None or not parameter.valid(value):
        return None
    return value

"""Marshmallow output schemas, named after the OpenAPI components they produce.

One module per resource; this one holds what they share: links and attribution.
"""

from __future__ import annotations

import functools
import hashlib
import keyword
import threading
from collections.abc import Callable, Mapping
from importlib.metadata import version
from typing import Any

from marshmallow import Schema, fields, missing
from marshmallow.experimental.context import Context

from edge import context


def site_url() -> str:
    """The site root for public page links (a marshmallow Context may set it, e.g. for MCP)."""
    given = Context.get(default=None)
    return (given and given.get("site_url")) or context.settings().site_url


def fingerprint(schema: type[Schema]) -> str:
    """What a schema's output is made by, as a digest: for output kept outside the process
    (models/events.py `KEPT_SUMMARIES`), which another release with another output must not
    read. Each field's name, class, key, attribute and options, a Function field's code, a
    nested schema's own fingerprint, and marshmallow's version; `FINGERPRINT_LAYOUT`
    besides, for a change these do not show (a field class's own output)."""
    parts = [str(FINGERPRINT_LAYOUT), MARSHMALLOW_VERSION, schema.__qualname__]
    for name, field in schema._declared_fields.items():
        parts.append(_field_print(name, field))
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


# Raised by hand when the output of a field changes in a way `fingerprint` does not see.
FINGERPRINT_LAYOUT = 1
MARSHMALLOW_VERSION = version("marshmallow")


def _field_print(name: str, field: fields.Field) -> str:
    kind = type(field)
    options = {key: getattr(field, key, None) for key in (
        "data_key", "attribute", "allow_none", "format", "as_string", "dump_default", "only",
        "exclude", "many")}
    parts = [name, f"{kind.__module__}.{kind.__qualname__}", repr(sorted(options.items()))]
    if isinstance(field, fields.Function):
        code = field.serialize_func.__code__
        parts += [code.co_code.hex(), repr(code.co_consts), repr(code.co_names)]
    if isinstance(field, fields.Nested):
        nested = field.nested
        parts.append(fingerprint(nested if isinstance(nested, type) else type(field.schema)))
    if isinstance(field, fields.List):
        parts.append(_field_print("inner", field.inner))
    return "\x1e".join(parts)


def attribution(settings) -> dict:
    """The credit the terms require wherever the data is shown."""
    return {
        "text": f"Data: {settings.provider_name} ({settings.site_url})",
        "url": settings.site_url,
        "terms": f"{settings.base_url}/terms",
    }


def page_url(kind: str):
    """A field with the public page of an object: `{site_url}/{kind}/{id}`."""
    return fields.Function(lambda obj: f"{site_url()}/{kind}/{obj.id}")


class OutputSchema(Schema):
    """marshmallow's `Schema`, dumping objects by a function compiled from its fields once.

    marshmallow finds each field's value again for every object (its accessor, default
    and dotted-path handling: ~50 µs an event summary, most of a list page's cost). This
    schema compiles its fields once into one function (`_compiled`) that reads each plain
    attribute and hands it to the field's own `_serialize`, so the output is the field's,
    as marshmallow dumps it; a value the field would give back as it is (a `str` to a
    String, None to a field that allows it) is not handed over at all, a date is formatted
    by the very function its Date field calls, a Function field's function is called, and
    a nested schema of this kind without hooks, alone or as the items of a list, is dumped
    by its own compiled function. A mapping is read by its keys, as marshmallow reads one (a
    key it lacks, marshmallow's way). A field whose value is not a plain attribute or key (a
    dotted path, a missing one with its default), or a schema with its own accessor, goes
    marshmallow's way. Hooks (`pre_dump`, `post_dump`) run as always: `dump` calls this.
    """

    def _serialize(self, obj: Any, *, many: bool = False):
        dumps = self.__dict__["_dumps"] if "_dumps" in self.__dict__ else self._compile()
        if many and obj is not None:
            if dumps is None:
                return [Schema._serialize(self, item) for item in obj]
            of_object, of_mapping = dumps
            return [of_mapping(item) if _is_mapping(item) else of_object(item) for item in obj]
        if dumps is None:
            return super()._serialize(obj)
        return dumps[1](obj) if _is_mapping(obj) else dumps[0](obj)

    def _compile(self) -> tuple[Callable, Callable] | None:
        """This schema's dumps of one object and of one mapping (None: marshmallow's way for
        all), compiled once for every instance of its class with the same fields (tools make
        one a call)."""
        if type(self).get_attribute is not Schema.get_attribute:
            dumps = None
        else:
            shape = self._shape()
            dumps = _COMPILED.get(shape)
            if dumps is None:
                _compiling().add(shape)
                try:
                    dumps = _COMPILED.setdefault(shape, (_compiled(self, mapping=False),
                                                         _compiled(self, mapping=True)))
                finally:
                    _compiling().discard(shape)
        self.__dict__["_dumps"] = dumps
        return dumps

    def _shape(self) -> tuple:
        """What its compiled dump depends on: its class and the fields it dumps."""
        return (type(self), None if self.only is None else frozenset(self.only),
                frozenset(self.exclude), frozenset(self.load_only))


# The days whose text a compiled Date field remembers (a few years of an agenda).
DAYS_REMEMBERED = 4096

# Compiled dumps (of an object, of a mapping) by schema class and the fields an instance
# dumps (a handful in all).
_COMPILED: dict[tuple, tuple[Callable[[Any], dict], Callable[[Any], dict]]] = {}
# The shapes this thread is compiling now: a schema nested in itself calls its own
# `_serialize` (its dump does not exist yet).
_THREAD = threading.local()


def _compiling() -> set[tuple]:
    shapes = getattr(_THREAD, "compiling", None)
    if shapes is None:
        shapes = _THREAD.compiling = set()
    return shapes


@functools.cache
def _remembered(formatting: Callable) -> Callable:
    """`formatting` remembering the text of the last `DAYS_REMEMBERED` days it was given:
    one memory for every Date field it formats."""
    return functools.lru_cache(maxsize=DAYS_REMEMBERED)(formatting)


# What marshmallow's reading of a key of a mapping (`utils.get_value`) turns to its
# attribute for: reading it so is marshmallow's way.
_NOT_READ_BY_KEY = "(KeyError, IndexError, TypeError, AttributeError)"


def _compiled(schema: Schema, *, mapping: bool) -> Callable[[Any], dict]:
    """One function that dumps an object (or a `mapping`) by the schema's fields, each as
    marshmallow would: its source is written here once, a line or a few for each field, and
    compiled."""
    names = {"missing": missing, "accessor": schema.get_attribute}
    lines = ["def dump(obj):", "    output = {}"]
    for number, (name, field) in enumerate(schema.dump_fields.items()):
        key, attribute = field.data_key or name, field.attribute or name
        names[f"field{number}"] = field
        marshmallows_way = [
            f"value = field{number}.serialize({name!r}, obj, accessor=accessor)",
            "if value is not missing:",
            f"    output[{key!r}] = value"]
        if type(field) is fields.Function:
            # What `Function.serialize` comes to: its function of the object.
            names[f"function{number}"] = field.serialize_func
            lines += [f"    value = function{number}(obj)",
                      *(f"    {line}" for line in marshmallows_way[1:])]
            continue
        if not field._CHECK_ATTRIBUTE or "." in attribute:
            lines += [f"    {line}" for line in marshmallows_way]
            continue
        if mapping:
            read, unread = f"obj[{attribute!r}]", _NOT_READ_BY_KEY
        else:
            read = (f"obj.{attribute}" if attribute.isidentifier()
                    and not keyword.iskeyword(attribute) else f"getattr(obj, {attribute!r})")
            unread = "AttributeError"
        lines += ["    try:",
                  f"        value = {read}",
                  f"    except {unread}:",
                  *(f"        {line}" for line in marshmallows_way),
                  "    else:",
                  f"        output[{key!r}] = {_converted(field, number, name, names)}"]
    source = "\n".join([*lines, "    return output"])
    name = f"<{type(schema).__name__}.dump{'_mapping' if mapping else ''}>"
    exec(compile(source, name, "exec"), names)  # noqa: S102
    return names["dump"]


def _converted(field: fields.Field, number: int, name: str, names: dict) -> str:
    """The expression of a plain attribute's `value` as `field` dumps it (`field{number}`)."""
    serialized = f"field{number}._serialize(value, {name!r}, obj)"
    kind = type(field)
    if kind in _UNCHANGED and not getattr(field, "as_string", False):
        # `_serialize` gives these back as they are, None included.
        names[f"kind{number}"] = _UNCHANGED[kind]
        return f"value if value is None or type(value) is kind{number} else {serialized}"
    formatting = kind is fields.Date and field.SERIALIZATION_FUNCS.get(
        field.format or field.DEFAULT_FORMAT)
    if formatting:
        # What `Date._serialize` calls: `dt.date.isoformat`, for "iso" and "iso8601"; each
        # day's text made once (CPython formats a date through its printf, ~440 ns; a page's
        # events fall on a few days).
        names[f"format{number}"] = _remembered(formatting)
        return f"None if value is None else format{number}(value)"
    if kind is fields.List and type(field.inner) is fields.String:
        names[f"inner{number}"] = field.inner
        return (f"None if value is None else [each if type(each) is str else "
                f"inner{number}._serialize(each, {name!r}, obj) for each in value]")
    if kind is fields.Nested and _plainly_nested(field):
        # What `Nested._serialize` calls, `schema.dump`, is this when the schema has no hooks:
        # its compiled dumps of an object and of a mapping, called here.
        schema = names[f"nested{number}"] = field.schema
        dumps = _nested_dumps(schema)
        if dumps is None:
            return f"None if value is None else nested{number}._serialize(value)"
        return f"None if value is None else {_dumped('value', number, dumps, names)}"
    if kind is fields.List and type(field.inner) is fields.Nested \
            and _plainly_nested(field.inner):
        # What `List._serialize` comes to: each item as its `Nested` dumps it (above).
        dumps = _nested_dumps(field.inner.schema)
        if dumps is not None:
            return (f"None if value is None else [None if each is None else "
                    f"{_dumped('each', number, dumps, names)} for each in value]")
    return serialized


def _plainly_nested(field: fields.Nested) -> bool:
    """Whether `field` dumps one object by a schema of this kind without hooks."""
    return (not field.many and isinstance(field.schema, OutputSchema)
            and not field.schema.many and not any(field.schema._hooks.values()))


def _nested_dumps(schema: OutputSchema) -> tuple[Callable, Callable] | None:
    """A nested schema's compiled dumps; None while they are being compiled (a schema that
    nests itself) or when it has none."""
    return None if schema._shape() in _compiling() else schema._compile()


def _dumped(value: str, number: int, dumps: tuple[Callable, Callable], names: dict) -> str:
    """The expression of `value` (not None) dumped by a nested schema's compiled `dumps`."""
    names[f"nested_dump{number}"], names[f"nested_mapping{number}"] = dumps
    names["is_mapping"] = _is_mapping
    return (f"nested_mapping{number}({value}) if is_mapping({value}) "
            f"else nested_dump{number}({value})")


def _is_mapping(obj: Any) -> bool:
    """Whether `obj` is a mapping, remembered by its type (an ABC's check costs ~0.3 µs)."""
    kind = type(obj)
    known = _MAPPINGS.get(kind)
    if known is None:
        known = _MAPPINGS[kind] = isinstance(obj, Mapping)
    return known


_MAPPINGS: dict[type, bool] = {}


# Fields (these very classes, not subclasses) whose `_serialize` gives a value of exactly
# this type back unchanged, and None as None: `str(text)`, `int(number)`, `float(number)`,
# a bool as itself.
_UNCHANGED: dict[type, type] = {fields.String: str, fields.Integer: int, fields.Float: float,
                                fields.Boolean: bool}

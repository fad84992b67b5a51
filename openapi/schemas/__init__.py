"""Marshmallow output schemas, named after the OpenAPI components they produce.

One module per resource; this one holds what they share: links and attribution.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from marshmallow import Schema, fields, missing
from marshmallow.experimental.context import Context

from edge import context


def site_url() -> str:
    """The site root for public page links (a marshmallow Context may set it, e.g. for MCP)."""
    return Context.get(default={}).get("site_url") or context.settings().site_url


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
    """marshmallow's `Schema`, dumping objects by a plan of its fields made once.

    marshmallow finds each field's value again for every object (its accessor, default
    and dotted-path handling: ~150 µs an event summary, most of a list page's cost). The
    plan reads a plain attribute with `getattr` and hands it to the field's own
    `_serialize`, so the output is the field's, as marshmallow dumps it; a value the field
    would give back as it is (a `str` to a String) is not handed over at all. A field whose
    value is not a plain attribute (a function, a dotted path, a missing attribute with
    its default), a mapping, or a schema with its own accessor goes marshmallow's way.
    Hooks (`pre_dump`, `post_dump`) run as always: `dump` calls this.
    """

    def _serialize(self, obj: Any, *, many: bool = False):
        if many and obj is not None:
            return [self._serialize(item) for item in obj]
        if isinstance(obj, Mapping) or type(self).get_attribute is not Schema.get_attribute:
            return super()._serialize(obj)
        plan = self.__dict__.get("_plan")
        if plan is None:
            plan = self.__dict__["_plan"] = _plan(self)
        output = {}
        for key, name, attribute, field, unchanged in plan:
            value = missing if attribute is None else getattr(obj, attribute, missing)
            if value is missing:
                value = field.serialize(name, obj, accessor=self.get_attribute)
                if value is missing:
                    continue
            elif type(value) is not unchanged:
                value = field._serialize(value, name, obj)
            output[key] = value
        return output


def _plan(schema: Schema) -> list[tuple[str, str, str | None, fields.Field, type | None]]:
    """Each dumped field's key, name, plain attribute (None: marshmallow's way), field, and
    the type of value the field dumps as it is (`_UNCHANGED`)."""
    plan = []
    for name, field in schema.dump_fields.items():
        attribute = field.attribute or name
        plain = field._CHECK_ATTRIBUTE and "." not in attribute
        unchanged = None if getattr(field, "as_string", False) else _UNCHANGED.get(type(field))
        plan.append((field.data_key or name, name, attribute if plain else None, field,
                     unchanged))
    return plan


# Fields (these very classes, not subclasses) whose `_serialize` gives a value of exactly
# this type back unchanged: `str(text)`, `int(number)`, `float(number)`, a bool as itself.
_UNCHANGED: dict[type, type] = {fields.String: str, fields.Integer: int, fields.Float: float,
                                fields.Boolean: bool}

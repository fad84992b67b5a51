"""Marshmallow output schemas, named after the OpenAPI components they produce.

One module per resource; this one holds what they share: links and attribution.
"""

from __future__ import annotations

from marshmallow import fields
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

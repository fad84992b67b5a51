"""Marshmallow output schemas, named after the OpenAPI components they produce."""

from __future__ import annotations

from marshmallow import Schema, fields
from marshmallow.experimental.context import Context

from agenda import request


def site_url() -> str:
    """The site root for public page links (a marshmallow Context may set it, e.g. for MCP)."""
    return Context.get(default={}).get("site_url") or request.settings().site_url


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


class OrganisationSchema(Schema):
    """`Organisation`."""

    id = fields.String()
    name = fields.String()
    bio = fields.String()
    website = fields.String()
    url = page_url("organisations")
    verified = fields.Boolean()
    since = fields.Integer()
    events_count = fields.Integer()


class TokenSchema(Schema):
    """`Me.token`: the caller's own token, without its secret."""

    id = fields.String()
    name = fields.String()
    prefix = fields.String()
    scopes = fields.List(fields.String(), attribute="scope_list")
    created_at = fields.Integer()
    last_used_at = fields.Function(lambda token: token.last_used_at or token.created_at)


class RateLimitSchema(Schema):
    """`Me.rate_limit`."""

    per_minute = fields.Integer()
    remaining_this_minute = fields.Integer()
    per_day = fields.Integer()
    used_today = fields.Integer()


class MeSchema(Schema):
    """`Me`: the token, its organisation, limits and today's usage."""

    token = fields.Nested(TokenSchema)
    organisation = fields.Nested(OrganisationSchema)
    rate_limit = fields.Nested(RateLimitSchema)
    usage_today = fields.List(fields.Dict())


class ProviderSchema(Schema):
    """`Terms.provider`."""

    name = fields.String(attribute="provider_name")
    chamber_of_commerce = fields.String(attribute="provider_chamber_of_commerce")
    vat = fields.String(attribute="provider_vat")
    address = fields.String(attribute="provider_address")


TERMS_RULES = [
    "Credit the Event Agenda Service wherever its data is shown, with a link back to the "
    "event's page (the event's `url`).",
    "Send the token in the Authorization header only; never put it in a URL or in code that "
    "runs on users' devices.",
    "Stay within the rate limits; creating extra tokens to get around them is not allowed.",
    "Do not resell the data as a data set or present it as your own.",
    "Show cancellations and postponements as the agenda gives them.",
]


class TermsSchema(Schema):
    """`Terms`, built from the settings."""

    version = fields.String(attribute="terms_version")
    attribution = fields.Function(lambda settings: attribution(settings))
    rules = fields.Function(lambda _settings: TERMS_RULES)
    rate_limits = fields.Function(
        lambda settings: {"per_minute": settings.per_minute, "per_day": settings.per_day})
    data_sources = fields.Function(
        lambda _settings: "Event data is entered by organisations and the agenda team and "
                          "imported from partner feeds; token prices come from visitor reports.")
    sources_url = fields.Function(lambda settings: f"{settings.site_url}/sources")
    contact = fields.String()
    provider = fields.Function(lambda settings: ProviderSchema().dump(settings))

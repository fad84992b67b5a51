"""`Terms`, built from the settings."""

from marshmallow import fields

from openapi.schemas import OutputSchema, attribution


class ProviderSchema(OutputSchema):
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


class TermsSchema(OutputSchema):
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

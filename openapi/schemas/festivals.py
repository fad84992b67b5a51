"""`TokenPrices` and `TokenReport`."""

from marshmallow import fields

from models.festivals import cents
from openapi.schemas import OutputSchema, site_url


class PreviousEditionSchema(OutputSchema):
    """`PreviousEdition`: the figures of the festival's edition before this one."""

    event_id = fields.Function(lambda edition: edition.event.id)
    title = fields.Function(lambda edition: edition.event.title)
    date = fields.Function(lambda edition: edition.event.date.isoformat())
    season = fields.Function(lambda edition: edition.event.season)
    token_price = fields.Function(lambda edition: _cents_or_none(edition.token_price))
    drink_price = fields.Function(lambda edition: _cents_or_none(edition.drink_price))
    reports = fields.Integer()


class SeasonCompareSchema(OutputSchema):
    """`SeasonCompare`: this festival against the season's others."""

    season = fields.Integer()
    median = fields.Function(lambda compare: _cents_or_none(compare.median))
    festivals = fields.Integer()
    diff = fields.Function(lambda compare: _cents_or_none(compare.diff))


class TokenPricesSchema(OutputSchema):
    """`TokenPrices`: the figures of one festival edition, money in cents only here."""

    event_id = fields.Function(lambda prices: prices.event.id)
    festival_key = fields.Function(lambda prices: prices.event.festival_key)
    season = fields.Function(lambda prices: prices.event.season)
    verified = fields.Constant(False)
    previous_edition = fields.Nested(PreviousEditionSchema, allow_none=True)
    season_compare = fields.Nested(SeasonCompareSchema)
    url = fields.Function(
        lambda prices: f"{site_url()}/events/{prices.event.slug}/token-prices")

    def dump(self, obj, **kwargs):
        """The figures (`Figures.rounded`) with the edition's identity and comparisons, in
        the order of the document."""
        fields = {**super().dump(obj, **kwargs), **obj.figures.rounded()}
        return {name: fields[name] for name in ORDER}


ORDER = ("event_id", "festival_key", "season", "verified", "reports", "last_report_at",
         "confidence", "token_price", "token_price_channel", "presale", "onsite", "saving",
         "drink_tokens", "drink_price", "refund", "outliers", "example", "previous_edition",
         "season_compare", "url")


class TokenReportSchema(OutputSchema):
    """`TokenReport`: one anonymous report; nothing about the reporter."""

    id = fields.String()
    paid = fields.Float()
    tokens = fields.Float()
    token_price = fields.Function(lambda report: cents(report.token_price))
    drink_tokens = fields.Float()
    channel = fields.String()
    refund = fields.String()
    tier = fields.String()
    weight = fields.Float()
    created_at = fields.Integer()


def _cents_or_none(amount: float | None) -> float | None:
    return None if amount is None else cents(amount)

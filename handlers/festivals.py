"""GET /events/{id}/token-prices and /events/{id}/token-reports: drink tokens at festivals."""

from edge import paging
from edge.context import session, settings
from handlers import envelope
from models import festivals
from openapi.schemas.festivals import TokenPricesSchema, TokenReportSchema

prices = TokenPricesSchema()
reports = TokenReportSchema(many=True)


def get_token_prices(id_: str):
    """The token-price figures of a festival edition, from its visitors' reports."""
    return envelope.public(prices.dump(festivals.token_prices(session(), id_)))


def list_token_reports(id_: str, limit: int, cursor=None):
    """A festival edition's reports, newest first."""
    page = paging.page(festivals.ReportFilters(event=id_), cursor, secret=settings().secret_key,
                       fetch=lambda after: festivals.list_reports(session(), id_, limit=limit,
                                                                  after=after))
    return envelope.public_page(reports.dump(page.items), limit=limit,
                                next_cursor=page.next_cursor)

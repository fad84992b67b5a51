"""GET /events/{id}/token-prices and /events/{id}/token-reports: drink tokens at festivals."""

from edge.context import session
from handlers import envelope, paging
from models import festivals
from openapi.schemas.festivals import TokenPricesSchema, TokenReportSchema

prices = TokenPricesSchema()
reports = TokenReportSchema(many=True)


def get_token_prices(id_: str):
    """The token-price figures of a festival edition, from its visitors' reports."""
    return envelope.public(prices.dump(festivals.token_prices(session(), id_)))


def list_token_reports(id_: str, limit: int, cursor=None):
    """A festival edition's reports, newest first."""
    binding = {"event": id_}
    page = festivals.list_reports(session(), id_, limit=limit, after=paging.after(
        cursor, kind="token_reports", filters=binding))
    return envelope.public_page(reports.dump(page.items), limit=limit, next_cursor=(
        paging.next_cursor(page, kind="token_reports", filters=binding)))

"""Festival drink-token prices: anonymous visitor reports and the figures built from them.

A festival is an event with a `festival_key` (the festival across editions) and
a `season` (the edition's year). Visitors report what they paid for how many
tokens, where they bought them and how many tokens a drink took. The figures
follow decisions.md ("Token prices and reports") rule by rule; `figures` is the
whole computation, a pure function of the reports, so that it is tested on its
own. It works in decimal arithmetic (a price of 26.75 / 10 tokens is 2.675, not
the binary float just below it), and money is rounded to cents, half up, only
in `Figures.rounded`.

Each report keeps whether it is an outlier now (`outlier`, for the reporter
badge) and each festival with reports has a row in `festival_figures` with the
numbers other festivals are compared with (previous edition, season). Both are
written by `refresh`, which every writer of reports calls.
"""

from __future__ import annotations

import collections
import dataclasses
import decimal
import statistics
from collections.abc import Iterable, Sequence

from sqlalchemy import Boolean, Float, ForeignKey, Index, Integer, String, delete, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from models.db import Base, Timestamp, insert_for
from models.errors import NotFound
from models.events import PUBLIC, Event, get_event
from models.paging import Filters, Page, keyset_page

# Weights in tenths, so that sums and halves are exact: ticket 1.0, going 0.6, visitor 0.3.
TIER_TENTHS = {"ticket": 10, "going": 6, "visitor": 3}
TIERS = tuple(TIER_TENTHS)
CHANNELS = ("presale", "onsite")
REFUNDS = ("yes", "no", "partial", "unknown")
# Outliers: more than OUTLIER_MADS scaled median absolute deviations from the channel's
# weighted median, judged only in a channel of at least OUTLIER_MIN_REPORTS reports.
OUTLIER_MADS = 3
MAD_SCALE = decimal.Decimal("1.4826")
OUTLIER_MIN_REPORTS = 5
# Confidence from the total weight of the reports (in tenths): low < 3, medium < 10.
CONFIDENCE = ((30, "low"), (100, "medium"))
_CENT = decimal.Decimal("0.01")


class TokenReport(Base):
    """One visitor's report; `person_id` is kept for the reporter badge and never shown."""

    __tablename__ = "token_reports"
    __table_args__ = (
        Index("ix_token_reports_event_order", "event_id", "created_at", "id"),
        Index("ix_token_reports_person", "person_id", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(80), primary_key=True)
    event_id: Mapped[str] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"))
    person_id: Mapped[str | None] = mapped_column(ForeignKey("people.id", ondelete="SET NULL"),
                                                  nullable=True)
    paid: Mapped[float] = mapped_column(Float)
    tokens: Mapped[float] = mapped_column(Float)
    drink_tokens: Mapped[float] = mapped_column(Float)
    channel: Mapped[str] = mapped_column(String(10))
    refund: Mapped[str] = mapped_column(String(10), default="unknown")
    tier: Mapped[str] = mapped_column(String(10))
    outlier: Mapped[bool] = mapped_column(Boolean, default=False)
    source: Mapped[str] = mapped_column(String(100), default="")
    created_at: Mapped[int] = mapped_column(Timestamp)

    @property
    def token_price(self) -> decimal.Decimal:
        """Euros per token of this purchase, exact to 28 digits."""
        return _exact(self.paid) / _exact(self.tokens)

    @property
    def weight(self) -> float:
        """The weight of the reporter's tier (1.0, 0.6 or 0.3)."""
        return TIER_TENTHS[self.tier] / 10


class FestivalFigures(Base):
    """The figures of one festival edition that other editions are compared with (unrounded)."""

    __tablename__ = "festival_figures"

    event_id: Mapped[str] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"),
                                          primary_key=True)
    reports: Mapped[int] = mapped_column(Integer)
    token_price: Mapped[float] = mapped_column(Float)
    drink_price: Mapped[float] = mapped_column(Float)


# ---------------------------------------------------------------------------
# The figures
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Figures:
    """The figures of a set of reports, unrounded; `rounded` gives them as the API shows them."""

    reports: int
    outliers: int
    outlier_ids: frozenset[str]
    last_report_at: int
    confidence: str
    presale: decimal.Decimal
    onsite: decimal.Decimal
    token_price: decimal.Decimal
    token_price_channel: str
    drink_tokens: decimal.Decimal
    drink_price: decimal.Decimal
    refund: str
    example: tuple[float, float]

    def rounded(self) -> dict:
        """The figures with money rounded to cents (half up), the one place it is rounded."""
        return {
            "reports": self.reports, "outliers": self.outliers,
            "last_report_at": self.last_report_at, "confidence": self.confidence,
            "token_price": cents(self.token_price),
            "token_price_channel": self.token_price_channel,
            "presale": cents(self.presale), "onsite": cents(self.onsite),
            "saving": cents(self.onsite - self.presale),
            "drink_tokens": float(self.drink_tokens), "drink_price": cents(self.drink_price),
            "refund": self.refund,
            "example": {"paid": cents(self.example[0]), "tokens": self.example[1]},
        }


def cents(amount: decimal.Decimal | float) -> float:
    """Euros rounded to cents, half away from zero (a float as its shortest repr reads)."""
    return float(_exact(amount).quantize(_CENT, decimal.ROUND_HALF_UP))


def _exact(number: decimal.Decimal | float) -> decimal.Decimal:
    """The decimal a number reads as (0.1 is 0.1, not the binary float near it)."""
    return number if isinstance(number, decimal.Decimal) else decimal.Decimal(repr(number))


def weighted_median(pairs: Iterable[tuple[decimal.Decimal, int]]) -> decimal.Decimal:
    """The weighted median of (value, weight) pairs with positive integer weights.

    The value where the running weight, in ascending order of value, first passes
    half the total; when it stops exactly at half, the mean of that value and the
    next (with equal weights: the ordinary median).
    """
    ordered = sorted(pairs)
    total = sum(weight for _value, weight in ordered)
    if not ordered:
        raise ValueError("no values")
    running = 0
    for position, (value, weight) in enumerate(ordered):
        running += weight
        if 2 * running == total:
            # Written so that it never leaves [value, next] at the 28 digits of decimal.
            return value + (ordered[position + 1][0] - value) / 2
        if 2 * running > total:
            return value
    raise AssertionError("unreachable: the running weight reaches the total")


def outliers(reports: Sequence[TokenReport]) -> set[str]:
    """Ids of the reports whose token price is too far from their channel's weighted median."""
    found: set[str] = set()
    for channel in CHANNELS:
        own = [r for r in reports if r.channel == channel]
        if len(own) < OUTLIER_MIN_REPORTS:
            continue
        middle = weighted_median((r.token_price, TIER_TENTHS[r.tier]) for r in own)
        spread = MAD_SCALE * weighted_median(
            (abs(r.token_price - middle), TIER_TENTHS[r.tier]) for r in own)
        found.update(r.id for r in own if abs(r.token_price - middle) > OUTLIER_MADS * spread)
    return found


def figures(reports: Sequence[TokenReport]) -> Figures | None:
    """The figures of a festival's reports (decisions.md); None without reports.

    Every figure is taken over the reports that are not outliers; `reports`,
    `last_report_at` and `confidence` over all of them (an outlier still is a
    report, and the confidence never falls when one is added).
    """
    if not reports:
        return None
    left_out = outliers(reports)
    kept = [r for r in reports if r.id not in left_out]
    by_channel = {channel: [(r.token_price, TIER_TENTHS[r.tier]) for r in kept
                            if r.channel == channel] for channel in CHANNELS}
    medians = {channel: weighted_median(pairs) for channel, pairs in by_channel.items() if pairs}
    presale = medians.get("presale", medians.get("onsite"))
    onsite = medians.get("onsite", presale)
    presale_weight, onsite_weight = (sum(w for _p, w in by_channel[c]) for c in CHANNELS)
    # On equal weight the till price: what every visitor can pay.
    channel = "presale" if presale_weight > onsite_weight else "onsite"
    token_price = presale if channel == "presale" else onsite
    drink_tokens = weighted_median((_exact(r.drink_tokens), TIER_TENTHS[r.tier]) for r in kept)
    total = sum(TIER_TENTHS[r.tier] for r in reports)
    return Figures(
        reports=len(reports), outliers=len(left_out), outlier_ids=frozenset(left_out),
        last_report_at=max(r.created_at for r in reports),
        confidence=next((name for below, name in CONFIDENCE if total < below), "high"),
        presale=presale, onsite=onsite, token_price=token_price, token_price_channel=channel,
        drink_tokens=drink_tokens, drink_price=token_price * drink_tokens,
        refund=_refund(kept), example=_example(kept))


def _refund(reports: Sequence[TokenReport]) -> str:
    """The refund answer with the most weight; a tie between answers is `unknown`."""
    weights = collections.Counter()
    for report in reports:
        weights[report.refund] += TIER_TENTHS[report.tier]
    ranked = weights.most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return "unknown"
    return ranked[0][0]


def _example(reports: Sequence[TokenReport]) -> tuple[float, float]:
    """The most common purchase (paid, tokens); ties: more weight, then the cheaper one."""
    seen: dict[tuple[float, float], list[int]] = collections.defaultdict(lambda: [0, 0])
    for report in reports:
        tally = seen[(report.paid, report.tokens)]
        tally[0] += 1
        tally[1] += TIER_TENTHS[report.tier]
    return min(seen, key=lambda purchase: (-seen[purchase][0], -seen[purchase][1], purchase))


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Edition:
    """Another edition of a festival with its stored figures (prices None without reports)."""

    event: Event
    reports: int
    token_price: float | None
    drink_price: float | None


@dataclasses.dataclass(frozen=True)
class SeasonCompare:
    """This festival against the season's other festivals with figures."""

    season: int
    median: decimal.Decimal | None
    festivals: int
    diff: decimal.Decimal | None


@dataclasses.dataclass(frozen=True)
class TokenPrices:
    """Everything GET /events/{id}/token-prices shows."""

    event: Event
    figures: Figures
    previous_edition: Edition | None
    season_compare: SeasonCompare


def get_festival(session: Session, key: str) -> Event:
    """The public festival edition with this id or slug; `NotFound` for any other event."""
    event = get_event(session, key)
    if event.festival_key is None or event.season is None:
        raise NotFound("festival", key)
    return event


def token_prices(session: Session, key: str) -> TokenPrices:
    """The token-price figures of a festival edition; `NotFound` when it has no reports yet."""
    event = get_festival(session, key)
    found = figures(session.scalars(
        select(TokenReport).where(TokenReport.event_id == event.id)).all())
    if found is None:
        raise NotFound(message=f"The festival {key!r} has no token reports yet.")
    return TokenPrices(event=event, figures=found,
                       previous_edition=previous_edition(session, event),
                       season_compare=season_compare(session, event, found.drink_price))


def previous_edition(session: Session, event: Event) -> Edition | None:
    """The latest edition of the same festival in an earlier season."""
    found = session.execute(
        select(Event, FestivalFigures).outerjoin(FestivalFigures,
                                                 FestivalFigures.event_id == Event.id)
        .where(Event.festival_key == event.festival_key, Event.season < event.season,
               PUBLIC)
        .order_by(Event.season.desc(), Event.date.desc(), Event.id.desc()).limit(1)
    ).first()
    if found is None:
        return None
    edition, stored = found
    if stored is None:
        return Edition(event=edition, reports=0, token_price=None, drink_price=None)
    return Edition(event=edition, reports=stored.reports, token_price=stored.token_price,
                   drink_price=stored.drink_price)


def season_compare(session: Session, event: Event, drink_price: decimal.Decimal
                   ) -> SeasonCompare:
    """The median drink price of the season's other festivals (other keys) with figures."""
    others = session.scalars(
        select(FestivalFigures.drink_price).join(Event, Event.id == FestivalFigures.event_id)
        .where(Event.season == event.season, Event.festival_key != event.festival_key,
               PUBLIC)).all()
    if not others:
        return SeasonCompare(season=event.season, median=None, festivals=0, diff=None)
    middle = statistics.median(_exact(other) for other in others)
    return SeasonCompare(season=event.season, median=middle, festivals=len(others),
                         diff=drink_price - middle)


@dataclasses.dataclass(frozen=True)
class ReportFilters(Filters):
    """The reports of one festival edition (GET /events/{id}/token-reports), by its id or
    slug as asked."""

    kind = "token_reports"

    event: str


def list_reports(session: Session, key: str, *, after: list | None, limit: int) -> Page:
    """A festival's reports, newest first (`created_at`, then `id`), outliers included."""
    event = get_festival(session, key)
    return keyset_page(
        session, select(TokenReport).where(TokenReport.event_id == event.id),
        order=[TokenReport.created_at, TokenReport.id], after=after, limit=limit,
        key_of=lambda report: (report.created_at, report.id), descending=True)


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------


def refresh(session: Session, event_ids: Iterable[str]) -> None:
    """Recompute the outlier marks and stored figures of these festivals after their reports
    changed. Each festival's event row is locked first (PostgreSQL), so two writers of one
    festival's reports refresh it one after the other, each seeing the other's reports."""
    for event_id in sorted(set(event_ids)):
        session.execute(select(Event.id).where(Event.id == event_id).with_for_update())
        reports = session.scalars(
            select(TokenReport).where(TokenReport.event_id == event_id)).all()
        found = figures(reports)
        flagged = found.outlier_ids if found else frozenset()
        for report in reports:
            if report.outlier != (report.id in flagged):
                report.outlier = report.id in flagged
        if found is None:
            session.execute(delete(FestivalFigures).where(FestivalFigures.event_id == event_id))
            continue
        values = {"event_id": event_id, "reports": found.reports,
                  "token_price": float(found.token_price),
                  "drink_price": float(found.drink_price)}
        statement = insert_for(session, FestivalFigures.__table__).values(values)
        session.execute(statement.on_conflict_do_update(
            index_elements=["event_id"],
            set_={name: values[name] for name in ("reports", "token_price", "drink_price")}))
    session.flush()


def reporters(session: Session, event_ids: Iterable[str]) -> list[str]:
    """The people who reported at these festivals (whose reporter badges may have moved)."""
    return session.scalars(select(TokenReport.person_id).distinct().where(
        TokenReport.event_id.in_(sorted(set(event_ids))),
        TokenReport.person_id.is_not(None))).all()

"""Demo token reports: what visitors of the demo festivals paid for their drink tokens.

Every past edition of a demo festival gets reports, deterministic per seed and
edition: from a couple (low confidence) to dozens (high), from reporters whose
ticket was scanned there (`ticket`), who marked it going (`going`) or who
just say they were there (`visitor`); bundles at the festival's price per
token of that season, often cheaper in presale, some festivals selling only
at the till, and now and then a slip of the decimal point (an outlier). Then every
festival's figures are computed and the seed's people get the badges their
nights out and reports earned.
"""

from __future__ import annotations

import datetime as dt
import random
from collections import defaultdict
from zoneinfo import ZoneInfo

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from models import badges, festivals
from agenda.demo.catalogue import Added, add_rows
from models.events import Event
from models.festivals import TokenReport
from models.people import Mark, Person
from models.tickets import Ticket

# Tokens in a bundle, and how many reports a festival edition gets (weights).
BUNDLES = (10, 12, 20, 25, 40)
REPORT_COUNTS = ((1, 3), (4, 9), (10, 30), (30, 70))
REPORT_COUNT_WEIGHTS = (2, 3, 4, 2)
REFUNDS = ("yes", "no", "partial", "unknown")


def add_reports(session: Session, *, seed: int, prefix: str, today_stamp: int,
                added: Added) -> None:
    """Reports for the seed's past festival editions that have none yet, then the figures
    of those festivals and the badges of the seed's people; flushes only."""
    editions = session.execute(
        select(Event.id, Event.festival_key, Event.season, Event.date, Event.timezone)
        .where(Event.id.like(f"{prefix}evt-%"), Event.festival_key.is_not(None),
               Event.status == "approved")
        .order_by(Event.id)).all()
    reported = set(session.scalars(select(TokenReport.event_id).distinct().where(
        TokenReport.id.like(f"{prefix}rep-%"))))
    fresh = [edition for edition in editions
             if edition.id not in reported and _night_of(edition) < today_stamp]
    rows = []
    for edition in fresh:
        rows += _reports(session, edition, seed=seed, prefix=prefix)
    # Reports hang off their edition: written only for an edition without any yet.
    add_rows(session, TokenReport.__table__, rows, seed=seed, present={"reported": reported},
             added=added, parent=("reported", "event_id"))
    festivals.refresh(session, [edition.id for edition in fresh])
    badges.award(session, session.scalars(
        select(Person.id).where(Person.id.like(f"{prefix}per-%"))).all())


def _night_of(edition) -> int:
    """Unix seconds of the edition's first day, at noon (before it: no reports yet)."""
    noon = dt.datetime.combine(edition.date, dt.time(12), ZoneInfo(edition.timezone))
    return int(noon.timestamp())


def _reports(session: Session, edition, *, seed: int, prefix: str) -> list[dict]:
    """The reports of one edition."""
    rng = random.Random(f"{seed}:reports:{edition.id}")
    rnd = rng.random
    # The festival's price per token: its own level, rising a little every season.
    level = random.Random(f"{seed}:token-price:{edition.festival_key}")
    base = level.uniform(2.4, 4.2) * 1.05 ** (edition.season - 2020)
    # Prices per token in steps of 10 cents; presale up to 40 cents cheaper.
    onsite_price = round(base, 1)
    presale_price = round(onsite_price - level.choice((0.0, 0.1, 0.2, 0.3, 0.4)), 1)
    onsite_only = level.random() < 0.2
    drink_tokens = level.choice((1.0, 1.5, 2.0, 2.0, 2.5))
    refund = level.choice(REFUNDS[:3])
    low, high = rng.choices(REPORT_COUNTS, REPORT_COUNT_WEIGHTS)[0]
    count = rng.randint(low, high)
    scanned = session.scalars(select(Ticket.person_id).where(
        Ticket.event_id == edition.id, Ticket.scanned_at.is_not(None),
        Ticket.person_id.is_not(None)).order_by(Ticket.person_id)).all()
    going = session.scalars(select(Mark.person_id).where(
        Mark.event_id == edition.id, Mark.kind == "going").order_by(Mark.person_id)).all()
    tiers = defaultdict(list, {"ticket": list(scanned), "going": list(going)})
    start = _night_of(edition)
    rows = []
    for number in range(count):
        tier = rng.choices(("ticket", "going", "visitor"), (6, 2, 2))[0]
        person = tiers[tier].pop(int(rnd() * len(tiers[tier]))) if tiers[tier] else None
        if person is None:
            tier = "visitor"
        channel = "onsite" if onsite_only or rnd() < 0.45 else "presale"
        tokens = rng.choice(BUNDLES)
        paid = tokens * (presale_price if channel == "presale" else onsite_price)
        if rnd() < 0.04:
            paid = paid * rng.choice((10, 0.1))  # a slip of the decimal point
        rows.append({
            "id": f"{prefix}rep-{edition.id.rsplit('-', 1)[-1]}-{number}",
            "event_id": edition.id, "person_id": person, "paid": round(paid, 2),
            "tokens": float(tokens),
            "drink_tokens": drink_tokens if rnd() < 0.85 else drink_tokens + 0.5,
            "channel": channel, "refund": refund if rnd() < 0.8 else rng.choice(REFUNDS),
            "tier": tier, "outlier": False, "source": "demo",
            "created_at": start + int(rnd() * 3 * 86400),
        })
    return rows


def showcase(session: Session, *, prefix: str) -> tuple[str | None, str | None]:
    """(the seed's festival edition with the most reports, the public profile with the most
    badges): something real to try token prices and badges on."""
    festival = session.scalar(
        select(Event.slug).join(festivals.FestivalFigures,
                                festivals.FestivalFigures.event_id == Event.id)
        .where(Event.id.like(f"{prefix}evt-%"))
        .order_by(festivals.FestivalFigures.reports.desc(), Event.id).limit(1))
    handle = session.scalar(
        select(Person.handle).join(badges.EarnedBadge, badges.EarnedBadge.person_id == Person.id)
        .where(Person.id.like(f"{prefix}per-%"), Person.visibility == "public")
        .group_by(Person.id, Person.handle)
        .order_by(func.count().desc(), Person.id).limit(1))
    return festival, handle

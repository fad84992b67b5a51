"""Demo token reports: past festival editions get reports, figures and reporters badges."""

import datetime as dt

from sqlalchemy import func, select

from agenda.demo import catalogue as demo_data
from agenda.demo import festivals as demo_festivals
from models import festivals
from models.badges import EarnedBadge
from models.events import Event
from models.festivals import FestivalFigures, TokenReport

PAST = dt.date(2026, 11, 25)
SEED = 71


def _load(db, events=1000):
    return demo_data.add_demo_data(db, events=events, seed=SEED, today=PAST)


def test_past_festival_editions_get_reports_with_figures_and_coming_ones_none(db):
    added = _load(db)
    assert added.added["token_reports"] > 0
    prefix = demo_data.prefix_of(SEED)
    editions = db.execute(select(Event.id, Event.date).where(
        Event.id.like(f"{prefix}evt-%"), Event.festival_key.is_not(None),
        Event.status == "approved")).all()
    reported = set(db.scalars(select(TokenReport.event_id).distinct().where(
        TokenReport.id.like(f"{prefix}rep-%"))))
    assert reported and all(date < PAST for event_id, date in editions if event_id in reported)
    assert not any(event_id in reported for event_id, date in editions if date > PAST)
    # Every reported edition has its stored figures, equal to a fresh computation.
    for event_id in reported:
        stored = db.get(FestivalFigures, event_id)
        fresh = festivals.figures(db.scalars(
            select(TokenReport).where(TokenReport.event_id == event_id)).all())
        assert (stored.reports, stored.token_price) == (fresh.reports, float(fresh.token_price))


def test_the_demo_shows_each_confidence_level_and_its_reporters_earn_badges(db):
    _load(db, events=5000)
    prefix = demo_data.prefix_of(SEED)
    levels = set()
    for event_id in db.scalars(select(FestivalFigures.event_id).where(
            FestivalFigures.event_id.like(f"{prefix}evt-%"))):
        levels.add(festivals.token_prices(db, event_id).figures.confidence)
    assert levels == {"low", "medium", "high"}
    reporters = db.scalar(select(func.count()).where(
        EarnedBadge.badge_id == "reporter-1", EarnedBadge.person_id.like(f"{prefix}per-%")))
    regulars = db.scalar(select(func.count()).where(
        EarnedBadge.badge_id == "regular-2", EarnedBadge.person_id.like(f"{prefix}per-%")))
    assert reporters > 0 and regulars > 0
    festival, handle = demo_festivals.showcase(db, prefix=prefix)
    assert festivals.token_prices(db, festival).figures.reports > 0
    assert handle is not None


def test_loading_again_adds_no_report_twice(db):
    _load(db)
    count = db.scalar(select(func.count()).select_from(TokenReport))
    again = _load(db)
    assert again.added["token_reports"] == 0
    assert db.scalar(select(func.count()).select_from(TokenReport)) == count

"""the agenda's order index carries the events' coordinates too: a radius search around
many venues walks the index alone

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-29 02:00:00

A radius search around more venues than it names (`NEAR_VENUES_AT_MOST`) walks the agenda's
order testing each event's distance until it has a page; the distance read each walked
event's row (a 5 km radius at a million events, 50 rows a page: ~1,900 buffers). With `lat`
and `lng` in `ix_events_order` (PostgreSQL's INCLUDE, beside 0020's public condition and
words), the walk reads the index alone and the page's events are read by id
(models/events.py `_started`). SQLite has no INCLUDE: unchanged there.
"""

from alembic import op

revision = '0023'
down_revision = '0022'
branch_labels = None
depends_on = None

IN_ORDER = ["status", "organisation_id", "search_key", "lat", "lng"]
# 0020's.
BEFORE = ["status", "organisation_id", "search_key"]


def upgrade() -> None:
    _order(IN_ORDER)


def downgrade() -> None:
    _order(BEFORE)


def _order(include: list[str]) -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.drop_index("ix_events_order", "events")
    op.create_index("ix_events_order", "events", ["date", "start", "id"],
                    postgresql_include=include)

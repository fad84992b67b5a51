"""a venue's events' index carries their organisation and coordinates: a radius search's
walk of each venue reads the index alone

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28 00:30:00

A radius search around a few venues walks each venue's events in the list's order
(models/events.py `_at_venues`) for the positions of a page at most, then reads the page's
events: with the public condition's organisation and the distance's coordinates in the
index (PostgreSQL's INCLUDE, beside 0013's), each walk reads no event rows. Before, 5 km
around Brussels with `limit=100` read the rows of 25,140 events of 92 venues to list 101
(0.2-0.5 s at a million events). SQLite has no INCLUDE: unchanged there.
"""

from alembic import op

revision = '0019'
down_revision = '0018'
branch_labels = None
depends_on = None

COUNTED = ["status", "city_key", "end_date", "last_date"]  # 0013's
AT_VENUE = ["organisation_id", "lat", "lng"]


def upgrade() -> None:
    _venue_order([*COUNTED, *AT_VENUE])


def downgrade() -> None:
    _venue_order(COUNTED)


def _venue_order(include: list[str]) -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.drop_index("ix_events_venue_order", "events")
    op.create_index("ix_events_venue_order", "events", ["venue_id", "date", "start", "id"],
                    postgresql_include=include)

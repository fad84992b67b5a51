"""the organisations' and the cities' lists read from indexes of their own: the month
totals and the venues' places

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-08 04:00:00

An organisation's events count (GET /organisations, GET /organisations/{id}) is the sum of
its month counts over all cities and all genres (city_key '' and genre ''). Found through
`ix_event_month_counts_genre_month`, a page of 50 organisations read every city's row of
each of their months and kept one in seventeen (17,230 index entries at a million events,
3.7 ms); a partial index of the totals alone holds one row a month and organisation, as
0017's does for the days.

A city (GET /cities) is its venues' group: its name, country and middle are read from all
venues at each page. Two walks of the table by `ix_venues_city_key_city` were ~4,200 pages
at a million events (3,000 venues); an index of the venues' places (city key, country, with
the name and coordinates) is read alone, once, in the group's order.
"""

import sqlalchemy as sa
from alembic import op

revision = '0029'
down_revision = '0028'
branch_labels = None
depends_on = None

TOTALS = sa.text("city_key = '' AND genre = ''")


def upgrade() -> None:
    op.create_index("ix_event_month_counts_totals", "event_month_counts",
                    ["organisation_id", "month"], postgresql_include=["events"],
                    postgresql_where=TOTALS, sqlite_where=TOTALS)
    op.create_index("ix_venues_places", "venues", ["city_key", "country"],
                    postgresql_include=["city", "lat", "lng"])


def downgrade() -> None:
    op.drop_index("ix_venues_places", "venues")
    op.drop_index("ix_event_month_counts_totals", "event_month_counts")

"""the day totals: the date facet's rows of all cities and genres, indexed apart

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27 17:30:00

The date facet reads, for each day of its window, the count over all cities and all
genres (city_key '' and genre ''). Found through `ix_event_day_counts_genre_day`, those
62 rows were 1,550 index entries at a million events (every city of each day); a partial
index of the totals alone holds one row a day and organisation.
"""

import sqlalchemy as sa
from alembic import op

revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None

TOTALS = sa.text("city_key = '' AND genre = ''")


def upgrade() -> None:
    op.create_index("ix_event_day_counts_totals", "event_day_counts",
                    ["organisation_id", "date"], postgresql_include=["events"],
                    postgresql_where=TOTALS, sqlite_where=TOTALS)


def downgrade() -> None:
    op.drop_index("ix_event_day_counts_totals", "event_day_counts")

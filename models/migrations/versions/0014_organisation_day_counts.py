"""organisation day counts: the kept day counts also per organisation

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27 05:20:00

The facet counts of one organisation's events (models/facets.py) read these instead of each
of its events' genres: the busiest has thousands of coming events. The counts are derived
data: the table is made again with an `organisation_id` key ('' for all organisations, the
rows there were) and filled from the events; the triggers count the new way.

On PostgreSQL a change notes the organisations of the days it changed, whose counts alone
are counted afresh as it commits (event_counts_pending_owners), and a change to an event's
genres or to an organisation's suspension notes its events (event_counts_pending_events),
whose day and organisation are read again as it commits: the day read when the change was
made may be one that another transaction has moved the event from.
"""

import sqlalchemy as sa
from alembic import op

from models.facets import POSTGRESQL_PENDING_0014
from models.migrations.history import (POSTGRESQL_FUNCTIONS_0012, POSTGRESQL_FUNCTIONS_0014,
                                       RECOUNT_0012, RECOUNT_0014, SQLITE_TRIGGERS_0013,
                                       SQLITE_TRIGGERS_0014)

revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade() -> None:
    _day_counts(owners=True)


def downgrade() -> None:
    _day_counts(owners=False)


def _day_counts(*, owners: bool) -> None:
    """The day counts table (with or without `organisation_id`), its triggers and counts."""
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for statement in SQLITE_TRIGGERS_0014:  # their names, whatever their bodies
            op.execute(f"DROP TRIGGER IF EXISTS {statement.split()[2]}")
    op.drop_table("event_day_counts")
    day = [sa.Column("date", sa.Date(), nullable=False)]
    owner = [sa.Column("organisation_id", sa.String(length=80), nullable=False)]
    op.create_table(
        "event_day_counts", *(day + owner if owners else []),
        sa.Column("city_key", sa.String(length=100), nullable=False),
        sa.Column("genre", sa.String(length=60), nullable=False),
        *([] if owners else day),
        sa.Column("events", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint(*(["date", "organisation_id", "city_key", "genre"] if owners
                                  else ["city_key", "genre", "date"]),
                                name=op.f("pk_event_day_counts")))
    first = ["organisation_id"] if owners else []
    op.create_index("ix_event_day_counts_city_day", "event_day_counts",
                    [*first, "city_key", "date"],
                    postgresql_include=["genre", "events"] if owners else [])
    op.create_index("ix_event_day_counts_genre_day", "event_day_counts",
                    [*first, "genre", "date"],
                    postgresql_include=["city_key", "events"] if owners else [])
    if dialect == "postgresql":
        for table, create in POSTGRESQL_PENDING_0014.items():
            op.execute(create if owners else f"DROP TABLE {table}")
        for statement in POSTGRESQL_FUNCTIONS_0014 if owners else POSTGRESQL_FUNCTIONS_0012:
            op.execute(statement)
    else:
        for statement in SQLITE_TRIGGERS_0014 if owners else SQLITE_TRIGGERS_0013:
            op.execute(statement)
    for statement in (RECOUNT_0014 if owners else RECOUNT_0012)[dialect]:
        op.execute(statement)

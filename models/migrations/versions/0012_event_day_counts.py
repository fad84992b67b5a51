"""event day counts: approved events per start day (and month), city and genre, kept by triggers

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26 22:30:00

The facet counts of GET /v1/events (models/facets.py) read these instead of counting the
agenda's rows at every request. The counts are filled from the events already there.
"""

import sqlalchemy as sa
from alembic import op

from models.facets import POSTGRESQL_PENDING, postgresql_triggers
from models.migrations.history import (POSTGRESQL_FUNCTIONS_0012, RECOUNT_0012,
                                       SQLITE_TRIGGERS_0012)

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None

TABLES = ("events", "event_genres")


def upgrade() -> None:
    op.create_table('event_day_counts',
    sa.Column('city_key', sa.String(length=100), nullable=False),
    sa.Column('genre', sa.String(length=60), nullable=False),
    sa.Column('date', sa.Date(), nullable=False),
    sa.Column('events', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('city_key', 'genre', 'date', name=op.f('pk_event_day_counts'))
    )
    op.create_index('ix_event_day_counts_city_day', 'event_day_counts', ['city_key', 'date'],
                    unique=False)
    op.create_index('ix_event_day_counts_genre_day', 'event_day_counts', ['genre', 'date'],
                    unique=False)
    op.create_table('event_month_counts',
    sa.Column('city_key', sa.String(length=100), nullable=False),
    sa.Column('genre', sa.String(length=60), nullable=False),
    sa.Column('month', sa.Date(), nullable=False),
    sa.Column('events', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('city_key', 'genre', 'month', name=op.f('pk_event_month_counts'))
    )
    op.create_index('ix_event_month_counts_city_month', 'event_month_counts',
                    ['city_key', 'month'], unique=False)
    op.create_index('ix_event_month_counts_genre_month', 'event_month_counts',
                    ['genre', 'month'], unique=False)
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        for statement in [*POSTGRESQL_FUNCTIONS_0012, *POSTGRESQL_PENDING]:
            op.execute(statement)
        for table in TABLES:
            for statement in postgresql_triggers(table):
                op.execute(statement)
    else:
        for statement in SQLITE_TRIGGERS_0012:
            op.execute(statement)
    for statement in RECOUNT_0012[dialect]:
        op.execute(statement)


def downgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    for table in TABLES:
        for event in ("insert", "update", "delete"):
            if postgresql:
                op.execute(f"DROP TRIGGER IF EXISTS event_days_{event} ON {table}")
            else:
                op.execute(f"DROP TRIGGER IF EXISTS event_days_{event}_{table}")
    if postgresql:
        op.execute("DROP TABLE event_counts_pending")  # with its trigger
        for function in ("event_days_changed", "event_days_committing"):
            op.execute(f"DROP FUNCTION {function}()")
    op.drop_table('event_month_counts')
    op.drop_table('event_day_counts')

"""organisation month counts: the kept month counts also per organisation

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27 13:30:00

The facet counts of one organisation's events (models/facets.py) read its whole months
from their sums, as the agenda's do, instead of each of its days: the busiest
organisation's genre counts read ~7,500 day rows at every request. Both counts tables are
keyed by (organisation_id, period, city_key, genre) now, so that what a change counts
afresh (one organisation's day or month, or all organisations') is a range of the key: the
month sums of all organisations read ~25k of the ~130k day rows of a month at a million
events, and read them all before. Derived data: the tables are made again and filled from
the events. As a change commits, its months are summed again once each after its days
(they were summed once for every changed day).
"""

import sqlalchemy as sa
from alembic import op

from models.facets import postgresql_functions, recount_all, sqlite_triggers
from models.migrations.history import (POSTGRESQL_FUNCTIONS_0014, RECOUNT_0014,
                                       SQLITE_TRIGGERS_0014)

revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None


def upgrade() -> None:
    _counts(monthly_owners=True)


def downgrade() -> None:
    _counts(monthly_owners=False)


def _counts(*, monthly_owners: bool) -> None:
    """Both counts tables (keyed as since 0016, or as 0014 left them), their triggers and
    their counts."""
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for statement in SQLITE_TRIGGERS_0014:  # their names, whatever their bodies
            op.execute(f"DROP TRIGGER IF EXISTS {statement.split()[2]}")
    op.drop_table("event_month_counts")
    op.drop_table("event_day_counts")
    for table, period, suffix in (("event_day_counts", "date", "day"),
                                  ("event_month_counts", "month", "month")):
        moment = sa.Column(period, sa.Date(), nullable=False)
        owner = sa.Column("organisation_id", sa.String(length=80), nullable=False)
        if monthly_owners:
            key = ["organisation_id", period, "city_key", "genre"]
            columns = [owner, moment]
        elif table == "event_day_counts":
            key = ["date", "organisation_id", "city_key", "genre"]
            columns = [moment, owner]
        else:
            key = ["city_key", "genre", "month"]
            columns = []
        op.create_table(
            table, *columns,
            sa.Column("city_key", sa.String(length=100), nullable=False),
            sa.Column("genre", sa.String(length=60), nullable=False),
            *([moment] if not columns else []),
            sa.Column("events", sa.Integer(), nullable=False),
            sa.PrimaryKeyConstraint(*key, name=op.f(f"pk_{table}")))
        first = ["organisation_id"] if columns else []
        op.create_index(f"ix_{table}_city_{suffix}", table, [*first, "city_key", period],
                        postgresql_include=["genre", "events"] if columns else [])
        op.create_index(f"ix_{table}_genre_{suffix}", table, [*first, "genre", period],
                        postgresql_include=["city_key", "events"] if columns else [])
    if dialect == "postgresql":
        for statement in postgresql_functions() if monthly_owners else POSTGRESQL_FUNCTIONS_0014:
            op.execute(statement)
    else:
        for statement in sqlite_triggers() if monthly_owners else SQLITE_TRIGGERS_0014:
            op.execute(statement)
    for statement in recount_all(dialect) if monthly_owners else RECOUNT_0014[dialect]:
        op.execute(statement)

"""public events: the kept day counts leave out the events of suspended organisations, as
every list does (models/events.py PUBLIC), and a suspension counts its events' days afresh

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27 02:30:00

Also a partial index of the suspended organisations: each public-event condition reads them
(a handful, usually none) once per statement. And for the facet counts (models/facets.py)
of one venue's or organisation's events: the list's indexes of those carry what the counts
read (PostgreSQL's INCLUDE), and the venues' city names are read from an index.
"""

import sqlalchemy as sa
from alembic import op

from models.facets import postgresql_triggers
from models.migrations.history import (POSTGRESQL_FUNCTIONS_0012, RECOUNT_0012,
                                       SQLITE_TRIGGERS_0012, SQLITE_TRIGGERS_0013)

revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None

# 0012's SQLite triggers, made again with the public rule.
SQLITE_TABLES = ("events", "event_genres")
# The list's index of a venue's and an organisation's events; on PostgreSQL with COUNTED.
ORDERS = {"ix_events_venue_order": "venue_id", "ix_events_organisation_order": "organisation_id"}
COUNTED = ["status", "city_key", "end_date", "last_date"]


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    op.create_index("ix_organisations_suspended", "organisations", ["id"],
                    postgresql_where=sa.text("suspended"), sqlite_where=sa.text("suspended"))
    op.create_index("ix_venues_city_key_city", "venues", ["city_key", "city"])
    if dialect == "postgresql":
        _orders(COUNTED)
        for statement in [*POSTGRESQL_FUNCTIONS_0012, *postgresql_triggers("organisations")]:
            op.execute(statement)
    else:
        _drop_sqlite_triggers()
        for statement in SQLITE_TRIGGERS_0013:
            op.execute(statement)
    for statement in RECOUNT_0012[dialect]:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER event_days_update ON organisations")
        _orders([])
    else:
        _drop_sqlite_triggers()
        for statement in SQLITE_TRIGGERS_0012:
            op.execute(statement)
    op.drop_index("ix_venues_city_key_city", "venues")
    op.drop_index("ix_organisations_suspended", "organisations")


def _orders(include: list[str]) -> None:
    for name, column in ORDERS.items():
        op.drop_index(name, "events")
        op.create_index(name, "events", [column, "date", "start", "id"],
                        postgresql_include=include)


def _drop_sqlite_triggers() -> None:
    for table in (*SQLITE_TABLES, "organisations"):
        for event in ("insert", "update", "delete"):
            op.execute(f"DROP TRIGGER IF EXISTS event_days_{event}_{table}")

"""each event's summary kept as JSON, read by the lists instead of its columns while the
event's row is the one it was rendered from (PostgreSQL)

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-03 07:00:00

A page of a list read 25 rows of the summary's 30-odd columns, made each value a Python
object, dumped them by the schema and serialized the dicts again: most of a list's miss in
the workers. `event_summaries` keeps each event's summary as the service rendered it (its
JSON), with the event row's version and the rendering (schema and site) it was made from;
a list reads it for the events whose row is still that version, and renders and keeps the
others (models/events.py `KEPT_SUMMARIES`). Unlogged: it is a cache, emptied by PostgreSQL
after a crash (WAL and standbys skip it). SQLite keeps none: its rows have no versions.
"""

from alembic import op

revision = '0025'
down_revision = '0024'
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("CREATE UNLOGGED TABLE event_summaries (event_id varchar(80) PRIMARY KEY, "
               "version text NOT NULL, rendering text NOT NULL, json text NOT NULL)")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TABLE event_summaries")

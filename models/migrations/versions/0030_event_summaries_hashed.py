"""each event's kept summary looked up through a hash of its event's id (PostgreSQL)

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-08 05:00:00

A list reads each of its events' kept summary by the event's id (models/events.py
`KEPT_SUMMARIES`): through the table's key, a B-tree, that was the tree's three or four
levels and the row, five pages an event of the page at a million events (129 of the 292
pages of a page of 26). Through a hash of the id it is the id's bucket and the row: two
(52). The key stays, for the upsert that keeps a summary (`ON CONFLICT` needs a unique
index, which a hash index cannot be).
"""

from alembic import op

revision = '0030'
down_revision = '0029'
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("CREATE INDEX ix_event_summaries_event_id ON event_summaries USING hash (event_id)")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP INDEX ix_event_summaries_event_id")

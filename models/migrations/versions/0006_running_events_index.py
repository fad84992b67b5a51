"""running events index

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-26 01:50:55.329480
"""

import sqlalchemy as sa
from alembic import op


revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.create_index('ix_events_running', ['date', 'start', 'id'], unique=False, postgresql_where=sa.text('end_date IS NOT NULL'), sqlite_where=sa.text('end_date IS NOT NULL'))


def downgrade() -> None:
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.drop_index('ix_events_running', postgresql_where=sa.text('end_date IS NOT NULL'), sqlite_where=sa.text('end_date IS NOT NULL'))

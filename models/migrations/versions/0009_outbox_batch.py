"""outbox batch

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26 12:30:00

Each mail knows the delivery that queued it (`batch_id`), so that a delivery's mails are
found without a join through the tickets: joined, the plan followed the outbox's
statistics, stale after a burst of deliveries, and counting one delivery's mails left
read every pending mail once for each of its tickets (0.4 s after four deliveries of 500
on the benchmark machine). `ticket_id` gets the index its cascading delete needs.
"""

import sqlalchemy as sa
from alembic import op

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.add_column(sa.Column('batch_id', sa.String(length=40), nullable=True))
        batch_op.create_foreign_key(op.f('fk_outbox_batch_id_delivery_batches'),
                                    'delivery_batches', ['batch_id'], ['id'],
                                    ondelete='CASCADE')
        batch_op.create_index('ix_outbox_batch', ['batch_id', 'status'], unique=False)
        batch_op.create_index('ix_outbox_ticket', ['ticket_id'], unique=False)
    op.execute("UPDATE outbox SET batch_id = (SELECT tickets.batch_id FROM tickets "
               "WHERE tickets.id = outbox.ticket_id) WHERE ticket_id IS NOT NULL")


def downgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_index('ix_outbox_ticket')
        batch_op.drop_index('ix_outbox_batch')
        batch_op.drop_constraint(op.f('fk_outbox_batch_id_delivery_batches'),
                                 type_='foreignkey')
        batch_op.drop_column('batch_id')

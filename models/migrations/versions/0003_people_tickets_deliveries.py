"""people, tickets, deliveries

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-25 23:15:24.044634
"""

import sqlalchemy as sa
from alembic import op


revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('people',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('email', sa.String(length=254), nullable=False),
    sa.Column('email_key', sa.String(length=254), nullable=False),
    sa.Column('handle', sa.String(length=40), nullable=False),
    sa.Column('name', sa.String(length=120), nullable=False),
    sa.Column('visibility', sa.String(length=10), nullable=False),
    sa.Column('region', sa.String(length=40), nullable=True),
    sa.Column('birth_year', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.BigInteger(), nullable=False),
    sa.Column('last_login_at', sa.BigInteger(), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_people')),
    sa.UniqueConstraint('email_key', name=op.f('uq_people_email_key')),
    sa.UniqueConstraint('handle', name=op.f('uq_people_handle'))
    )
    op.create_table('memberships',
    sa.Column('person_id', sa.String(length=40), nullable=False),
    sa.Column('organisation_id', sa.String(length=40), nullable=False),
    sa.Column('role', sa.String(length=10), nullable=False),
    sa.ForeignKeyConstraint(['organisation_id'], ['organisations.id'], name=op.f('fk_memberships_organisation_id_organisations')),
    sa.ForeignKeyConstraint(['person_id'], ['people.id'], name=op.f('fk_memberships_person_id_people')),
    sa.PrimaryKeyConstraint('person_id', 'organisation_id', name=op.f('pk_memberships'))
    )
    with op.batch_alter_table('memberships', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_memberships_organisation_id'), ['organisation_id'], unique=False)

    op.create_table('delivery_batches',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('event_id', sa.String(length=80), nullable=False),
    sa.Column('source', sa.String(length=20), nullable=False),
    sa.Column('via', sa.String(length=20), nullable=False),
    sa.Column('received', sa.Integer(), nullable=False),
    sa.Column('added', sa.Integer(), nullable=False),
    sa.Column('duplicates', sa.Integer(), nullable=False),
    sa.Column('refused', sa.Integer(), nullable=False),
    sa.Column('linked', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['event_id'], ['events.id'], name=op.f('fk_delivery_batches_event_id_events'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_delivery_batches'))
    )
    with op.batch_alter_table('delivery_batches', schema=None) as batch_op:
        batch_op.create_index('ix_delivery_batches_event', ['event_id', 'created_at'], unique=False)

    op.create_table('external_sales',
    sa.Column('event_id', sa.String(length=80), nullable=False),
    sa.Column('sold', sa.Integer(), nullable=False),
    sa.Column('updated_at', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['event_id'], ['events.id'], name=op.f('fk_external_sales_event_id_events'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('event_id', name=op.f('pk_external_sales'))
    )
    op.create_table('marks',
    sa.Column('person_id', sa.String(length=40), nullable=False),
    sa.Column('event_id', sa.String(length=80), nullable=False),
    sa.Column('kind', sa.String(length=12), nullable=False),
    sa.Column('created_at', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['event_id'], ['events.id'], name=op.f('fk_marks_event_id_events'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['person_id'], ['people.id'], name=op.f('fk_marks_person_id_people')),
    sa.PrimaryKeyConstraint('person_id', 'event_id', name=op.f('pk_marks'))
    )
    with op.batch_alter_table('marks', schema=None) as batch_op:
        batch_op.create_index('ix_marks_event_kind', ['event_id', 'kind'], unique=False)

    op.create_table('tickets',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('event_id', sa.String(length=80), nullable=False),
    sa.Column('code', sa.String(length=64), nullable=False),
    sa.Column('person_id', sa.String(length=40), nullable=True),
    sa.Column('type', sa.String(length=80), nullable=False),
    sa.Column('holder', sa.String(length=120), nullable=False),
    sa.Column('price', sa.Float(), nullable=True),
    sa.Column('source', sa.String(length=20), nullable=False),
    sa.Column('status', sa.String(length=10), nullable=False),
    sa.Column('scanned_at', sa.BigInteger(), nullable=True),
    sa.Column('created_at', sa.BigInteger(), nullable=False),
    sa.Column('batch_id', sa.String(length=40), nullable=True),
    sa.Column('buyer_email', sa.String(length=254), nullable=True),
    sa.Column('buyer_email_hash', sa.String(length=64), nullable=True),
    sa.Column('invite', sa.Boolean(), nullable=False),
    sa.Column('linked_at', sa.BigInteger(), nullable=True),
    sa.ForeignKeyConstraint(['batch_id'], ['delivery_batches.id'], name=op.f('fk_tickets_batch_id_delivery_batches')),
    sa.ForeignKeyConstraint(['event_id'], ['events.id'], name=op.f('fk_tickets_event_id_events'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['person_id'], ['people.id'], name=op.f('fk_tickets_person_id_people')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_tickets')),
    sa.UniqueConstraint('event_id', 'code', name='uq_tickets_event_code')
    )
    with op.batch_alter_table('tickets', schema=None) as batch_op:
        batch_op.create_index('ix_tickets_batch', ['batch_id'], unique=False)
        batch_op.create_index('ix_tickets_buyer_email_hash', ['buyer_email_hash'], unique=False)
        batch_op.create_index('ix_tickets_code', ['code'], unique=False)
        batch_op.create_index('ix_tickets_person', ['person_id', 'event_id'], unique=False)

    op.create_table('outbox',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('kind', sa.String(length=30), nullable=False),
    sa.Column('to_address', sa.String(length=254), nullable=False),
    sa.Column('subject', sa.String(length=300), nullable=False),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('ticket_id', sa.String(length=40), nullable=True),
    sa.Column('status', sa.String(length=10), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('last_error', sa.String(length=500), nullable=True),
    sa.Column('created_at', sa.BigInteger(), nullable=False),
    sa.Column('sent_at', sa.BigInteger(), nullable=True),
    sa.ForeignKeyConstraint(['ticket_id'], ['tickets.id'], name=op.f('fk_outbox_ticket_id_tickets'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_outbox'))
    )
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.create_index('ix_outbox_status', ['status', 'id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_index('ix_outbox_status')

    op.drop_table('outbox')
    with op.batch_alter_table('tickets', schema=None) as batch_op:
        batch_op.drop_index('ix_tickets_person')
        batch_op.drop_index('ix_tickets_code')
        batch_op.drop_index('ix_tickets_buyer_email_hash')
        batch_op.drop_index('ix_tickets_batch')

    op.drop_table('tickets')
    with op.batch_alter_table('marks', schema=None) as batch_op:
        batch_op.drop_index('ix_marks_event_kind')

    op.drop_table('marks')
    op.drop_table('external_sales')
    with op.batch_alter_table('delivery_batches', schema=None) as batch_op:
        batch_op.drop_index('ix_delivery_batches_event')

    op.drop_table('delivery_batches')
    with op.batch_alter_table('memberships', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_memberships_organisation_id'))

    op.drop_table('memberships')
    op.drop_table('people')

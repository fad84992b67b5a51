"""sign-in sessions

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26 22:00:00

A signed-in browser is a row (the hash of the secret its cookie holds), so that signing
out ends the session on the server: a copy of the cookie taken before no longer works.
"""

import sqlalchemy as sa
from alembic import op

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('sign_in_sessions',
    sa.Column('secret_hash', sa.String(length=64), nullable=False),
    sa.Column('person_id', sa.String(length=40), nullable=False),
    sa.Column('created_at', sa.BigInteger(), nullable=False),
    sa.Column('expires_at', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['person_id'], ['people.id'], name=op.f('fk_sign_in_sessions_person_id_people'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('secret_hash', name=op.f('pk_sign_in_sessions'))
    )
    with op.batch_alter_table('sign_in_sessions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_sign_in_sessions_person_id'), ['person_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('sign_in_sessions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_sign_in_sessions_person_id'))
    op.drop_table('sign_in_sessions')

"""oauth

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-26 01:40:29.251565
"""

import sqlalchemy as sa
from alembic import op


revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('oauth_clients',
    sa.Column('id', sa.String(length=48), nullable=False),
    sa.Column('secret_hash', sa.String(length=64), nullable=True),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('redirect_uris', sa.JSON(), nullable=False),
    sa.Column('grant_types', sa.JSON(), nullable=False),
    sa.Column('response_types', sa.JSON(), nullable=False),
    sa.Column('token_endpoint_auth_method', sa.String(length=30), nullable=False),
    sa.Column('scope', sa.String(length=200), nullable=False),
    sa.Column('created_at', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_oauth_clients'))
    )
    op.create_table('oauth_grants',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('client_id', sa.String(length=48), nullable=False),
    sa.Column('person_id', sa.String(length=40), nullable=False),
    sa.Column('organisation_id', sa.String(length=40), nullable=True),
    sa.Column('scope', sa.String(length=200), nullable=False),
    sa.Column('resource', sa.String(length=500), nullable=False),
    sa.Column('created_at', sa.BigInteger(), nullable=False),
    sa.Column('revoked_at', sa.BigInteger(), nullable=True),
    sa.ForeignKeyConstraint(['client_id'], ['oauth_clients.id'], name=op.f('fk_oauth_grants_client_id_oauth_clients'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['organisation_id'], ['organisations.id'], name=op.f('fk_oauth_grants_organisation_id_organisations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['person_id'], ['people.id'], name=op.f('fk_oauth_grants_person_id_people'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_oauth_grants'))
    )
    with op.batch_alter_table('oauth_grants', schema=None) as batch_op:
        batch_op.create_index('ix_oauth_grants_person', ['person_id', 'client_id'], unique=False)

    op.create_table('oauth_codes',
    sa.Column('code_hash', sa.String(length=64), nullable=False),
    sa.Column('grant_id', sa.String(length=40), nullable=False),
    sa.Column('redirect_uri', sa.String(length=500), nullable=False),
    sa.Column('code_challenge', sa.String(length=128), nullable=False),
    sa.Column('code_challenge_method', sa.String(length=10), nullable=False),
    sa.Column('scope', sa.String(length=200), nullable=False),
    sa.Column('expires_at', sa.BigInteger(), nullable=False),
    sa.Column('used_at', sa.BigInteger(), nullable=True),
    sa.ForeignKeyConstraint(['grant_id'], ['oauth_grants.id'], name=op.f('fk_oauth_codes_grant_id_oauth_grants'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('code_hash', name=op.f('pk_oauth_codes'))
    )
    op.create_table('oauth_tokens',
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('grant_id', sa.String(length=40), nullable=False),
    sa.Column('kind', sa.String(length=10), nullable=False),
    sa.Column('scope', sa.String(length=200), nullable=False),
    sa.Column('created_at', sa.BigInteger(), nullable=False),
    sa.Column('expires_at', sa.BigInteger(), nullable=False),
    sa.Column('used_at', sa.BigInteger(), nullable=True),
    sa.Column('revoked_at', sa.BigInteger(), nullable=True),
    sa.ForeignKeyConstraint(['grant_id'], ['oauth_grants.id'], name=op.f('fk_oauth_tokens_grant_id_oauth_grants'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('token_hash', name=op.f('pk_oauth_tokens'))
    )
    with op.batch_alter_table('oauth_tokens', schema=None) as batch_op:
        batch_op.create_index('ix_oauth_tokens_grant', ['grant_id'], unique=False)

    with op.batch_alter_table('people', schema=None) as batch_op:
        batch_op.add_column(sa.Column('password_hash', sa.String(length=200), nullable=True))



def downgrade() -> None:
    with op.batch_alter_table('people', schema=None) as batch_op:
        batch_op.drop_column('password_hash')

    with op.batch_alter_table('oauth_tokens', schema=None) as batch_op:
        batch_op.drop_index('ix_oauth_tokens_grant')

    op.drop_table('oauth_tokens')
    op.drop_table('oauth_codes')
    with op.batch_alter_table('oauth_grants', schema=None) as batch_op:
        batch_op.drop_index('ix_oauth_grants_person')

    op.drop_table('oauth_grants')
    op.drop_table('oauth_clients')

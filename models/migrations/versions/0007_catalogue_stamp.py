"""catalogue stamp: one row that triggers renew on every committed change to public data

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26 04:45:00
"""

import sqlalchemy as sa
from alembic import op

from models.stamp import (CATALOGUE_TABLES, POSTGRESQL_FUNCTIONS, postgresql_triggers,
                          sqlite_triggers)

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('catalogue_stamp',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('stamp', sa.String(length=40), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_catalogue_stamp'))
    )
    op.execute("INSERT INTO catalogue_stamp (id, stamp) VALUES (1, 'initial')")
    if op.get_bind().dialect.name == "postgresql":
        for statement in POSTGRESQL_FUNCTIONS:
            op.execute(statement)
        for table in CATALOGUE_TABLES:
            for statement in postgresql_triggers(table):
                op.execute(statement)
    else:
        for table in CATALOGUE_TABLES:
            for statement in sqlite_triggers(table):
                op.execute(statement)


def downgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    for table in CATALOGUE_TABLES:
        for event in ("insert", "update", "delete", "truncate"):
            if postgresql:
                op.execute(f"DROP TRIGGER IF EXISTS catalogue_{event} ON {table}")
            else:
                op.execute(f"DROP TRIGGER IF EXISTS catalogue_{event}_{table}")
    if postgresql:
        op.execute("DROP TABLE catalogue_pending")  # with its trigger
        for function in ("catalogue_changed", "catalogue_truncated", "catalogue_committing"):
            op.execute(f"DROP FUNCTION {function}()")
    op.drop_table('catalogue_stamp')

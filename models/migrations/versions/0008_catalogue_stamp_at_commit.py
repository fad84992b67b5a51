"""catalogue stamp renewed at commit on PostgreSQL (no row lock held through a transaction)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26 05:40:00
"""

from alembic import op

from models.stamp import POSTGRESQL_AT_COMMIT, POSTGRESQL_FUNCTIONS

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for statement in POSTGRESQL_AT_COMMIT:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TRIGGER catalogue_committing ON catalogue_pending")
    op.execute("DROP FUNCTION catalogue_committing()")
    for statement in POSTGRESQL_FUNCTIONS:
        op.execute(statement.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION"))
    op.execute("DROP TABLE catalogue_pending")

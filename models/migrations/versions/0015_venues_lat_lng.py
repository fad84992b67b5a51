"""venues by place: the index of a radius search's venues

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27 06:00:00

A radius search first finds the venues within it (models/events.py `_NEAR_VENUES`) and,
when they are few, reads their events instead of walking the whole agenda's order.
"""

from alembic import op

revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_venues_lat_lng", "venues", ["lat", "lng"])


def downgrade() -> None:
    op.drop_index("ix_venues_lat_lng", "venues")

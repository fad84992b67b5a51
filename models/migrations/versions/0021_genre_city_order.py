"""an event's genres carry its city: a page of a city's events of a genre walks the genre
in the city

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-28 03:00:00

A list of a city and a genre walked the city's events checking each one's genres, or the
genre's events checking each one's city (whichever held fewer, by the kept month counts):
when both are a few percent of the agenda, either walk read thousands of events for a page
(`city=Liège&genre=Latin&limit=100` at a million events: 4,435 of the city's, 26 ms warm).
With the city on `event_genres` (a copy, like its date and start, written with them by
`models.events.denormalize`) and an index (genre, city, date, start), the walk reads the
page's events only: 1.8 ms.

The copies are written with the catalogue's triggers off on PostgreSQL: they change no
answer, and each row's would note a change of its event in the feed and count its day
again (about ten minutes at a million events). SQLite's triggers cannot be switched off;
its databases are small.
"""

import sqlalchemy as sa
from alembic import op

revision = '0021'
down_revision = '0020'
branch_labels = None
depends_on = None

COPY = ("UPDATE event_genres SET city_key = (SELECT events.city_key FROM events "
        "WHERE events.id = event_genres.event_id)")


def upgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    if postgres:
        op.add_column("event_genres", sa.Column("city_key", sa.String(100), nullable=True))
        op.execute("ALTER TABLE event_genres DISABLE TRIGGER USER")
        op.execute("UPDATE event_genres SET city_key = events.city_key FROM events "
                   "WHERE events.id = event_genres.event_id")
        op.execute("ALTER TABLE event_genres ENABLE TRIGGER USER")
        op.alter_column("event_genres", "city_key", nullable=False)
    else:
        # SQLite adds a column that may not be null only with a default; every row then
        # gets its copy.
        op.add_column("event_genres", sa.Column("city_key", sa.String(100), nullable=False,
                                                server_default=""))
        op.execute(COPY)
    op.create_index("ix_event_genres_city_order", "event_genres",
                    ["genre", "city_key", "date", "start", "event_id"])


def downgrade() -> None:
    op.drop_index("ix_event_genres_city_order", "event_genres")
    # Not batch mode on SQLite: copying the table would drop its triggers.
    op.execute("ALTER TABLE event_genres DROP COLUMN city_key")

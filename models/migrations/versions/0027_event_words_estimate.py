"""each word of the events' words estimated as held by many events, and few of them as
suspended, so that a word's list planned once walks its words' ordered index (PostgreSQL)

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-07 21:20:00

A free-text list of a word that a few words hold is planned once (models/events.py
`_by_words`): its plan is made for any word, from the number of distinct words ANALYZE
counts. Where most words are held by one event or a few (a title's number, a venue's name),
the average word was estimated at a handful of rows, and the plan read each word's events
by a bitmap and sorted them all rather than walking the word's ordered index for a page: a
common word's list then read every one of its events (seen in the tests' agenda, whose
titles each carry a number). Every word is now estimated as held by a tenth of the words'
rows (`n_distinct = 10`, kept by every ANALYZE), so that the plan made once walks the index
for a page whatever the word: a common word's walk reads a page, a rare word's ends early,
where a bitmap would read every one of a common word's events. The walk's public condition
(`organisation_id <> ALL` the suspended ones) is estimated from the distinct organisations:
with one or a few (a small or a single organiser's agenda, the tests') it was estimated to
keep no row, and the bitmap won again; the organisations are estimated at 1,000
(`n_distinct = 1000`), so that the condition keeps most rows, as it does. Only these
estimates change: a change's look-up of one event's words (the triggers) goes by its whole
key. SQLite keeps no words.
"""

from alembic import op

revision = '0027'
down_revision = '0026'
branch_labels = None
depends_on = None


# The distinct values each column is estimated to hold, whatever ANALYZE counts.
ESTIMATES = {"word": 10, "organisation_id": 1000}


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for column, distinct in ESTIMATES.items():
        op.execute(f"ALTER TABLE event_words ALTER COLUMN {column} SET (n_distinct = {distinct})")
    op.execute("ANALYZE event_words")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for column in ESTIMATES:
        op.execute(f"ALTER TABLE event_words ALTER COLUMN {column} RESET (n_distinct)")
    op.execute("ANALYZE event_words")

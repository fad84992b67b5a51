"""the agenda's order index carries the public condition and the words, and the words'
histogram holds 3,000 keys: a free-text search walks the index alone, for common words only

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-28 02:10:00

A free-text search of a common word walks the agenda's order testing each event's words
(the trigram index would read and sort every match) until it has a page. With the status,
organisation and `search_key` in `ix_events_order` (PostgreSQL's INCLUDE), that walk reads
the index alone and the page's events are read by id (models/events.py `_statement`):
`q=amapiano&limit=100`, 3,409 events of a million, read 29,220 event rows (104 ms); from
the index, 3-9 ms.

The walk is then ~6 times cheaper to the planner, so it is chosen for rarer words too, and
a rare word estimated common walks the whole index (~85 ms at a million) instead of being
read through the trigrams (2 ms): with 1,000 histogram entries (0018) a word one entry
happens to hold is estimated at 0.1% (`q=nevelveld`, 93 events, estimated 1,999). With
3,000 the estimate is near the word's share for every word measured (nevelveld 98), at
~0.6 ms more planning of a free-text search (0.35 -> 0.93 ms; 10,000 entries cost 2.8).
SQLite has neither: unchanged there.
"""

from alembic import op

revision = '0020'
down_revision = '0019'
branch_labels = None
depends_on = None

IN_ORDER = ["status", "organisation_id", "search_key"]
# The words' histogram (PostgreSQL's per-column statistics target), 0018's before.
SEARCH_KEY_STATISTICS, BEFORE = 3000, 1000


def upgrade() -> None:
    _order(IN_ORDER, SEARCH_KEY_STATISTICS)


def downgrade() -> None:
    _order([], BEFORE)


def _order(include: list[str], statistics: int) -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.drop_index("ix_events_order", "events")
    op.create_index("ix_events_order", "events", ["date", "start", "id"],
                    postgresql_include=include)
    op.execute(f"ALTER TABLE events ALTER COLUMN search_key SET STATISTICS {statistics}")
    op.execute("ANALYZE events (search_key)")

"""each word of an event's words in the agenda's order (PostgreSQL): a free-text list walks
the few words that hold its word

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-07 20:00:00

A free-text list (`q`) matches within words (`LIKE '%word%'` over the title and the venue's
name, `search_key`), which no ordered index answers: it walked the agenda's order testing
each event's words (a common word), or read every event holding it through the trigram
index and sorted them (a rare one), whichever the word's share made cheaper
(models/words.py). Near the crossing either way read thousands of rows: at a million
events the long tail's free-text lists were a fifth of PostgreSQL's time, 5-18 ms each
(`q=mistslag`: 114 ms walked, 1.5 by the index; `q=bovenstroom`: 0.6 walked, 99 by the
index).

`event_words` holds each word of each event's `search_key` (split at its single spaces)
with the event's position (date, start, id) and what makes it public (status,
organisation), in the agenda's order by word; `event_vocabulary` every word it has held,
with a trigram index. A list of a word held by a few words of the vocabulary (a whole
word, its compounds) walks each of those words' events in order, a page at most, then
reads the page's events by id (models/events.py `_by_words`): ~0.5 ms whatever the word's
share. Both are written by triggers on `events`, whoever writes its words (the API, an
import, the demo data, plain SQL, a venue renamed through the service), in the writing
transaction: a list never misses an event written. A word no event holds any more stays
in the vocabulary (its walk finds nothing); TRUNCATE empties the words.

At a million events of the demo data: 6.2 million words, 1 GB (the table and its key,
about half each), 746 words in the vocabulary; this migration takes ~35 s. SQLite keeps
neither: its lists test the words as before.
"""

from alembic import op

revision = '0026'
down_revision = '0025'
branch_labels = None
depends_on = None

# What a word's row copies of its event: the list's position and the public condition's
# columns. Their change (or the words') writes the event's words again.
COPIED = ("date", "start", "status", "organisation_id")
# An event's words, one row each (`{r}`: the event's row); `t.word` the word.
_WORDS = "unnest(string_to_array({r}.search_key, ' ')) AS t(word)"
# The words' rows of the events `{rows}` (aliased `{r}`), each word of an event once.
_WORD_ROWS = (f"INSERT INTO event_words (word, event_id, {', '.join(COPIED)}) "
              f"SELECT DISTINCT t.word, {{r}}.id, {', '.join(f'{{r}}.{column}' for column in COPIED)} "
              f"FROM {{rows}} {{r}}, {_WORDS} WHERE t.word <> ''")
_SAME = ("({n}.search_key, " + ", ".join(f"{{n}}.{column}" for column in COPIED) + ") IS NOT "
         "DISTINCT FROM ({o}.search_key, " + ", ".join(f"{{o}}.{column}" for column in COPIED)
         + ")")
# The words of the rows `new_rows` (less those `{kept}` leaves as they were), and each word
# new to the vocabulary, in the words' order (two writers then wait for each other's words in
# the same order, never each for the other's).
_ADD = (f"WITH added AS ({_WORD_ROWS.format(rows='new_rows', r='n')} {{kept}} "
        f"ON CONFLICT DO NOTHING RETURNING word) "
        f"INSERT INTO event_vocabulary (word) SELECT DISTINCT word FROM added ORDER BY word "
        f"ON CONFLICT DO NOTHING")
_REMOVE = (f"DELETE FROM event_words w USING old_rows o, {_WORDS.format(r='o')} "
           f"WHERE w.word = t.word AND w.date = o.date AND w.start = o.start "
           f"AND w.event_id = o.id {{kept}}")
# A row (`{this}`: n or o) that the other transition table holds as it was, by its id.
_UNCHANGED = ("AND NOT EXISTS (SELECT 1 FROM {other}_rows {other[0]} WHERE {other[0]}.id = "
              "{this}.id AND " + _SAME.format(n="n", o="o") + ")")
_UNCHANGED_NEW = _UNCHANGED.format(this="n", other="old")
_UNCHANGED_OLD = _UNCHANGED.format(this="o", other="new")

# No sequential scan of the words: each of a changed event's words is looked up by its key,
# however many words the statistics last counted (planned when the table was empty, a
# change to one event read all of them).
FUNCTION = f"""CREATE FUNCTION event_words_changed() RETURNS trigger LANGUAGE plpgsql
SET enable_seqscan = off AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    {_ADD.format(kept='')};
  ELSIF TG_OP = 'UPDATE' THEN
    {_REMOVE.format(kept=_UNCHANGED_OLD)};
    {_ADD.format(kept=_UNCHANGED_NEW)};
  ELSIF TG_OP = 'DELETE' THEN
    {_REMOVE.format(kept='')};
  ELSE
    TRUNCATE event_words;
  END IF;
  RETURN NULL;
END $$"""
TRIGGERS = [
    "CREATE TRIGGER event_words_insert AFTER INSERT ON events REFERENCING NEW TABLE AS "
    "new_rows FOR EACH STATEMENT EXECUTE FUNCTION event_words_changed()",
    "CREATE TRIGGER event_words_update AFTER UPDATE ON events REFERENCING OLD TABLE AS "
    "old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION event_words_changed()",
    "CREATE TRIGGER event_words_delete AFTER DELETE ON events REFERENCING OLD TABLE AS "
    "old_rows FOR EACH STATEMENT EXECUTE FUNCTION event_words_changed()",
    "CREATE TRIGGER event_words_truncate AFTER TRUNCATE ON events "
    "FOR EACH STATEMENT EXECUTE FUNCTION event_words_changed()",
]


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("CREATE TABLE event_words (word varchar(600) NOT NULL, date date NOT NULL, "
               "start varchar(5) NOT NULL, event_id varchar(80) NOT NULL, "
               "status varchar(10) NOT NULL, organisation_id varchar(80) NOT NULL)")
    op.execute("CREATE TABLE event_vocabulary (word varchar(600) NOT NULL, "
               "CONSTRAINT pk_event_vocabulary PRIMARY KEY (word))")
    # The words copied before their key is made (one sort, not a descent a row).
    op.execute(_WORD_ROWS.format(rows="events", r="e"))
    # The list's walk: a word's events in the agenda's order, carrying the public condition.
    op.execute("ALTER TABLE event_words ADD CONSTRAINT pk_event_words "
               "PRIMARY KEY (word, date, start, event_id) INCLUDE (status, organisation_id)")
    op.execute("INSERT INTO event_vocabulary (word) SELECT DISTINCT word FROM event_words")
    op.execute("CREATE INDEX ix_event_vocabulary_trgm ON event_vocabulary "
               "USING gin (word gin_trgm_ops)")
    op.execute(FUNCTION)
    for trigger in TRIGGERS:
        op.execute(trigger)
    op.execute("ANALYZE event_words, event_vocabulary")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for name in ("insert", "update", "delete", "truncate"):
        op.execute(f"DROP TRIGGER event_words_{name} ON events")
    op.execute("DROP FUNCTION event_words_changed()")
    op.execute("DROP TABLE event_vocabulary")
    op.execute("DROP TABLE event_words")

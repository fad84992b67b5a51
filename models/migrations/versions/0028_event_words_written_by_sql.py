"""an event's words (`search_key`) follow its title and venue's name whoever writes them
(PostgreSQL)

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-07 23:10:00

Free text finds an event by its words, `search_key`: its title and its venue's name folded
(models/text.py `fold`). The service wrote them (`denormalize`, an import's rows) and
nothing else did: a title changed by plain SQL, or a venue renamed by plain SQL (whose
events' `venue_name` its trigger writes, 0024), showed the new name in every answer at
once, but free text still found the event by its old words only, and not by its new ones.

PostgreSQL now writes an event's words where its writer did not: a row inserted without
them, or updated in its title, venue or venue name but not in its words (after its venue's
name is copied: `event_references` runs first, by name). They are `search_fold` of its title
and venue name, the same key as `fold` for every character (tested character by character,
models/text.py `fold_sql`), which the service writes itself. The events whose words were
left stale are written again (only those: their words differ from their fold), and their
words' index follows (0026's triggers): at a million events, ~10 s to look.

SQLite has no Unicode normalization: its rows keep the words as written, which the service
writes; a title or venue name changed there by plain SQL is found by its new words once the
service writes the event again.
"""

from alembic import op

from models.text import fold_sql

revision = '0028'
down_revision = '0027'
branch_labels = None
depends_on = None

# An event's words from its title and venue's name (of the row `{r}`).
_WORDS = "search_fold({r}title || ' ' || coalesce({r}venue_name, ''))"
# `search_fold` is made as the migration runs (`fold_sql` reads every character's Unicode
# data, ~0.3 s): not as Alembic loads the migrations.
FOLD = ("CREATE FUNCTION search_fold(text) RETURNS text LANGUAGE sql IMMUTABLE STRICT "
        "PARALLEL SAFE AS $$ SELECT {fold} $$")
WRITE = ("CREATE FUNCTION event_search_key() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
         "IF TG_OP = 'INSERT' AND NEW.search_key IS NULL OR TG_OP = 'UPDATE' "
         "AND NEW.search_key IS NOT DISTINCT FROM OLD.search_key "
         "AND (NEW.title, NEW.venue_name) IS DISTINCT FROM (OLD.title, OLD.venue_name) THEN "
         f"NEW.search_key := {_WORDS.format(r='NEW.')}; END IF; RETURN NEW; END $$")
TRIGGER = ("CREATE TRIGGER event_search_key BEFORE INSERT OR UPDATE OF title, venue_id, "
           "venue_name ON events FOR EACH ROW EXECUTE FUNCTION event_search_key()")
STALE = "UPDATE events SET search_key = {w} WHERE search_key IS DISTINCT FROM {w}".format(
    w=_WORDS.format(r=""))


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for statement in [FOLD.format(fold=fold_sql("$1")), WRITE, TRIGGER, STALE]:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TRIGGER event_search_key ON events")
    op.execute("DROP FUNCTION event_search_key()")
    op.execute("DROP FUNCTION search_fold(text)")

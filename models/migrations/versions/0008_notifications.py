"""notifications: PostgreSQL tells listening processes of a new catalogue stamp and of
changed tokens (adapters/watch.py)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26 06:45:00
"""

from alembic import op

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None

# 0007's renewal at commit, now also notifying the new stamp (adapters/watch.py CATALOGUE).
NOTIFYING = """CREATE OR REPLACE FUNCTION catalogue_committing() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  fresh text := gen_random_uuid()::text;
BEGIN
  UPDATE catalogue_stamp SET stamp = fresh WHERE id = 1;
  DELETE FROM catalogue_pending WHERE txid = NEW.txid;
  PERFORM pg_notify('agenda_catalogue', fresh);
  RETURN NULL;
END $$"""

SILENT = """CREATE OR REPLACE FUNCTION catalogue_committing() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE catalogue_stamp SET stamp = gen_random_uuid()::text WHERE id = 1;
  DELETE FROM catalogue_pending WHERE txid = NEW.txid;
  RETURN NULL;
END $$"""

# What admits a token (models/tokens.py `_TOKEN_ROW`): a change to any of it notifies
# adapters/watch.py TOKENS. Not `last_used_at`, which requests themselves keep writing.
TOKENS = [
    """CREATE FUNCTION tokens_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('agenda_tokens', '');
      RETURN NULL;
    END $$""",
    ("CREATE TRIGGER tokens_changed AFTER UPDATE OF token_hash, organisation_id, scopes, "
     "per_day, revoked_at OR DELETE OR TRUNCATE ON api_tokens "
     "FOR EACH STATEMENT EXECUTE FUNCTION tokens_changed()"),
    ("CREATE TRIGGER tokens_changed AFTER UPDATE OF suspended OR DELETE OR TRUNCATE "
     "ON organisations FOR EACH STATEMENT EXECUTE FUNCTION tokens_changed()"),
]


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return  # SQLite has no notifications: requests read it every time (adapters/watch.py).
    op.execute(NOTIFYING)
    for statement in TOKENS:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TRIGGER tokens_changed ON organisations")
    op.execute("DROP TRIGGER tokens_changed ON api_tokens")
    op.execute("DROP FUNCTION tokens_changed()")
    op.execute(SILENT)

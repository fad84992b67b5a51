"""change feed: triggers note every change to a public resource, numbered in commit order
(models/changes.py)

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26 22:00:00

The statements are written out here, not imported, so that this revision stays what it
was when later code changes.
"""

from alembic import op

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None

# table -> (type in the feed, when a row `{r}` of it is public)
RESOURCES = {
    "events": ("event", "{r}.status = 'approved' AND NOT EXISTS (SELECT 1 FROM organisations "
                        "suspender WHERE suspender.id = {r}.organisation_id "
                        "AND suspender.suspended)"),
    "venues": ("venue", "true"),
    "artists": ("artist", "true"),
    "organisations": ("organisation", "NOT {r}.suspended"),
    "releases": ("release", "true"),
}
# table -> (its resource's table, the column naming it): a change of it changes the resource.
PARTS = {
    "event_genres": ("events", "event_id"),
    "event_artists": ("events", "event_id"),
    "release_artists": ("releases", "release_id"),
}
# The events of an organisation whose suspension changed: public again, or not any more.
PG_SUSPENSION = ("SELECT 'event', e.id, CASE WHEN r.suspended THEN 'delete' ELSE 'upsert' END "
                 "FROM new_rows r JOIN old_rows o ON o.id = r.id "
                 "JOIN events e ON e.organisation_id = r.id "
                 "WHERE r.suspended IS DISTINCT FROM o.suspended AND e.status = 'approved'")
SQLITE_SUSPENSION = ("SELECT 'event', e.id, CASE WHEN NEW.suspended THEN 'delete' ELSE 'upsert' "
                     "END, CAST(strftime('%s', 'now') AS INTEGER) FROM events e "
                     "WHERE e.organisation_id = NEW.id AND e.status = 'approved'")


def _public(table: str, row: str) -> str:
    return RESOURCES[table][1].format(r=row)


# ---- PostgreSQL: statement triggers with transition tables; numbered as the transaction
# commits, by the stamp's renewal (models/stamp.py), after the stamp row is locked.

PG_TABLES = [
    """CREATE TABLE catalogue_changes (
      id bigserial PRIMARY KEY,
      txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
      type varchar(20) NOT NULL,
      resource_id varchar(80) NOT NULL,
      op varchar(6) NOT NULL
    )""",
    # One row per transaction and resource: a later change in the same transaction replaces
    # the earlier one and moves to the end (an event saved with its genres and line-up is
    # one change). Not (txid, type, ...): a page of a commit reads (txid, id), in order.
    "CREATE UNIQUE INDEX ix_catalogue_changes_once ON catalogue_changes (txid, resource_id, type)",
    "CREATE INDEX ix_catalogue_changes_txid ON catalogue_changes (txid, id)",
    """CREATE TABLE catalogue_commits (
      seq bigserial PRIMARY KEY,
      txid xid8 NOT NULL UNIQUE,
      at bigint NOT NULL
    )""",
    "CREATE INDEX ix_catalogue_commits_at ON catalogue_commits (at, seq)",
]

# A change already noted in this transaction is written again (and moved to the end) only
# when its op changed, or when the transaction was numbered already (SET CONSTRAINTS ...
# IMMEDIATE, as the tests do): a bulk load's genres and line-ups cost no second write.
PG_NOTE = ("INSERT INTO catalogue_changes (type, resource_id, op) {rows} "
           "ON CONFLICT (txid, type, resource_id) DO UPDATE "
           "SET op = EXCLUDED.op, id = nextval('catalogue_changes_id_seq') "
           "WHERE catalogue_changes.op <> EXCLUDED.op OR EXISTS (SELECT 1 FROM catalogue_commits "
           "WHERE catalogue_commits.txid = pg_current_xact_id())")


def _pg_resource_function(table: str) -> str:
    kind = RESOURCES[table][0]
    new, old = _public(table, "r"), _public(table, "o")
    suspension = (PG_NOTE.format(rows=PG_SUSPENSION) + ";"
                  if table == "organisations" else "")
    return f"""CREATE FUNCTION changes_{table}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        {PG_NOTE.format(rows=f"SELECT '{kind}', r.id, 'upsert' FROM new_rows r WHERE {new}")};
      ELSIF TG_OP = 'UPDATE' THEN
        {PG_NOTE.format(rows=(
            f"SELECT '{kind}', r.id, CASE WHEN {new} THEN 'upsert' ELSE 'delete' END "
            f"FROM new_rows r WHERE {new} OR EXISTS "
            f"(SELECT 1 FROM old_rows o WHERE o.id = r.id AND {old}) "
            f"UNION ALL SELECT '{kind}', o.id, 'delete' FROM old_rows o WHERE {old} "
            f"AND NOT EXISTS (SELECT 1 FROM new_rows r WHERE r.id = o.id)"))};
        {suspension}
      ELSIF TG_OP = 'DELETE' THEN
        {PG_NOTE.format(rows=f"SELECT '{kind}', o.id, 'delete' FROM old_rows o WHERE {old}")};
      ELSE
        {PG_NOTE.format(rows=f"SELECT '{kind}', r.id, 'delete' FROM {table} r WHERE {new}")};
      END IF;
      RETURN NULL;
    END $$"""


def _pg_part_function(table: str) -> str:
    parent, column = PARTS[table]
    kind = RESOURCES[parent][0]
    changed = {"INSERT": f"SELECT {column} FROM new_rows",
               "UPDATE": f"SELECT {column} FROM new_rows UNION SELECT {column} FROM old_rows",
               "DELETE": f"SELECT {column} FROM old_rows"}
    branches = "\n      ELS".join(
        f"IF TG_OP = '{event}' THEN\n        " + PG_NOTE.format(rows=(
            f"SELECT '{kind}', p.id, 'upsert' FROM {parent} p "
            f"WHERE p.id IN ({rows}) AND {_public(parent, 'p')}")) + ";"
        for event, rows in changed.items())
    return f"""CREATE FUNCTION changes_{table}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      {branches}
      END IF;
      RETURN NULL;
    END $$"""


def _pg_triggers(table: str) -> list[str]:
    run = f"FOR EACH STATEMENT EXECUTE FUNCTION changes_{table}()"
    statements = [
        f"CREATE TRIGGER changes_insert AFTER INSERT ON {table} "
        f"REFERENCING NEW TABLE AS new_rows {run}",
        f"CREATE TRIGGER changes_update AFTER UPDATE ON {table} "
        f"REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows {run}",
        f"CREATE TRIGGER changes_delete AFTER DELETE ON {table} "
        f"REFERENCING OLD TABLE AS old_rows {run}",
    ]
    if table in RESOURCES:  # before the rows are gone: each public one is a tombstone
        statements.append(f"CREATE TRIGGER changes_truncate BEFORE TRUNCATE ON {table} {run}")
    return statements


# 0008's renewal at commit (`{numbering}` empty), now also numbering the transaction's
# changes. The stamp row is renewed first: its lock, held until this transaction has
# committed, makes the next transaction wait here, so numbers follow the order of commits.
COMMITTING = """CREATE OR REPLACE FUNCTION catalogue_committing() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  fresh text := gen_random_uuid()::text;
BEGIN
  UPDATE catalogue_stamp SET stamp = fresh WHERE id = 1;
  DELETE FROM catalogue_pending WHERE txid = NEW.txid;{numbering}
  PERFORM pg_notify('agenda_catalogue', fresh);
  RETURN NULL;
END $$"""
NUMBERING = """
  IF EXISTS (SELECT 1 FROM catalogue_changes WHERE txid = pg_current_xact_id()) THEN
    INSERT INTO catalogue_commits (txid, at)
    VALUES (pg_current_xact_id(), floor(extract(epoch FROM clock_timestamp()))::bigint)
    ON CONFLICT (txid) DO NOTHING;
  END IF;"""


# ---- SQLite: row triggers; one writer at a time, so insertion order is commit order.

SQLITE_TABLES = [
    """CREATE TABLE catalogue_changes (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      type VARCHAR(20) NOT NULL,
      resource_id VARCHAR(80) NOT NULL,
      op VARCHAR(6) NOT NULL,
      at BIGINT NOT NULL
    )""",
    "CREATE INDEX ix_catalogue_changes_at ON catalogue_changes (at, id)",
]
SQLITE_NOTE = "INSERT INTO catalogue_changes (type, resource_id, op, at) "


def _sqlite_resource_triggers(table: str) -> list[str]:
    kind = RESOURCES[table][0]
    new, old = _public(table, "NEW"), _public(table, "OLD")
    statements = [
        f"CREATE TRIGGER changes_insert_{table} AFTER INSERT ON {table} WHEN {new} BEGIN "
        f"{SQLITE_NOTE}VALUES ('{kind}', NEW.id, 'upsert', CAST(strftime('%s', 'now') AS INTEGER)); END",
        f"CREATE TRIGGER changes_update_{table} AFTER UPDATE ON {table} "
        f"WHEN ({new}) OR ({old}) BEGIN "
        f"{SQLITE_NOTE}VALUES ('{kind}', NEW.id, CASE WHEN {new} THEN 'upsert' ELSE 'delete' "
        f"END, CAST(strftime('%s', 'now') AS INTEGER)); "
        f"{SQLITE_NOTE}SELECT '{kind}', OLD.id, 'delete', CAST(strftime('%s', 'now') AS INTEGER) "
        f"WHERE OLD.id <> NEW.id AND {old}; END",
        f"CREATE TRIGGER changes_delete_{table} AFTER DELETE ON {table} WHEN {old} BEGIN "
        f"{SQLITE_NOTE}VALUES ('{kind}', OLD.id, 'delete', CAST(strftime('%s', 'now') AS INTEGER)); END",
    ]
    if table == "organisations":
        statements.append(
            "CREATE TRIGGER changes_suspension AFTER UPDATE OF suspended ON organisations "
            "WHEN OLD.suspended IS NOT NEW.suspended BEGIN "
            f"{SQLITE_NOTE}{SQLITE_SUSPENSION}; END")
    return statements


def _sqlite_part_triggers(table: str) -> list[str]:
    parent, column = PARTS[table]
    kind = RESOURCES[parent][0]
    keys = {"INSERT": f"NEW.{column}", "UPDATE": f"NEW.{column}, OLD.{column}",
            "DELETE": f"OLD.{column}"}
    return [
        f"CREATE TRIGGER changes_{event.lower()}_{table} AFTER {event} ON {table} BEGIN "
        f"{SQLITE_NOTE}SELECT '{kind}', p.id, 'upsert', CAST(strftime('%s', 'now') AS INTEGER) FROM {parent} p "
        f"WHERE p.id IN ({ids}) AND {_public(parent, 'p')}; END"
        for event, ids in keys.items()
    ]


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        statements = [*PG_TABLES]
        for table in RESOURCES:
            statements += [_pg_resource_function(table), *_pg_triggers(table)]
        for table in PARTS:
            statements += [_pg_part_function(table), *_pg_triggers(table)]
        statements.append(COMMITTING.format(numbering=NUMBERING))
    else:
        statements = [*SQLITE_TABLES]
        for table in RESOURCES:
            statements += _sqlite_resource_triggers(table)
        for table in PARTS:
            statements += _sqlite_part_triggers(table)
    for statement in statements:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(COMMITTING.format(numbering=""))
        for table in [*RESOURCES, *PARTS]:
            for event in ("insert", "update", "delete", "truncate"):
                op.execute(f"DROP TRIGGER IF EXISTS changes_{event} ON {table}")
            op.execute(f"DROP FUNCTION changes_{table}()")
        op.execute("DROP TABLE catalogue_commits")
    else:
        for table in [*RESOURCES, *PARTS]:
            for event in ("insert", "update", "delete"):
                op.execute(f"DROP TRIGGER IF EXISTS changes_{event}_{table}")
        op.execute("DROP TRIGGER IF EXISTS changes_suspension")
    op.execute("DROP TABLE catalogue_changes")

"""an event carries its genres' names in their order: a list reads them with the event

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-28 23:00:00

A page of a list read each event's genres from `event_genres` (a walk of its key and an
aggregate, for every row of the page): at a million events a third of a page's time in
PostgreSQL (300 pages of the benchmark's long tail, each run alone: 1.3-1.5 ms a page with
them, 0.9 without). The names in their order are now a copy on the event
(`listed_genres`: an array on PostgreSQL, JSON on SQLite, NULL for none), kept by triggers
of `event_genres` whoever writes them (the API, an import, the demo data, plain SQL), as
the change feed and the counts are: a row of `event_genres` inserted, changed or deleted
writes its event's copy again, only where it differs. (A large catalogue wants a `VACUUM
(ANALYZE) events` after this migration, as after any bulk load: until then each of its rows
has a dead version, and lists that read an index alone must visit the table too.)

The copies are written with the catalogue's triggers off on PostgreSQL, as in 0021: they
change no answer, and each row's would note a change of its event in the feed and count
its day again. SQLite's triggers cannot be switched off; its databases are small. There,
the row trigger that counts an event's day again as the event changes (0016) is made again
as `models.facets.sqlite_triggers` now writes it: run only when a column it reads changes
(`COUNTED_COLUMNS`), not when the copy does (otherwise each genre written would count its
day three times: a statement writing thousands of genres ran past the request's deadline).
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from models.facets import COUNTED_COLUMNS, sqlite_triggers

revision = '0022'
down_revision = '0021'
branch_labels = None
depends_on = None

OPERATIONS = ("INSERT", "UPDATE", "DELETE")

# PostgreSQL: a statement trigger for each operation, reading the rows it changed (old and
# new) from its transition tables.
_PG_NAMES = "(SELECT array_agg(g.genre ORDER BY g.position, g.genre) FROM event_genres g " \
            "WHERE g.event_id = changed.event_id)"
_PG_CHANGED = {"INSERT": "SELECT event_id FROM new_rows",
               "UPDATE": "SELECT event_id FROM new_rows UNION SELECT event_id FROM old_rows",
               "DELETE": "SELECT event_id FROM old_rows"}
_PG_COPY = ("UPDATE events SET listed_genres = named.genres FROM (SELECT changed.event_id, "
            f"{_PG_NAMES} AS genres FROM ({{changed}}) changed) named "
            "WHERE events.id = named.event_id "
            "AND events.listed_genres IS DISTINCT FROM named.genres;")
PG_FUNCTION = f"""CREATE OR REPLACE FUNCTION event_listed_genres() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        {_PG_COPY.format(changed=_PG_CHANGED["INSERT"])}
      ELSIF TG_OP = 'UPDATE' THEN
        {_PG_COPY.format(changed=_PG_CHANGED["UPDATE"])}
      ELSE
        {_PG_COPY.format(changed=_PG_CHANGED["DELETE"])}
      END IF;
      RETURN NULL;
    END $$"""
_PG_TABLES = {"INSERT": "NEW TABLE AS new_rows",
              "UPDATE": "OLD TABLE AS old_rows NEW TABLE AS new_rows",
              "DELETE": "OLD TABLE AS old_rows"}
PG_TRIGGERS = [f"CREATE TRIGGER event_listed_genres_{operation.lower()} AFTER {operation} "
               f"ON event_genres REFERENCING {_PG_TABLES[operation]} FOR EACH STATEMENT "
               f"EXECUTE FUNCTION event_listed_genres()" for operation in OPERATIONS]

# SQLite: row triggers (NULL for no genres, as PostgreSQL's array_agg of none).
_SQLITE_NAMES = ("(SELECT CASE WHEN count(*) THEN json_group_array(genre) END FROM "
                 "(SELECT genre FROM event_genres WHERE event_id = {row}.event_id "
                 "ORDER BY position, genre))")
_SQLITE_COPY = ("UPDATE events SET listed_genres = {names} WHERE id = {row}.event_id "
                "AND listed_genres IS NOT {names};")
_SQLITE_ROWS = {"INSERT": ("NEW",), "UPDATE": ("OLD", "NEW"), "DELETE": ("OLD",)}
SQLITE_TRIGGERS = [
    f"CREATE TRIGGER event_listed_genres_{operation.lower()} AFTER {operation} ON event_genres "
    "BEGIN " + " ".join(_SQLITE_COPY.format(names=_SQLITE_NAMES.format(row=row), row=row)
                        for row in _SQLITE_ROWS[operation]) + " END"
    for operation in OPERATIONS]

# SQLite's trigger counting a changed event's day, and when it runs now.
_SQLITE_COUNTING = "event_days_update_events"
_SQLITE_COUNTED_UPDATE = f"AFTER UPDATE OF {', '.join(COUNTED_COLUMNS)} ON events"

COPY = {
    "postgresql": "UPDATE events SET listed_genres = named.genres FROM (SELECT event_id, "
                  "array_agg(genre ORDER BY position, genre) AS genres FROM event_genres "
                  "GROUP BY event_id) named WHERE named.event_id = events.id",
    "sqlite": "UPDATE events SET listed_genres = "
              + _SQLITE_NAMES.replace("{row}.event_id", "events.id"),
}


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        op.add_column("events", sa.Column("listed_genres", postgresql.ARRAY(sa.String(60)),
                                          nullable=True))
        op.execute("ALTER TABLE events DISABLE TRIGGER USER")
        op.execute(COPY[dialect])
        op.execute("ALTER TABLE events ENABLE TRIGGER USER")
        for statement in [PG_FUNCTION, *PG_TRIGGERS]:
            op.execute(statement)
    else:
        _sqlite_counting(any_update=False)
        op.add_column("events", sa.Column("listed_genres", sa.JSON(), nullable=True))
        op.execute(COPY[dialect])
        for statement in SQLITE_TRIGGERS:
            op.execute(statement)


def downgrade() -> None:
    for operation in OPERATIONS:
        op.execute(f"DROP TRIGGER event_listed_genres_{operation.lower()}"
                   + (" ON event_genres" if op.get_bind().dialect.name == "postgresql" else ""))
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION event_listed_genres()")
    else:
        _sqlite_counting(any_update=True)
    # Not batch mode on SQLite: copying the table would drop its triggers.
    op.execute("ALTER TABLE events DROP COLUMN listed_genres")


def _sqlite_counting(*, any_update: bool) -> None:
    """SQLite's trigger counting a changed event's day made again as `sqlite_triggers` writes
    it (run when a counted column changes), or with `any_update` at any update, as before."""
    made, = (trigger for trigger in sqlite_triggers(("events",))
             if trigger.startswith(f"CREATE TRIGGER {_SQLITE_COUNTING} "))
    op.execute(f"DROP TRIGGER {_SQLITE_COUNTING}")
    op.execute(made.replace(_SQLITE_COUNTED_UPDATE, "AFTER UPDATE ON events") if any_update
               else made)

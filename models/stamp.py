"""The catalogue stamp: a value that changes with every committed change to public data.

Database triggers (migration 0007) give `catalogue_stamp.stamp` a new random
value in the same transaction as any insert, update or delete on a table that public
answers are built from, whoever writes it: a request, an import or a demo-data load
in another process, an operator's SQL. The response cache (edge/cache.py) keys its
entries by the stamp, so a change is visible at once on every worker and host.
Random values, not a counter: a rolled-back change can never hand its number to a
different later change.

On PostgreSQL the stamp row is written at commit, not at the change: a statement
that changed rows notes its transaction in `catalogue_pending`, and a deferred
trigger on that note renews the stamp as the transaction commits. So the row is
locked for the moment of a commit, not for a whole transaction: a long import does
not hold up a door scan that awards a badge, or a sign-up. (Tests run in a
transaction that never commits; they set the trigger IMMEDIATE.) SQLite has one
writer at a time and renews the stamp in row triggers.

Since migration 0008 the renewal at commit also notifies the new stamp
(`pg_notify('agenda_catalogue', ...)`), so that each process knows it without reading
it (adapters/watch.py); `POSTGRESQL_FUNCTIONS` below is what 0007 created.
"""

from __future__ import annotations

from sqlalchemy import Integer, String, select
from sqlalchemy.orm import Mapped, mapped_column

from models.db import Base

# The tables public answers read. Not here: tokens, OAuth, tickets, deliveries, sales,
# marks, memberships and the outbox (organiser and private data, and the door's writes).
CATALOGUE_TABLES = (
    "organisations", "venues", "artists", "genres", "events", "event_genres",
    "event_artists", "releases", "release_artists", "token_reports", "festival_figures",
    "badges", "earned_badges", "people",
)


class CatalogueStamp(Base):
    """The single row holding the current stamp."""

    __tablename__ = "catalogue_stamp"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    stamp: Mapped[str] = mapped_column(String(40))


# The stamp alone (what confirms one a process knows: edge/admission.py).
READ = select(CatalogueStamp.stamp).where(CatalogueStamp.id == 1)


def current():
    """The stamp as a scalar subquery, to read in the same statement as something else."""
    return READ.scalar_subquery()


def postgresql_triggers(table: str) -> list[str]:
    """Statement-level triggers that renew the stamp when a statement changed rows of
    `table` (a statement that matched none, like an `ON CONFLICT DO NOTHING`, does not)."""
    return [
        f"CREATE TRIGGER catalogue_{event.lower()} AFTER {event} ON {table} "
        f"REFERENCING {rows} TABLE AS changed FOR EACH STATEMENT "
        f"EXECUTE FUNCTION catalogue_changed()"
        for event, rows in (("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD"))
    ] + [f"CREATE TRIGGER catalogue_truncate AFTER TRUNCATE ON {table} "
         f"FOR EACH STATEMENT EXECUTE FUNCTION catalogue_truncated()"]


# The statement triggers note the transaction; the stamp is renewed once, at its commit.
POSTGRESQL_FUNCTIONS = [
    "CREATE TABLE catalogue_pending (txid bigint PRIMARY KEY)",
    """CREATE FUNCTION catalogue_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM changed) THEN
        INSERT INTO catalogue_pending (txid) VALUES (txid_current()) ON CONFLICT DO NOTHING;
      END IF;
      RETURN NULL;
    END $$""",
    """CREATE FUNCTION catalogue_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO catalogue_pending (txid) VALUES (txid_current()) ON CONFLICT DO NOTHING;
      RETURN NULL;
    END $$""",
    """CREATE FUNCTION catalogue_committing() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE catalogue_stamp SET stamp = gen_random_uuid()::text WHERE id = 1;
      DELETE FROM catalogue_pending WHERE txid = NEW.txid;
      RETURN NULL;
    END $$""",
    "CREATE CONSTRAINT TRIGGER catalogue_committing AFTER INSERT ON catalogue_pending "
    "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION catalogue_committing()",
]


def sqlite_triggers(table: str) -> list[str]:
    """Row triggers (SQLite has no statement triggers) that renew the stamp."""
    return [
        f"CREATE TRIGGER catalogue_{event.lower()}_{table} AFTER {event} ON {table} "
        f"BEGIN UPDATE catalogue_stamp SET stamp = lower(hex(randomblob(16))) WHERE id = 1; END"
        for event in ("INSERT", "UPDATE", "DELETE")
    ]

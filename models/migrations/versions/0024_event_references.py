"""an event carries its venue's and organisation's reference: a list reads no other table

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-29 05:00:00

A page of a list read each event's venue by its key (a walk of the venues' key for every
row) and the organisations for its names: at a million events about a quarter of a page's
time in PostgreSQL (40 pages of the benchmark's long tail, each run alone: 18.3 ms with the
two, 12.4 without). An event now carries what its venue's and organisation's references
show (`venue_name`, `venue_city`, `venue_address`, `venue_country`, `organisation_name`,
beside its copies of the venue's `city_key`, `lat` and `lng`), kept by triggers whoever
writes (the API, an import, the demo data, plain SQL), as its genres' names are (0022): an
event written takes its venue's and organisation's, and a venue or organisation changed
writes its events' copies again.

The change feed lists a change of the event's own fields, not of its copies: as its
document says, a change to a venue or an organisation is not listed again for the events
that show its name (nor was a venue renamed through the API, whose events' words changed
with it, meant to be). PostgreSQL compares each changed row's fields but the copies;
SQLite's trigger runs on an update of the event's own columns (`OWN`).

The copies are written with the catalogue's triggers off on PostgreSQL, as in 0021 and
0022: they change no answer. On SQLite the change feed's trigger is made anew first, so
that writing the copies lists nothing.

Writing every event's row again leaves a large catalogue's table and indexes twice their
size (at a million events: the table 812 -> 1,560 MB, `ix_events_order` 131 -> 268 MB),
and the walks of the agenda's order read twice the pages until they are rewritten: run
`VACUUM (FULL, ANALYZE) events` after this migration (it locks the table for its time:
85 s at a million), then `VACUUM events` (a full vacuum leaves the visibility map empty,
and the walks that read an index alone would visit the table for every entry).
"""

import sqlalchemy as sa
from alembic import op

revision = '0024'
down_revision = '0023'
branch_labels = None
depends_on = None

REFERENCES = {"venue_name": sa.String(200), "venue_city": sa.String(100),
              "venue_address": sa.String(300), "venue_country": sa.String(2),
              "organisation_name": sa.String(200)}
# An event's copies: what its venue, organisation and genres hold, not the event itself.
COPIES = ["city_key", "lat", "lng", "search_key", "listed_genres", *REFERENCES]
# The event's own columns as of this revision (SQLite's change trigger runs on these).
OWN = ["id", "slug", "title", "date", "end_date", "last_date", "start", '"end"', "timezone",
       "status", "cancelled", "cancel_reason", "postponed_to", "price", "price_max",
       "currency", "age", "ticket_url", "artwork_url", "venue_id", "organisation_id",
       "description", "timetable", "maps", "rules", "dress", "source", "source_url",
       "updated_at", "festival_key", "season", "external_ticketing"]
# What the venue's copies are, by the event's column.
VENUE_COPIES = {"venue_name": "name", "venue_city": "city", "venue_address": "address",
                "venue_country": "country", "city_key": "city_key", "lat": "lat", "lng": "lng"}
_VENUE_CHANGED = " OR ".join(f"OLD.{column} IS DISTINCT FROM NEW.{column}"
                             for column in VENUE_COPIES.values())

# ---- PostgreSQL: the event's copies set as it is written (before the row is), and written
# again on its events as a venue or organisation changes.

PG_FUNCTIONS = [
    f"""CREATE FUNCTION event_references() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      venue record;
    BEGIN
      -- Set only where found: a missing venue or organisation is the foreign key's error.
      SELECT {', '.join(VENUE_COPIES.values())} INTO venue FROM venues WHERE id = NEW.venue_id;
      IF FOUND THEN
        {' '.join(f'NEW.{event} := venue.{column};' for event, column in VENUE_COPIES.items())}
      END IF;
      NEW.organisation_name := COALESCE(
        (SELECT name FROM organisations WHERE id = NEW.organisation_id), NEW.organisation_name);
      RETURN NEW;
    END $$""",
    f"""CREATE FUNCTION venue_references() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE events SET {', '.join(f'{event} = NEW.{venue}'
                                   for event, venue in VENUE_COPIES.items())}
        WHERE venue_id = NEW.id;
      RETURN NULL;
    END $$""",
    """CREATE FUNCTION organisation_references() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE events SET organisation_name = NEW.name WHERE organisation_id = NEW.id;
      RETURN NULL;
    END $$""",
]
PG_TRIGGERS = [
    "CREATE TRIGGER event_references BEFORE INSERT OR UPDATE OF venue_id, organisation_id "
    "ON events FOR EACH ROW EXECUTE FUNCTION event_references()",
    f"CREATE TRIGGER venue_references AFTER UPDATE ON venues FOR EACH ROW "
    f"WHEN ({_VENUE_CHANGED}) EXECUTE FUNCTION venue_references()",
    "CREATE TRIGGER organisation_references AFTER UPDATE ON organisations FOR EACH ROW "
    "WHEN (OLD.name IS DISTINCT FROM NEW.name) EXECUTE FUNCTION organisation_references()",
]
# Each event's references written from its venue and organisation (the same statement on
# both databases): the migration's copy of every event, and SQLite's trigger for one.
COPY = ("UPDATE events SET "
        + ", ".join(f"{event} = v.{venue}" for event, venue in VENUE_COPIES.items()
                    if event in REFERENCES)
        + ", organisation_name = o.name FROM venues v, organisations o "
          "WHERE v.id = events.venue_id AND o.id = events.organisation_id")

# 0010's change feed function of `events`, an update listing only the rows whose own fields
# changed (`{unchanged}`: empty as 0010 made it).
_PUBLIC = ("{r}.status = 'approved' AND NOT EXISTS (SELECT 1 FROM organisations suspender "
           "WHERE suspender.id = {r}.organisation_id AND suspender.suspended)")
_NEW, _OLD = _PUBLIC.format(r="r"), _PUBLIC.format(r="o")
_NOTE = ("INSERT INTO catalogue_changes (type, resource_id, op) {rows} "
         "ON CONFLICT (txid, type, resource_id) DO UPDATE "
         "SET op = EXCLUDED.op, id = nextval('catalogue_changes_id_seq') "
         "WHERE catalogue_changes.op <> EXCLUDED.op OR EXISTS (SELECT 1 FROM catalogue_commits "
         "WHERE catalogue_commits.txid = pg_current_xact_id())")
_COPIES_ARRAY = "ARRAY[" + ", ".join(f"'{column}'" for column in COPIES) + "]"
UNCHANGED = (f" AND NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.id = r.id "
             f"AND to_jsonb(o) - {_COPIES_ARRAY} = to_jsonb(r) - {_COPIES_ARRAY})")
_UPDATED = (f"SELECT 'event', r.id, CASE WHEN {_NEW} THEN 'upsert' ELSE 'delete' END "
            f"FROM new_rows r WHERE ({_NEW} OR EXISTS "
            f"(SELECT 1 FROM old_rows o WHERE o.id = r.id AND {_OLD})){{unchanged}} "
            f"UNION ALL SELECT 'event', o.id, 'delete' FROM old_rows o WHERE {_OLD} "
            f"AND NOT EXISTS (SELECT 1 FROM new_rows r WHERE r.id = o.id)")
PG_CHANGES = f"""CREATE OR REPLACE FUNCTION changes_events() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        {_NOTE.format(rows=f"SELECT 'event', r.id, 'upsert' FROM new_rows r WHERE {_NEW}")};
      ELSIF TG_OP = 'UPDATE' THEN
        {_NOTE.format(rows=_UPDATED)};
      ELSIF TG_OP = 'DELETE' THEN
        {_NOTE.format(rows=f"SELECT 'event', o.id, 'delete' FROM old_rows o WHERE {_OLD}")};
      ELSE
        {_NOTE.format(rows=f"SELECT 'event', r.id, 'delete' FROM events r WHERE {_NEW}")};
      END IF;
      RETURN NULL;
    END $$"""

# ---- SQLite: row triggers after the row is written (its copies then set by an update of
# the copies alone: the counted day's trigger, 0022, runs only where the city changed).

_SQLITE_REFERENCES = f"{COPY} AND events.id = NEW.id;"
_SQLITE_PLACE = ("UPDATE events SET city_key = v.city_key, lat = v.lat, lng = v.lng "
                 "FROM venues v WHERE events.id = NEW.id AND v.id = events.venue_id "
                 "AND (events.city_key IS NOT v.city_key OR events.lat IS NOT v.lat "
                 "OR events.lng IS NOT v.lng);")
SQLITE_TRIGGERS = [
    f"CREATE TRIGGER event_references_insert AFTER INSERT ON events BEGIN "
    f"{_SQLITE_REFERENCES} {_SQLITE_PLACE} END",
    f"CREATE TRIGGER event_references_update AFTER UPDATE OF venue_id, organisation_id "
    f"ON events BEGIN {_SQLITE_REFERENCES} {_SQLITE_PLACE} END",
    "CREATE TRIGGER venue_references AFTER UPDATE ON venues "
    f"WHEN {_VENUE_CHANGED.replace('IS DISTINCT FROM', 'IS NOT')} BEGIN UPDATE events SET "
    + ", ".join(f"{event} = NEW.{venue}" for event, venue in VENUE_COPIES.items()
                if event in REFERENCES)
    + " WHERE venue_id = NEW.id; UPDATE events SET city_key = NEW.city_key, lat = NEW.lat, "
      "lng = NEW.lng WHERE venue_id = NEW.id AND (city_key IS NOT NEW.city_key "
      "OR lat IS NOT NEW.lat OR lng IS NOT NEW.lng); END",
    "CREATE TRIGGER organisation_references AFTER UPDATE OF name ON organisations "
    "WHEN OLD.name IS NOT NEW.name BEGIN UPDATE events SET organisation_name = NEW.name "
    "WHERE organisation_id = NEW.id; END",
]
# 0010's change trigger of an updated event, run on an update of its own columns
# (`{columns}`: empty as 0010 made it, on any update).
_SQLITE_NEW, _SQLITE_OLD = _PUBLIC.format(r="NEW"), _PUBLIC.format(r="OLD")
_SQLITE_NOW = "CAST(strftime('%s', 'now') AS INTEGER)"
SQLITE_CHANGES = (
    "CREATE TRIGGER changes_update_events AFTER UPDATE{columns} ON events "
    f"WHEN ({_SQLITE_NEW}) OR ({_SQLITE_OLD}) BEGIN "
    "INSERT INTO catalogue_changes (type, resource_id, op, at) "
    f"VALUES ('event', NEW.id, CASE WHEN {_SQLITE_NEW} THEN 'upsert' ELSE 'delete' END, "
    f"{_SQLITE_NOW}); "
    "INSERT INTO catalogue_changes (type, resource_id, op, at) "
    f"SELECT 'event', OLD.id, 'delete', {_SQLITE_NOW} WHERE OLD.id <> NEW.id AND {_SQLITE_OLD}; "
    "END")


def upgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    if not postgres:
        op.execute("DROP TRIGGER changes_update_events")
        op.execute(SQLITE_CHANGES.format(columns=f" OF {', '.join(OWN)}"))
    for column, kind in REFERENCES.items():
        op.add_column("events", sa.Column(column, kind, nullable=True))
    if postgres:
        op.execute("ALTER TABLE events DISABLE TRIGGER USER")
        op.execute(COPY)
        op.execute("ALTER TABLE events ENABLE TRIGGER USER")
        for statement in [*PG_FUNCTIONS, *PG_TRIGGERS, PG_CHANGES.format(unchanged=UNCHANGED)]:
            op.execute(statement)
    else:
        op.execute(COPY)
        for statement in SQLITE_TRIGGERS:
            op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(PG_CHANGES.format(unchanged=""))
        op.execute("DROP TRIGGER event_references ON events")
        op.execute("DROP TRIGGER venue_references ON venues")
        op.execute("DROP TRIGGER organisation_references ON organisations")
        for function in ("event_references", "venue_references", "organisation_references"):
            op.execute(f"DROP FUNCTION {function}()")
    else:
        for trigger in ("event_references_insert", "event_references_update",
                        "venue_references", "organisation_references", "changes_update_events"):
            op.execute(f"DROP TRIGGER {trigger}")
        op.execute(SQLITE_CHANGES.format(columns=""))
    # Not batch mode on SQLite: copying the table would drop its triggers.
    for column in REFERENCES:
        op.execute(f"ALTER TABLE events DROP COLUMN {column}")

"""Migrations that move data: run from the revision before them on a database with rows."""

import contextlib
import datetime as dt

from sqlalchemy import inspect, text

from models import facets, migrate
from models.db import Base, make_engine
from models.tickets import DeliveryBatch
from tests import factories
from tests.api import day
from tests.servers import committed, drop_database, scratch_database


@contextlib.contextmanager
def _database_at(name: str, revision: str):
    """(url, engine) of a scratch database migrated up to `revision`, dropped afterwards."""
    url = scratch_database(name)
    engine = make_engine(url)
    try:
        migrate.upgrade(engine, revision)
        yield url, engine
    finally:
        engine.dispose()
        drop_database(url)


@contextlib.contextmanager
def _written_today(url: str, engine):
    """A committed session (`committed`) for today's factories on a database at an older
    revision: the columns today's models map and it lacks are added for the block
    (nullable) and dropped after it, so that the rows written are those of that revision."""
    added = []
    with engine.begin() as connection:
        present = inspect(connection)
        for table in Base.metadata.sorted_tables:
            if not present.has_table(table.name):
                continue
            have = {column["name"] for column in present.get_columns(table.name)}
            for column in table.columns:
                if column.name not in have:
                    kind = column.type.compile(dialect=engine.dialect)
                    connection.execute(text(
                        f"ALTER TABLE {table.name} ADD COLUMN {column.name} {kind}"))
                    added.append((table.name, column.name))
    try:
        with committed(url) as session:
            yield session
    finally:
        with engine.begin() as connection:
            for table, column in added:
                connection.execute(text(f"ALTER TABLE {table} DROP COLUMN {column}"))


def _outbox_row(connection, to: str, ticket_id: str | None) -> None:
    connection.execute(text(
        "INSERT INTO outbox (kind, to_address, subject, body, ticket_id, status, attempts, "
        "created_at) VALUES ('ticket_waiting', :to, 'S', 'B', :ticket, 'pending', 0, 1)"),
        {"to": to, "ticket": ticket_id})


def test_0009_gives_each_queued_mail_the_delivery_of_its_ticket(worker_id):
    with _database_at(f"{worker_id}_migration_0009", "0008") as (url, engine):
        with _written_today(url, engine) as session:
            factories.bind(session)
            event = factories.EventFactory(external_ticketing=True)
            session.add(DeliveryBatch(id="dlv_old", event_id=event.id, source="other",
                                      created_at=1))
            session.flush()
            delivered = factories.TicketFactory(event_id=event.id, batch_id="dlv_old")
            sold = factories.TicketFactory(event_id=event.id, batch_id=None)
            session.flush()
            ids = delivered.id, sold.id
        with engine.begin() as connection:
            _outbox_row(connection, "delivered@mail.example", ids[0])
            _outbox_row(connection, "sold@mail.example", ids[1])
            _outbox_row(connection, "nobody@mail.example", None)

        migrate.upgrade(engine, "0009")
        with engine.connect() as connection:
            rows = connection.execute(text(
                "SELECT to_address, batch_id FROM outbox ORDER BY id")).all()
        assert rows == [("delivered@mail.example", "dlv_old"), ("sold@mail.example", None),
                        ("nobody@mail.example", None)]

        migrate.downgrade(engine, "0008")
        with engine.connect() as connection:
            assert connection.execute(text("SELECT count(*) FROM outbox")).scalar_one() == 3


def _kept(connection, table: str, columns: str) -> set[tuple]:
    """The kept counts of `table`, dates as text (as SQLite gives them)."""
    return {tuple(str(value) if isinstance(value, dt.date) else value for value in row)
            for row in connection.execute(text(f"SELECT {columns} FROM {table}"))}


def _day_counts(connection, columns: str = "organisation_id, city_key, genre, date, events"
                ) -> set[tuple]:
    return _kept(connection, "event_day_counts", columns)


def _month_counts(connection, columns: str = "organisation_id, city_key, genre, month, events"
                  ) -> set[tuple]:
    return _kept(connection, "event_month_counts", columns)


def test_0014_counts_each_organisations_days_and_keeps_counting_them(worker_id):
    with _database_at(f"{worker_id}_migration_0014", "0013") as (url, engine):
        with _written_today(url, engine) as session:
            factories.bind(session)
            club, other = factories.OrganisationFactory(), factories.OrganisationFactory()
            techno = factories.EventFactory(date=day(2), organisation=club,
                                            genre_names=["Techno"])
            factories.EventFactory(date=day(2), organisation=club, genre_names=["House"])
            factories.EventFactory(date=day(2), organisation=other, genre_names=["Techno"])
            session.flush()
            ids = club.id, other.id, techno.id
        with engine.connect() as connection:
            before = _day_counts(connection, "city_key, genre, date, events")

        migrate.upgrade(engine, "0014")
        with engine.connect() as connection:
            after = _day_counts(connection)
        assert {row[1:] for row in after if row[0] == ""} == before
        assert {row[1:] for row in after if row[0] == ids[0] and row[1] == ""} == {
            ("", "", str(day(2)), 2), ("", "House", str(day(2)), 1),
            ("", "Techno", str(day(2)), 1)}
        with engine.begin() as connection:  # plain SQL: the triggers count the new way
            connection.execute(text("UPDATE events SET organisation_id = :other WHERE id = :id"),
                               {"other": ids[1], "id": ids[2]})
        with engine.connect() as connection:
            moved = _day_counts(connection)
        assert (ids[1], "", "Techno", str(day(2)), 2) in moved
        assert (ids[0], "", "Techno", str(day(2)), 1) not in moved

        migrate.downgrade(engine, "0013")
        with engine.connect() as connection:
            assert _day_counts(connection, "city_key, genre, date, events") == before


def test_0016_sums_each_organisations_months_and_keeps_summing_them(worker_id):
    with _database_at(f"{worker_id}_migration_0016", "0015") as (url, engine):
        with _written_today(url, engine) as session:
            factories.bind(session)
            club, other = factories.OrganisationFactory(), factories.OrganisationFactory()
            first = (day(40).replace(day=1) + dt.timedelta(days=32)).replace(day=1)
            techno = factories.EventFactory(date=first, organisation=club,
                                            genre_names=["Techno"])
            factories.EventFactory(date=first + dt.timedelta(days=3), organisation=club,
                                   genre_names=["Techno", "House"])
            factories.EventFactory(date=first, organisation=other, genre_names=["Techno"])
            session.flush()
            ids = club.id, other.id, techno.id
        with engine.connect() as connection:
            days = _day_counts(connection)
            months = _month_counts(connection, "city_key, genre, month, events")

        migrate.upgrade(engine, "0016")
        month = str(first)
        with engine.connect() as connection:
            assert _day_counts(connection) == days
            summed = _month_counts(connection)
        assert {row[1:] for row in summed if row[0] == ""} == months
        assert {row[1:] for row in summed if row[0] == ids[0] and row[1] == ""} == {
            ("", "", month, 2), ("", "Techno", month, 2), ("", "House", month, 1)}
        with engine.begin() as connection:  # plain SQL: the triggers sum the new way
            connection.execute(text("UPDATE events SET organisation_id = :other WHERE id = :id"),
                               {"other": ids[1], "id": ids[2]})
        with engine.connect() as connection:
            moved = _month_counts(connection)
        assert (ids[1], "", "Techno", month, 2) in moved
        assert (ids[0], "", "Techno", month, 1) in moved
        assert ("", "", "Techno", month, 3) in moved

        migrate.downgrade(engine, "0015")
        with engine.connect() as connection:
            # Counted afresh as 0015 counts: the move changed no count of all organisations.
            assert _month_counts(connection, "city_key, genre, month, events") == months
            assert {row for row in _day_counts(connection) if row[0] == ""} == \
                {row for row in days if row[0] == ""}



def _indexes(connection, table: str) -> set[str]:
    return {index["name"] for index in inspect(connection).get_indexes(table)}


def test_0017_reads_the_date_facets_totals_from_an_index_of_their_own(worker_id):
    with _database_at(f"{worker_id}_migration_0017", "0016") as (url, engine):
        with _written_today(url, engine) as session:
            factories.bind(session)
            factories.EventFactory(date=day(3), genre_names=["Techno", "House"])
        migrate.upgrade(engine, "0017")
        plan = []
        with engine.connect() as connection:
            assert "ix_event_day_counts_totals" in _indexes(connection, "event_day_counts")
            if engine.dialect.name == "postgresql":
                # A window's totals, not every city's and genre's rows of its days.
                connection.execute(text("ANALYZE event_day_counts"))
                connection.execute(text("SET enable_seqscan = off"))
                totals = facets._KEPT_DAYS.params(owner="", date_from=day(0), date_to=day(61),
                                                  scope_city="", scope_genre="")
                plan = connection.exec_driver_sql("EXPLAIN " + str(totals.compile(
                    dialect=engine.dialect, compile_kwargs={"literal_binds": True}))).scalars().all()
                assert "ix_event_day_counts_totals" in "\n".join(plan), plan
        migrate.downgrade(engine, "0016")
        with engine.connect() as connection:
            assert "ix_event_day_counts_totals" not in _indexes(connection, "event_day_counts")


def test_0021_copies_each_events_city_onto_its_genres_and_notes_no_change(worker_id):
    with _database_at(f"{worker_id}_migration_0021", "0020") as (url, engine):
        with _written_today(url, engine) as session:
            factories.bind(session)
            gent = factories.VenueFactory(city="Gent")
            utrecht = factories.VenueFactory(city="Utrecht")
            factories.EventFactory(venue=gent, genre_names=["Techno", "Latin"])
            factories.EventFactory(venue=utrecht, genre_names=["Latin"])
        with engine.connect() as connection:
            changes = connection.execute(text("SELECT count(*) FROM catalogue_changes")).scalar()
            days = _day_counts(connection)

        migrate.upgrade(engine, "0021")
        with engine.connect() as connection:
            copied = connection.execute(text(
                "SELECT genre, event_genres.city_key, events.city_key FROM event_genres "
                "JOIN events ON events.id = event_id ORDER BY 1, 2")).all()
            assert "ix_event_genres_city_order" in _indexes(connection, "event_genres")
            if engine.dialect.name == "postgresql":  # written with the triggers off
                assert connection.execute(text(
                    "SELECT count(*) FROM catalogue_changes")).scalar() == changes
            assert _day_counts(connection) == days
        assert copied == [("Latin", "gent", "gent"), ("Latin", "utrecht", "utrecht"),
                          ("Techno", "gent", "gent")]

        migrate.downgrade(engine, "0020")
        with engine.connect() as connection:
            columns = {column["name"] for column in inspect(connection).get_columns(
                "event_genres")}
        assert "city_key" not in columns


def test_0024_copies_each_events_venue_and_organisation_and_notes_no_change(worker_id):
    with _database_at(f"{worker_id}_migration_0024", "0023") as (url, engine):
        with _written_today(url, engine) as session:
            factories.bind(session)
            kaai = factories.VenueFactory(name="De Kaai", city="Gent", address="Kaai 1",
                                          country="BE")
            shelter = factories.VenueFactory(name="Shelter", city="Amsterdam", country="NL")
            nights = factories.OrganisationFactory(name="Nights")
            factories.EventFactory(venue=kaai, organisation=nights)
            factories.EventFactory(venue=shelter, organisation=nights)
        with engine.connect() as connection:
            changes = connection.execute(text("SELECT count(*) FROM catalogue_changes")).scalar()

        migrate.upgrade(engine, "0024")
        with engine.connect() as connection:
            copied = connection.execute(text(
                "SELECT venue_name, venue_city, venue_address, venue_country, organisation_name "
                "FROM events ORDER BY venue_name")).all()
            assert connection.execute(text(
                "SELECT count(*) FROM catalogue_changes")).scalar() == changes
        assert copied == [("De Kaai", "Gent", "Kaai 1", "BE", "Nights"),
                          ("Shelter", "Amsterdam", shelter.address, "NL", "Nights")]

        migrate.downgrade(engine, "0023")
        with engine.begin() as connection:
            columns = {column["name"] for column in inspect(connection).get_columns("events")}
            # Without the triggers that wrote the copies.
            connection.execute(text("UPDATE venues SET name = 'Kaai' WHERE name = 'De Kaai'"))
            connection.execute(text("UPDATE organisations SET name = 'Days'"))
        assert not columns & {"venue_name", "venue_city", "venue_address", "venue_country",
                              "organisation_name"}


def test_0026_writes_each_events_words_and_keeps_them_written(worker_id):
    """PostgreSQL: each word of each event's words, with its position and public condition,
    and the vocabulary of them; then kept by triggers as events are written, and emptied
    with them."""
    with _database_at(f"{worker_id}_migration_0026", "0025") as (url, engine):
        if engine.dialect.name != "postgresql":
            migrate.upgrade(engine, "0026")
            with engine.connect() as connection:
                assert not inspect(connection).has_table("event_words")
            return
        with _written_today(url, engine) as session:
            factories.bind(session)
            kaai = factories.VenueFactory(name="De Kaai", city="Gent")
            night = factories.EventFactory(title="Kompas Nacht", venue=kaai, date=day(3))
            factories.EventFactory(title="Kompas", venue=kaai, status="pending")

        migrate.upgrade(engine, "0026")
        words = ("SELECT word, event_id, date, start, status FROM event_words "
                 "ORDER BY event_id, word")
        with engine.begin() as connection:
            written = connection.execute(text(words)).all()
            vocabulary = connection.execute(text(
                "SELECT word FROM event_vocabulary ORDER BY word")).scalars().all()
            connection.execute(text("UPDATE events SET search_key = 'kompasroos de kaai', "
                                    "date = :date WHERE id = :id"),
                               {"date": day(4), "id": night.id})
            rewritten = connection.execute(text(
                "SELECT word, date FROM event_words WHERE event_id = :id ORDER BY word"),
                {"id": night.id}).all()
            added = connection.execute(text(
                "SELECT word FROM event_vocabulary ORDER BY word")).scalars().all()
        mine = [(word, status) for word, event_id, _date, _start, status in written
                if event_id == night.id]
        assert mine == [("de", "approved"), ("kaai", "approved"), ("kompas", "approved"),
                        ("nacht", "approved")]
        assert ("kompas", "pending") in {(word, status) for word, *_, status in written}
        assert vocabulary == ["de", "kaai", "kompas", "nacht"]
        assert rewritten == [("de", day(4)), ("kaai", day(4)), ("kompasroos", day(4))]
        assert added == ["de", "kaai", "kompas", "kompasroos", "nacht"]

        with engine.begin() as connection:
            connection.execute(text("TRUNCATE events CASCADE"))
            assert connection.execute(text("SELECT count(*) FROM event_words")).scalar() == 0

        migrate.downgrade(engine, "0025")
        with engine.connect() as connection:
            assert not inspect(connection).has_table("event_words")
            assert not inspect(connection).has_table("event_vocabulary")


def test_0028_writes_the_words_plain_sql_left_stale_and_keeps_them_written(worker_id):
    """PostgreSQL: an event whose title or venue's name plain SQL changed before 0028 has
    its words written from them again, and its words' index follows; afterwards they are
    written as plain SQL changes a title or a venue's name, or inserts an event without
    them, and left as a writer gave them."""
    with _database_at(f"{worker_id}_migration_0028", "0027") as (url, engine):
        if engine.dialect.name != "postgresql":
            migrate.upgrade(engine, "0028")
            return
        with _written_today(url, engine) as session:
            factories.bind(session)
            kaai = factories.VenueFactory(name="De Kaai", city="Gent")
            stale = factories.EventFactory(title="Kompas Nacht", venue=kaai, date=day(3))
            kept = factories.EventFactory(title="Zomerbal", venue=kaai, date=day(4))

        def words(event_id: str) -> tuple[str, list[str]]:
            with engine.connect() as connection:
                return (connection.execute(text("SELECT search_key FROM events WHERE id = :id"),
                                           {"id": event_id}).scalar_one(),
                        connection.execute(text(
                            "SELECT word FROM event_words WHERE event_id = :id ORDER BY word"),
                            {"id": event_id}).scalars().all())

        with engine.begin() as connection:
            connection.execute(text("UPDATE events SET title = 'Crème Brûlée' WHERE id = :id"),
                               {"id": stale.id})
        assert words(stale.id) == ("kompas nacht de kaai", ["de", "kaai", "kompas", "nacht"])
        unchanged = words(kept.id)

        migrate.upgrade(engine, "0028")
        assert words(stale.id) == ("creme brulee de kaai", ["brulee", "creme", "de", "kaai"])
        assert words(kept.id) == unchanged
        with engine.begin() as connection:
            connection.execute(text("UPDATE venues SET name = 'Straße' WHERE id = :id"),
                               {"id": kaai.id})
            connection.execute(text("UPDATE events SET title = 'Herfst', search_key = 'eigen' "
                                    "WHERE id = :id"), {"id": kept.id})
            connection.execute(text("CREATE TEMPORARY TABLE copied AS SELECT * FROM events "
                                    "WHERE id = :id"), {"id": stale.id})
            connection.execute(text("UPDATE copied SET id = 'copy', slug = 'copy', "
                                    "title = 'Lente', search_key = NULL"))
            connection.execute(text("INSERT INTO events SELECT * FROM copied"))
        assert words(stale.id) == ("creme brulee strasse", ["brulee", "creme", "strasse"])
        assert words(kept.id) == ("eigen", ["eigen"])  # as its writer gave them
        assert words("copy") == ("lente strasse", ["lente", "strasse"])

        migrate.downgrade(engine, "0027")
        with engine.begin() as connection:
            assert connection.execute(text(
                "SELECT count(*) FROM pg_proc WHERE proname IN ('search_fold', "
                "'event_search_key')")).scalar() == 0
            connection.execute(text("UPDATE events SET title = 'Winter' WHERE id = :id"),
                               {"id": stale.id})
        assert words(stale.id)[0] == "creme brulee strasse"

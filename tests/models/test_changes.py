"""The change feed with writers that really commit: the command line, plain SQL, the
application's unit of work, pruning, and (on PostgreSQL) concurrent writers whose
transactions commit out of the order they began in, followed by a polling reader."""

from __future__ import annotations

import random
import secrets
import threading
import time
import uuid

import pytest
from click.testing import CliRunner
from sqlalchemy import delete, select, text

from agenda import cli
from models import changes, organisations
from models.db import make_engine, make_sessionmaker
from models.events import Event
from models.organisations import Organisation
from models.unit_of_work import transaction
from tests import factories
from tests.agenda import test_cli_data
from tests.agenda.test_cli_data import _example, _run, _Rows
from tests.servers import committed

SQLITE = "SQLite lets one transaction write at a time: its writers cannot overlap"
DAY = 24 * 3600


def committed_change(session, *, type_: str, id_: str, op: str, at: int) -> None:
    """A change as if committed at `at` (before the changes that follow it)."""
    if session.get_bind().dialect.name == "postgresql":
        txid = str(2**60 + secrets.randbelow(2**40))
        session.execute(text("INSERT INTO catalogue_commits (txid, at) "
                             "VALUES (CAST(:x AS xid8), :at)"), {"x": txid, "at": at})
        session.execute(text("INSERT INTO catalogue_changes (txid, type, resource_id, op) "
                             "VALUES (CAST(:x AS xid8), :type, :id, :op)"),
                        {"x": txid, "type": type_, "id": id_, "op": op})
    else:
        session.execute(text("INSERT INTO catalogue_changes (type, resource_id, op, at) "
                             "VALUES (:type, :id, :op, :at)"),
                        {"type": type_, "id": id_, "op": op, "at": at})


class Reader:
    """A partner following the feed with its cursor's position, a page at a time."""

    def __init__(self, sessions, *, limit: int = 1000, types: str | None = None):
        self.sessions, self.limit = sessions, limit
        self.filters = changes.ChangeFilters.of(types)
        self.after: list | None = None
        self.seen: list[tuple] = []

    def poll(self) -> list[tuple]:
        """One page: (type, id, op) of its changes."""
        with self.sessions() as session:
            page = changes.list_changes(session, filters=self.filters, since=None,
                                        after=self.after, limit=self.limit, now=int(time.time()))
        assert page.next_key is not None
        self.after = list(page.next_key)
        found = [(c.type, c.id, c.op) for c in page.items]
        self.seen += found
        return found

    def catch_up(self) -> list[tuple]:
        """Every change up to now."""
        found = []
        while True:
            page = self.poll()
            found += page
            if len(page) < self.limit:
                return found


def _mine(found: list[tuple], prefix: str) -> list[tuple]:
    return [change for change in found if change[1].startswith(prefix)]


@pytest.fixture
def sessions(database_url):
    engine = make_engine(database_url)
    yield make_sessionmaker(engine)
    engine.dispose()


rows = test_cli_data.rows  # the fixture: rows of ids of the test's own, removed after


def test_agenda_import_appears_in_the_feed(database_url, sessions, rows, tmp_path):
    reader = Reader(sessions)
    reader.catch_up()
    assert _run(database_url, "import", str(_example(rows.prefix, tmp_path))).exit_code == 0
    found = set(_mine(reader.catch_up(), rows.prefix))
    p = rows.prefix
    assert {("organisation", f"{p}nachtwerk", "upsert"), ("venue", f"{p}de-kaai", "upsert"),
            ("artist", f"{p}mira-voss", "upsert"), ("event", f"{p}polderlicht-2027", "upsert"),
            # cancelled, still public
            ("event", f"{p}sk-2026-12-19", "upsert"),
            ("release", f"{p}mira-voss-tidal", "upsert")} <= found
    assert {change[2] for change in found} == {"upsert"}


def test_agenda_demo_data_appears_in_the_feed(database_url, sessions):
    seed = str(random.randrange(10**8, 10**9))
    made = _Rows(database_url, f"demo{seed}-")
    try:
        reader = Reader(sessions)
        reader.catch_up()
        result = _run(database_url, "demo-data", "--events", "100", "--seed", seed)
        assert result.exit_code == 0, result.output
        found = _mine(reader.catch_up(), made.prefix)
        with sessions() as session:  # the demo's few drafts are never listed
            approved = set(session.scalars(select(Event.id).where(
                Event.id.like(f"{made.prefix}%"), Event.status == "approved")))
        assert {change[1] for change in found if change[0] == "event"} == approved
        assert len(approved) >= 100 and made.count(Event) == 110
        assert {change[0] for change in found} >= {"event", "venue", "artist"}
    finally:
        made.remove()


def test_plain_sql_and_the_units_of_work_of_the_application_appear(database_url, sessions,
                                                                   rows, tmp_path):
    assert _run(database_url, "import", str(_example(rows.prefix, tmp_path))).exit_code == 0
    reader = Reader(sessions)
    reader.catch_up()
    event = f"{rows.prefix}nw-2027-01-16"
    engine = make_engine(database_url)
    try:
        with engine.begin() as connection:
            connection.execute(text("UPDATE events SET title = 'Renamed' WHERE id = :id"),
                               {"id": event})
        assert _mine(reader.catch_up(), rows.prefix) == [("event", event, "upsert")]
        with engine.begin() as connection:
            connection.execute(text("UPDATE events SET status = 'rejected' WHERE id = :id"),
                               {"id": event})
        assert _mine(reader.catch_up(), rows.prefix) == [("event", event, "delete")]
    finally:
        engine.dispose()
    # What a request, an MCP call or a command commits: the same unit of work.
    with transaction(sessions) as session:
        made = organisations.create_organisation(session, name=f"Unit {rows.prefix}").id
    try:
        assert [change for change in reader.catch_up() if change[1] == made] == [
            ("organisation", made, "upsert")]
    finally:
        with transaction(sessions) as session:
            session.execute(delete(Organisation).where(Organisation.id == made))


def test_changes_older_than_31_days_are_pruned_by_the_worker(database_url, sessions):
    now = int(time.time())
    old, kept = f"ven_old_{uuid.uuid4().hex[:8]}", f"ven_kept_{uuid.uuid4().hex[:8]}"
    with transaction(sessions) as session:
        committed_change(session, type_="venue", id_=old, op="delete", at=now - 32 * DAY)
        committed_change(session, type_="venue", id_=kept, op="delete", at=now - 29 * DAY)
    result = CliRunner().invoke(cli.main, ["worker", "--once"],
                                env={"AGENDA_DATABASE_URL": database_url, "AGENDA_SMTP_URL": None},
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    with sessions() as session:
        left = set(session.scalars(text(
            "SELECT resource_id FROM catalogue_changes WHERE resource_id IN (:a, :b)"),
            {"a": old, "b": kept}))
        assert left == {kept}
        if session.get_bind().dialect.name == "postgresql":
            assert session.scalar(text(
                "SELECT count(*) FROM catalogue_commits WHERE at < :cutoff"),
                {"cutoff": now - changes.PRUNED_AFTER}) == 0
        session.execute(text("DELETE FROM catalogue_changes WHERE resource_id = :b"),
                        {"b": kept})
        session.commit()


# PostgreSQL: writers that overlap.

def _venue(connection, key: str) -> None:
    connection.execute(text(
        "INSERT INTO venues (id, name, name_key, city, city_key, country, area, address, "
        "website, image_url, lat, lng, tags, rating, reviews_count, info, accessibility, rules, "
        "rules_url, facts, source, source_url, updated_at) VALUES (:id, :id, :id, 'Gent', "
        "'gent', 'BE', '', '', '', '', 51, 3.7, '[]', 0, 0, '', '', '[]', '', '{}', 's', '', "
        "0)"), {"id": key})


def test_a_transaction_that_began_first_and_commits_last_is_listed_last_not_skipped(
        committing):
    _url, engine = committing
    reader = Reader(make_sessionmaker(engine))
    reader.catch_up()
    with engine.connect() as older, engine.connect() as younger:
        older.begin()
        _venue(older, "ven_older")  # the older transaction id
        younger.begin()
        _venue(younger, "ven_younger")
        younger.commit()
        assert reader.catch_up() == [("venue", "ven_younger", "upsert")]
        older.commit()
    assert reader.catch_up() == [("venue", "ven_older", "upsert")]
    assert reader.catch_up() == []


def test_the_last_change_listed_is_the_last_committed(committing):
    """An older transaction re-approves an event a younger one rejected (and committed):
    listed in the order they began, the feed would end on the tombstone."""
    url, engine = committing
    with committed(url) as session:
        factories.bind(session)
        factories.EventFactory(id="evt_x")
    reader = Reader(make_sessionmaker(engine), types="event")
    reader.catch_up()
    with engine.connect() as older, engine.connect() as younger:
        older.begin()
        _venue(older, "ven_other")  # takes its transaction id first
        younger.begin()
        younger.execute(text("UPDATE events SET status = 'rejected' WHERE id = 'evt_x'"))
        younger.commit()
        older.execute(text("UPDATE events SET status = 'approved' WHERE id = 'evt_x'"))
        older.commit()
    assert reader.catch_up() == [("event", "evt_x", "delete"), ("event", "evt_x", "upsert")]


def test_concurrent_writers_and_a_polling_reader_see_every_change_exactly_once(committing):
    _url, engine = committing
    sessions = make_sessionmaker(engine)
    reader = Reader(sessions, limit=7)
    reader.catch_up()
    committed, lock, stop = [], threading.Lock(), threading.Event()

    def write(worker: int) -> None:
        rng = random.Random(worker)
        for n in range(25):
            key = f"ven_{worker}_{n}"
            with engine.connect() as connection:
                connection.begin()
                _venue(connection, key)
                # Hold the transaction open a while: others begin and commit meanwhile.
                time.sleep(rng.uniform(0, 0.02))
                if n % 5 == 4:
                    connection.rollback()
                    continue
                connection.commit()
            with lock:
                committed.append(key)

    def poll() -> None:
        while not stop.is_set():
            reader.poll()
            time.sleep(0.003)

    polling = threading.Thread(target=poll)
    polling.start()
    writers = [threading.Thread(target=write, args=(worker,)) for worker in range(6)]
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join()
    stop.set()
    polling.join()
    reader.catch_up()
    seen = [change[1] for change in reader.seen]
    assert len(seen) == len(set(seen)) == len(committed) == 6 * 20
    assert set(seen) == set(committed)


def test_a_transaction_lists_a_resource_once_with_its_last_op(committing):
    url, engine = committing
    reader = Reader(make_sessionmaker(engine))
    reader.catch_up()
    with committed(url) as session:
        factories.bind(session)
        event = factories.EventFactory(genre_names=("Techno", "House"))
        session.flush()
        session.execute(text("UPDATE events SET title = 'Again' WHERE id = :id"), {"id": event.id})
        session.execute(text("DELETE FROM event_genres WHERE event_id = :id"), {"id": event.id})
        session.execute(text("UPDATE events SET status = 'rejected' WHERE id = :id"),
                        {"id": event.id})
    assert [change for change in reader.catch_up() if change[0] == "event"] == [
        ("event", event.id, "delete")]

"""What a process knows without reading the database (adapters/watch.py): tokens and the
catalogue stamp, kept by PostgreSQL notifications of committed changes. Committed
transactions on a database of its own."""

import threading
import time

import psycopg
import pytest
from sqlalchemy import text

from adapters import watch as watch_module
from adapters.direct import DirectStatements
from adapters.watch import APPLICATION_NAME, Watch, forget_on_commit
from models import organisations, tokens
from models.db import make_sessionmaker
from models.errors import Forbidden, Unauthorized
from models.stamp import CATALOGUE_TABLES

SQLITE = "SQLite has no notifications; every request reads it"


@pytest.fixture
def database(committing):
    url, engine = committing
    return url, engine, make_sessionmaker(engine)


@pytest.fixture
def watch(database):
    watch = Watch(database[0]).start()
    assert watch.wait_listening(10)
    yield watch
    watch.close()


@pytest.fixture
def token(database):
    with database[2].begin() as session:
        owner = organisations.create_organisation(session, name="Watched")
        return tokens.create_token(session, organisation=owner, name="w", scopes=["read"])[1]


class CountedReads:
    """DirectStatements that count the statements they run."""

    def __init__(self, engine):
        self.reads = DirectStatements(engine)
        self.count = 0

    def __call__(self, statement, params):
        self.count += 1
        return self.reads.execute(statement, params)


def _eventually(condition) -> bool:
    """Whether `condition()` holds within 10 s (a notification is on its way)."""
    deadline = time.monotonic() + 10
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _stamp(engine) -> str:
    with engine.connect() as connection:
        return connection.execute(text("SELECT stamp FROM catalogue_stamp")).scalar_one()


def test_a_token_read_once_is_admitted_without_reading_again(database, token, watch):
    reads = CountedReads(database[1])
    caller, stamp = tokens.authenticate_with_stamp(reads, token, watch)
    read_first = reads.count
    for _ in range(5):
        assert tokens.authenticate_with_stamp(reads, token, watch) == (caller, stamp)
    assert reads.count == read_first
    assert stamp == _stamp(database[1])
    assert tokens.known(watch, token) is not None


def test_a_revocation_committed_elsewhere_is_refused(database, token, watch):
    reads = CountedReads(database[1])
    tokens.authenticate_with_stamp(reads, token, watch)
    with database[2].begin() as session:
        tokens.revoke_token(session, token[:len(tokens.LIVE_PREFIX) + tokens.VISIBLE_CHARS])
    assert _eventually(lambda: tokens.known(watch, token) is None)
    with pytest.raises(Unauthorized):
        tokens.authenticate_with_stamp(reads, token, watch)


def test_a_suspension_and_a_scope_change_are_noticed(database, token, watch):
    reads = CountedReads(database[1])
    assert tokens.authenticate_with_stamp(reads, token, watch)[0].scopes == {"read"}
    with database[1].begin() as connection:
        connection.execute(text("UPDATE api_tokens SET scopes = 'read scan'"))
    assert _eventually(lambda: tokens.known(watch, token) is None)
    assert tokens.authenticate_with_stamp(reads, token, watch)[0].scopes == {"read", "scan"}
    with database[1].begin() as connection:
        connection.execute(text("UPDATE organisations SET suspended = true"))
    assert _eventually(lambda: tokens.known(watch, token) is None)
    with pytest.raises(Forbidden):
        tokens.authenticate_with_stamp(reads, token, watch)


def test_the_stamp_follows_every_committed_catalogue_change(database, token, watch):
    reads = CountedReads(database[1])
    _, first = tokens.authenticate_with_stamp(reads, token, watch)
    with database[1].begin() as connection:
        connection.execute(text("UPDATE organisations SET bio = 'changed'"))
    changed = _stamp(database[1])
    assert changed != first
    assert _eventually(lambda: tokens.authenticate_with_stamp(reads, token, watch)[1] == changed)
    with database[1].connect() as connection, connection.begin() as rolled_back:
        connection.execute(text("UPDATE organisations SET bio = 'never'"))
        rolled_back.rollback()
    # Marking the token used (`last_used_at`) is no change to what admits it.
    with database[1].begin() as connection:
        connection.execute(text("UPDATE api_tokens SET last_used_at = last_used_at + 1"))
        connection.execute(text("SELECT pg_notify('agenda_catalogue', :stamp)"),
                           {"stamp": "after"})
    assert _eventually(lambda: tokens.authenticate_with_stamp(reads, token, watch)[1] == "after")
    assert tokens.known(watch, token) is not None


def test_a_notification_that_has_arrived_is_applied_by_the_next_request(database, token,
                                                                        monkeypatch):
    """However long the watch's thread waits for the interpreter (a busy worker), the next
    request after a change committed elsewhere knows it: it applies what has arrived."""
    reads = CountedReads(database[1])
    real, gate = watch_module._readable, threading.Event()

    def held_in_the_thread(socket, timeout):
        if threading.current_thread().name == "watch":
            gate.wait()  # the thread does not get to it until the test ends
        return real(socket, timeout)

    monkeypatch.setattr(watch_module, "_readable", held_in_the_thread)
    watch = Watch(database[0]).start()
    try:
        assert watch.wait_listening(10)
        _, first = tokens.authenticate_with_stamp(reads, token, watch)
        with database[1].begin() as connection:
            connection.execute(text("UPDATE organisations SET bio = 'changed'"))
        changed = _stamp(database[1])
        assert changed != first
        # Delivered within moments by the database; then the next request applies it.
        assert _eventually(lambda: tokens.authenticate_with_stamp(reads, token, watch)[1]
                           == changed)
        with database[2].begin() as session:
            tokens.revoke_token(session, token[:len(tokens.LIVE_PREFIX) + tokens.VISIBLE_CHARS])
        assert _eventually(lambda: tokens.known(watch, token) is None)
        with pytest.raises(Unauthorized):
            tokens.authenticate_with_stamp(reads, token, watch)
    finally:
        gate.set()
        watch.close()


def test_a_probe_that_waits_does_not_hold_requests_up(database, token, monkeypatch):
    """A quiet connection is probed; a probe on a connection lost without a word waits (up
    to its keepalives). Requests meanwhile read the database instead of waiting for it."""
    probing, release = threading.Event(), threading.Event()
    connect, real = psycopg.connect, watch_module._readable

    class Hanging:
        """The listening connection, whose probe hangs until the test releases it."""

        def __init__(self, connection):
            self._connection = connection

        def __enter__(self):
            self._connection.__enter__()
            return self

        def __exit__(self, *exc):
            return self._connection.__exit__(*exc)

        def __getattr__(self, name):
            return getattr(self._connection, name)

        def execute(self, statement, *args):
            if statement == "SELECT 1":
                probing.set()
                release.wait()
            return self._connection.execute(statement, *args)

    def quiet(socket, timeout):  # the thread finds the connection quiet at once
        if threading.current_thread().name == "watch" and not release.is_set():
            return False
        return real(socket, timeout)

    monkeypatch.setattr(watch_module.psycopg, "connect",
                        lambda *args, **kwargs: Hanging(connect(*args, **kwargs)))
    monkeypatch.setattr(watch_module, "_readable", quiet)
    reads = CountedReads(database[1])
    watch = Watch(database[0]).start()
    try:
        assert watch.wait_listening(10)
        assert probing.wait(10)
        answered = []
        asking = threading.Thread(target=lambda: answered.append(
            tokens.authenticate_with_stamp(reads, token, watch)))
        asking.start()
        asking.join(5)
        assert answered, "a request waited for the probe"
        assert reads.count >= 1  # read from the database
        assert answered[0][1] == _stamp(database[1])
    finally:
        release.set()
        watch.close()


def test_a_read_that_raced_a_change_is_not_remembered(database, token, watch):
    reads = CountedReads(database[1])
    stamp = tokens.authenticate_with_stamp(reads, token, watch)[1]
    token_hash = tokens.hash_token(token)
    known = watch.token(token_hash, int(time.time()), tokens.LAST_USED_RESOLUTION)[0]
    watch.unsettle(catalogue=False, tokens=True)
    started = watch.generation
    watch.unsettle(catalogue=False, tokens=True)  # a change notified during the read
    watch.learn(token_hash, known, stamp, started)
    assert tokens.known(watch, token) is None


def test_a_token_is_read_again_to_be_marked_used(database, token, watch):
    reads = CountedReads(database[1])
    tokens.authenticate_with_stamp(reads, token, watch)
    token_hash = tokens.hash_token(token)
    later = int(time.time()) + tokens.LAST_USED_RESOLUTION
    assert watch.token(token_hash, later - 1, tokens.LAST_USED_RESOLUTION) is not None
    assert watch.token(token_hash, later, tokens.LAST_USED_RESOLUTION) is None


def test_a_lost_connection_means_reading_until_it_is_back(database, token, watch):
    reads = CountedReads(database[1])
    tokens.authenticate_with_stamp(reads, token, watch)
    with database[1].connect() as connection:
        connection.execute(text(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = :name AND datname = current_database()"),
            {"name": APPLICATION_NAME})
    assert _eventually(lambda: tokens.known(watch, token) is None)
    # Listening again, it learns anew.
    assert watch.wait_listening(10)
    assert _eventually(lambda: tokens.authenticate_with_stamp(reads, token, watch)
                       and tokens.known(watch, token) is not None)


def test_this_processs_own_commit_is_forgotten_at_once(database, token, watch):
    _, engine, sessions = database
    forget_on_commit(watch, engine, sessions, catalogue=frozenset(CATALOGUE_TABLES))
    reads = CountedReads(engine)
    tokens.authenticate_with_stamp(reads, token, watch)
    with sessions.begin() as session:
        session.execute(text("SELECT 1"))  # reads only: nothing forgotten
    assert tokens.known(watch, token) is not None
    with sessions.begin() as session:
        tokens.revoke_token(session, token[:len(tokens.LIVE_PREFIX) + tokens.VISIBLE_CHARS])
    # No waiting: the next request of this process reads the database.
    assert tokens.known(watch, token) is None
    with pytest.raises(Unauthorized):
        tokens.authenticate_with_stamp(reads, token, watch)


def test_a_closed_watch_knows_nothing(database, token, watch):
    reads = CountedReads(database[1])
    tokens.authenticate_with_stamp(reads, token, watch)
    watch.close()
    assert tokens.known(watch, token) is None
    tokens.authenticate_with_stamp(reads, token, watch)
    assert tokens.known(watch, token) is None


def test_a_failure_while_listening_forgets_everything_and_listens_again(database, token,
                                                                        watch, monkeypatch):
    reads = CountedReads(database[1])
    tokens.authenticate_with_stamp(reads, token, watch)
    notified, failed = watch._notified, []

    def failing_once(channel, payload):
        if not failed:
            failed.append(channel)
            raise RuntimeError("a bug in handling a notification")
        notified(channel, payload)

    monkeypatch.setattr(watch, "_notified", failing_once)
    with database[1].begin() as connection:
        connection.execute(text("UPDATE organisations SET bio = 'changed'"))
    assert _eventually(lambda: failed and tokens.known(watch, token) is None)
    assert watch.wait_listening(10)
    assert _eventually(lambda: tokens.authenticate_with_stamp(reads, token, watch)
                       and tokens.known(watch, token) is not None)
    assert tokens.authenticate_with_stamp(reads, token, watch)[1] == _stamp(database[1])

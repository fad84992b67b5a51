"""Test set-up: one migrated database per run (per xdist worker), one transaction per test.

SQLite by default; PostgreSQL when AGENDA_TEST_DATABASE_URL is set (tox -e postgres).
The application under test is the whole ASGI stack (every Connexion middleware),
with response validation on.
"""

from __future__ import annotations

import contextlib
import functools
import os

import pytest
import redis
from sqlalchemy import event

from adapters.direct import PLANNED_ONCE_RUNNER, rows
from agenda.app import create_app
from edge.limits import MemoryCounters
from models import migrate, tokens
from models.db import make_engine
from tests import factories
from tests.api import SITE
from tests.servers import drop_database, migrated_database, scratch_database


@pytest.fixture(scope="session")
def database_url(worker_id):
    """The migrated database of this run, dropped at its end."""
    url = migrated_database(worker_id)
    yield url
    drop_database(url)


# The whole application, as a server would run it, plus response validation; not listening
# for notifications (adapters/watch.py), as its tests' transactions never commit.
# Tests load their data through the application's engine (the `db` fixture): bulk loads of
# thousands of events are not requests, so the requests' deadline (5 s by default) is not
# theirs; tests/agenda/test_statement_timeout.py and tests/models/test_db.py test it with
# deadlines of their own.
APP_SETTINGS = {"validate_responses": True, "listen": False, "secret_key": "test-secret",
                "site_url": SITE, "statement_timeout_ms": 60_000}


@pytest.fixture(scope="session")
def app(database_url):
    """The application under test (`APP_SETTINGS`)."""
    app = create_app({"database_url": database_url, **APP_SETTINGS})
    yield app
    app.service.close()


@pytest.fixture
def db(app):
    """A session inside a transaction that is rolled back after the test.

    The application's own sessions join the same connection with savepoints, so what a
    test creates is visible to its requests and nothing survives the test.
    """
    service = app.service
    connection = service.engine.connect()
    transaction = connection.begin()
    with joined(service, connection):
        session = service.sessions()
        factories.bind(session)
        try:
            yield session
        finally:
            session.close()
            transaction.rollback()
            connection.close()


@contextlib.contextmanager
def joined(service, connection):
    """A service's sessions (with savepoints) and direct statements on the test's connection."""
    factories = (service.sessions, service.reads)
    binds = [sessions.kw["bind"] for sessions in factories]
    for sessions in factories:
        sessions.configure(bind=connection, join_transaction_mode="create_savepoint")
        event.listen(sessions, "after_begin", _as_committed)
    production = service.direct
    service.direct = functools.partial(_rows, connection)
    # The reads' statements planned once (PostgreSQL) on the test's connection too.
    runners = service.reads.kw.get("info") or {}
    if PLANNED_ONCE_RUNNER in runners:
        service.reads.configure(info={PLANNED_ONCE_RUNNER: service.direct})
    try:
        yield
    finally:
        for sessions, bind in zip(factories, binds):
            event.remove(sessions, "after_begin", _as_committed)
            sessions.configure(bind=bind, join_transaction_mode="conditional_savepoint")
        service.direct = production
        if runners:
            service.reads.configure(info=runners)


def _as_committed(_session, _transaction, connection) -> None:
    """Each request sees what the test wrote so far as committed (`factories.settled`)."""
    factories.settled(connection)


def _rows(connection, statement, params) -> list:
    """`DirectStatements.execute` on the test's connection (inside its transaction)."""
    _as_committed(None, None, connection)
    return rows(connection, statement, params)


@pytest.fixture
def client(app, db, monkeypatch):
    """An HTTP client on the ASGI app, with counters of its own: pages and requests without
    a token are limited per address, and every test client is the same address."""
    monkeypatch.setattr(app.service.usage, "store", MemoryCounters())
    with app.test_client() as test_client:
        yield test_client


@pytest.fixture
def make_token(db):
    """`make_token("read", "scan", organisation=..., per_day=...)` -> the bearer token."""

    def make(*scopes, organisation=None, per_day=None):
        owner = organisation or factories.OrganisationFactory(ticket_shop_url="https://shop.example")
        return tokens.create_token(db, organisation=owner, name="test",
                                   scopes=list(scopes or ("read",)), per_day=per_day)[1]

    return make


@pytest.fixture
def organisation(db):
    """An organisation of the test's own (the caller of the organiser endpoints)."""
    return factories.OrganisationFactory()


@pytest.fixture
def bearer_of(make_token, organisation):
    """`bearer_of("scan")` -> Authorization headers with a new token of `organisation`."""

    def headers(*scopes: str) -> dict:
        return {"Authorization": f"Bearer {make_token(*scopes, organisation=organisation)}"}

    return headers


@pytest.fixture
def auth(make_token):
    """Headers of a token that holds every scope."""
    return {"Authorization": f"Bearer {make_token('read', 'scan', 'attendance', 'tickets')}"}


@pytest.fixture
def committing(request, worker_id):
    """(url, engine) of a migrated PostgreSQL database of the test's own, for transactions
    that commit; the test is skipped on SQLite, for the reason its module's `SQLITE` gives."""
    url = scratch_database(f"{worker_id}_{request.module.__name__.rpartition('.')[2]}")
    engine = make_engine(url)
    if engine.dialect.name != "postgresql":
        engine.dispose()
        pytest.skip(request.module.SQLITE)
    migrate.upgrade(engine)
    yield url, engine
    engine.dispose()
    drop_database(url)


# The Redis of the tests whose processes share limits or kept answers.
REDIS_URL = os.environ.get("AGENDA_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture(scope="session")
def redis_url():
    """`REDIS_URL`, once it answers: the test is skipped without it, failed in CI."""
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping()
    except redis.RedisError:
        if os.environ.get("CI"):
            pytest.fail(f"Redis does not answer at {REDIS_URL}")
        pytest.skip(f"Redis does not answer at {REDIS_URL}")
    return REDIS_URL

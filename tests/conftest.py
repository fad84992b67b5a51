"""Test set-up: one migrated database per run (per xdist worker), one transaction per test.

SQLite by default; PostgreSQL when AGENDA_TEST_DATABASE_URL is set (tox -e postgres).
The application under test is the whole ASGI stack (every Connexion middleware),
with response validation on.
"""

from __future__ import annotations

import os
import tempfile

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from agenda.app import create_app
from models import migrate, tokens
from models.db import make_engine
from tests import factories


def _database_url(worker: str) -> str:
    """A fresh database for this run and worker."""
    server = os.environ.get("AGENDA_TEST_DATABASE_URL")
    if not server:
        return f"sqlite:///{tempfile.mkdtemp(prefix='agenda-test-')}/agenda.sqlite3"
    url = make_url(server)
    # Unique per process: several runs (and their xdist workers) may share one server.
    name = f"agenda_test_{worker}_{os.getpid()}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return url.set(database=name).render_as_string(hide_password=False)


def _drop_database(url: str) -> None:
    """Drop this run's PostgreSQL database (SQLite files go with their temporary folder)."""
    parsed = make_url(url)
    if not parsed.drivername.startswith("postgresql"):
        return
    admin = create_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{parsed.database}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(scope="session")
def database_url(worker_id):
    """The migrated database of this run, dropped at its end."""
    url = _database_url(worker_id)
    engine = make_engine(url)
    migrate.upgrade(engine)
    engine.dispose()
    yield url
    _drop_database(url)


@pytest.fixture(scope="session")
def app(database_url):
    """The whole application, as a server would run it, plus response validation."""
    return create_app({"database_url": database_url, "validate_responses": True,
                       "secret_key": "test-secret", "site_url": "http://127.0.0.1:8080"})


@pytest.fixture
def db(app):
    """A session inside a transaction that is rolled back after the test.

    The application's own sessions join the same connection with savepoints, so what a
    test creates is visible to its requests and nothing survives the test.
    """
    service = app.service
    connection = service.engine.connect()
    transaction = connection.begin()
    service.sessions.configure(bind=connection, join_transaction_mode="create_savepoint")
    session = service.sessions()
    factories.bind(session)
    try:
        yield session
    finally:
        session.close()
        transaction.rollback()
        connection.close()
        service.sessions.configure(bind=service.engine, join_transaction_mode="conditional_savepoint")


@pytest.fixture
def client(app, db):
    """An HTTP client on the ASGI app."""
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
def auth(make_token):
    """Headers of a token that holds every scope."""
    return {"Authorization": f"Bearer {make_token('read', 'scan', 'attendance', 'tickets')}"}

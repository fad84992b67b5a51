"""The engine (models/db.py): a connection idle for a while is checked before use; a
request's statements have a deadline, the command line's none."""

import sqlite3
import time

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError, OperationalError

from models.db import make_engine

SQLITE = "a server-side disconnect needs PostgreSQL"


def _drop_connections(url: str) -> None:
    """Have the database end every other connection to it, as a restart would."""
    admin = make_engine(url, pre_ping=False)
    with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                "WHERE datname = current_database() AND pid <> pg_backend_pid()"))
    admin.dispose()


def _backend(engine) -> int:
    with engine.connect() as connection:
        return connection.execute(text("SELECT pg_backend_pid()")).scalar_one()


def test_an_idle_connection_the_database_dropped_is_replaced_before_use(committing):
    url, _ = committing
    engine = make_engine(url, ping_after=0)
    dropped = _backend(engine)
    _drop_connections(url)
    assert _backend(engine) != dropped
    engine.dispose()


def test_a_connection_dropped_while_busy_fails_once_and_the_pool_starts_afresh(committing):
    url, _ = committing
    engine = make_engine(url, pool_size=2, ping_after=3600)
    with engine.connect() as first, engine.connect() as second:
        dropped = {first.execute(text("SELECT pg_backend_pid()")).scalar_one(),
                   second.execute(text("SELECT pg_backend_pid()")).scalar_one()}
    _drop_connections(url)
    with pytest.raises(DBAPIError) as raised:
        _backend(engine)
    assert raised.value.connection_invalidated
    # Both pooled connections were discarded with the one that failed.
    with engine.connect() as first, engine.connect() as second:
        fresh = {first.execute(text("SELECT pg_backend_pid()")).scalar_one(),
                 second.execute(text("SELECT pg_backend_pid()")).scalar_one()}
    assert not fresh & dropped
    engine.dispose()


# A statement that runs about a second: counting in SQLite, sleeping in PostgreSQL.
_LONG = {"sqlite": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                   "WHERE x < 5000000) SELECT count(*) FROM c",
         "postgresql": "SELECT 5000000 FROM pg_sleep(1)"}


def test_statement_timeout_ends_a_long_statement_and_the_command_line_has_none(database_url):
    # Issue 22: request work is bounded (agenda/app.py); imports and migrations are not.
    bounded = make_engine(database_url, statement_timeout_ms=200)
    long = text(_LONG[bounded.dialect.name])
    started = time.monotonic()
    with pytest.raises(OperationalError), bounded.connect() as connection:
        connection.execute(long)
    assert time.monotonic() - started < 0.2 + 0.5
    with bounded.connect() as connection:  # the connection goes on serving
        assert connection.execute(text("SELECT 1")).scalar_one() == 1
    bounded.dispose()
    unbounded = make_engine(database_url)
    with unbounded.connect() as connection:
        assert connection.execute(long).scalar_one() == 5_000_000
    unbounded.dispose()


def test_statement_timeout_bounds_the_wait_for_another_writer_on_sqlite(tmp_path):
    # SQLite's busy timeout is the deadline for requests (15 s for the command line).
    url = f"sqlite:///{tmp_path / 'locked.sqlite3'}"
    bounded = make_engine(url, statement_timeout_ms=200)
    with bounded.begin() as connection:
        connection.execute(text("CREATE TABLE marks (id INTEGER PRIMARY KEY)"))
    holder = sqlite3.connect(tmp_path / "locked.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer, holding the lock
    started = time.monotonic()
    with pytest.raises(OperationalError, match="locked"), bounded.begin() as connection:
        connection.execute(text("INSERT INTO marks (id) VALUES (1)"))
    assert 0.2 <= time.monotonic() - started < 0.2 + 0.5
    holder.rollback()
    holder.close()
    with bounded.begin() as connection:
        connection.execute(text("INSERT INTO marks (id) VALUES (1)"))
    bounded.dispose()

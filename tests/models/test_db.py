"""The engine's pool (models/db.py): a connection idle for a while is checked before use."""

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

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

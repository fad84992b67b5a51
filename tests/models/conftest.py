"""Fixtures of the model tests that need transactions which really commit."""

import pytest

from models import migrate
from models.db import make_engine
from tests.servers import drop_database, scratch_database


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

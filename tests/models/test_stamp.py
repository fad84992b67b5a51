"""The catalogue stamp on PostgreSQL: renewed as a change commits, never holding a lock
through a transaction (models/stamp.py). Committed transactions on a database of its own."""

import pytest
from sqlalchemy import text

SQLITE = "SQLite has one writer at a time and renews the stamp in row triggers"


@pytest.fixture
def engine(committing):
    return committing[1]


def _stamp(engine) -> str:
    with engine.connect() as connection:
        return connection.execute(text("SELECT stamp FROM catalogue_stamp")).scalar_one()


def _organisation(connection, key: str) -> None:
    connection.execute(text(
        "INSERT INTO organisations (id, name, bio, website, verified, since, suspended, "
        "created_at) VALUES (:id, :id, '', '', false, 2026, false, 0)"), {"id": key})


def test_the_stamp_changes_when_a_change_commits_not_before(engine):
    before = _stamp(engine)
    with engine.connect() as writer:
        with writer.begin():
            _organisation(writer, "org_one")
            _organisation(writer, "org_two")
            assert _stamp(engine) == before
        assert _stamp(engine) != before
        again = _stamp(engine)
        with writer.begin() as rolled_back:
            _organisation(writer, "org_three")
            rolled_back.rollback()
        assert _stamp(engine) == again
        with engine.connect() as pending:
            assert pending.execute(text("SELECT count(*) FROM catalogue_pending")).scalar() == 0


def test_a_long_change_does_not_hold_up_another(engine):
    with engine.connect() as long, engine.connect() as short:
        long.begin()
        _organisation(long, "org_long")
        short.begin()
        short.execute(text("SET LOCAL lock_timeout = '2s'"))
        _organisation(short, "org_short")
        short.commit()  # would wait for `long`, and time out, if the stamp row were locked
        after_short = _stamp(engine)
        long.commit()
    assert _stamp(engine) != after_short

"""The unit of work: commits once when its work succeeded, rolls back otherwise, and keeps
what a named step committed."""

import pytest
from sqlalchemy import select

from models import organisations
from models.db import make_engine, make_sessionmaker
from models.organisations import Organisation
from models.unit_of_work import transaction, unit_of_work
from tests.servers import drop_database, migrated_database


@pytest.fixture
def sessions(worker_id):
    url = migrated_database(f"{worker_id}_unit")
    engine = make_engine(url)
    yield make_sessionmaker(engine)
    engine.dispose()
    drop_database(url)


def _names(sessions) -> list[str]:
    with transaction(sessions) as session:
        return sorted(session.scalars(select(Organisation.name)))


def test_a_unit_commits_what_it_did_when_it_ends_well(sessions):
    with unit_of_work(sessions) as unit:
        organisations.create_organisation(unit.session, name="Kept")
    assert _names(sessions) == ["Kept"]


def test_a_unit_that_fails_leaves_nothing_behind(sessions):
    with pytest.raises(RuntimeError), unit_of_work(sessions) as unit:
        organisations.create_organisation(unit.session, name="Lost")
        raise RuntimeError("the work failed")
    assert _names(sessions) == []


def test_a_committed_step_stays_when_the_rest_of_the_unit_fails(sessions):
    with pytest.raises(RuntimeError), unit_of_work(sessions) as unit:
        organisations.create_organisation(unit.session, name="Delivered")
        unit.commit_step()
        organisations.create_organisation(unit.session, name="After")
        raise RuntimeError("the mails failed")
    assert _names(sessions) == ["Delivered"]

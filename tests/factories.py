"""factory_boy factories for test data, bound to the test's session by `conftest.db`."""

from __future__ import annotations

import factory
from factory.alchemy import SQLAlchemyModelFactory

from models.db import new_id, now
from models.organisations import Organisation


class _Base(SQLAlchemyModelFactory):
    class Meta:
        abstract = True
        sqlalchemy_session = None
        sqlalchemy_session_persistence = "flush"


class OrganisationFactory(_Base):
    """An organisation (not suspended, no ticket shop unless given)."""

    class Meta:
        model = Organisation

    id = factory.LazyFunction(lambda: new_id("org"))
    name = factory.Sequence(lambda n: f"Organisation {n}")
    bio = "Nights in the low countries."
    website = "https://organisation.example"
    verified = False
    since = 2015
    ticket_shop_url = None
    suspended = False
    created_at = factory.LazyFunction(now)


def bind(session) -> None:
    """Make every factory create its objects in `session`."""
    for factory_class in (OrganisationFactory,):
        factory_class._meta.sqlalchemy_session = session

"""Members signed in through /signin with a role in an organisation; fresh per-address
counters for each test (sign-ins are limited per address, and every test client is one)."""

from __future__ import annotations

import uuid

import pytest

from edge.limits import MemoryCounters
from models import members
from models.db import now
from tests.factories import MembershipFactory, OrganisationFactory
from tests.oauth import flow


@pytest.fixture(autouse=True)
def fresh_counters(app, monkeypatch):
    monkeypatch.setattr(app.service.usage, "store", MemoryCounters())


@pytest.fixture
def organisation(db):
    """An organisation with a link to its own ticket shop."""
    return OrganisationFactory(name="Dekmantel", ticket_shop_url="https://shop.example")


@pytest.fixture
def person(db):
    """`person()` -> a new member who can sign in with `flow.PASSWORD`."""

    def make(**fields):
        tag = uuid.uuid4().hex[:10]
        return members.create_person(db, email=f"m{tag}@mail.example", handle=f"m-{tag}",
                                     name=fields.get("name", f"Member {tag}"),
                                     password=flow.PASSWORD, now=now())

    return make


@pytest.fixture
def signed_in(client, person, organisation):
    """`signed_in("editor")` -> the member, signed in on `client`, with that role in
    `organisation` (or in the organisation given)."""

    def sign(role: str | None = "owner", *, of=None):
        member = person()
        if role is not None:
            MembershipFactory(person_id=member.id, organisation_id=(of or organisation).id,
                              role=role)
        response = flow.sign_in(client, member.email, next_path="/portal")
        assert response.status_code == 302, response.text
        return member

    return sign

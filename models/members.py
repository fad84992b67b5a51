"""Members signing in: accounts with an argon2 password hash, and their roles.

Signing in attaches the delivered tickets that wait for the member's address
(`models.deliveries.link_waiting_tickets`). An unknown address costs the same
password check as a known one, so the answer's timing does not tell them apart.
"""

from __future__ import annotations

import re

import argon2
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from models import deliveries
from models.db import new_id
from models.errors import BadRequest, Conflict, NotFound, Unauthorized
from models.organisations import Organisation, find_organisation
from models.oauth import digest, new_secret
from models.people import ROLES, Membership, Person, SignInSession

_HASHER = argon2.PasswordHasher()
# Checked against when the address is unknown, so both cases take as long.
_UNKNOWN = _HASHER.hash("no account has this password")
_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]+\.[^@\s]+$")
_HANDLE = re.compile(r"^[a-z0-9][a-z0-9._-]{1,38}[a-z0-9]$")
MIN_PASSWORD = 10
# How long a sign-in lasts (from the moment of signing in; signing out ends it sooner).
SESSION_LIFETIME = 14 * 86400


def create_person(session: Session, *, email: str, handle: str, name: str, password: str,
                  now: int, visibility: str = "public") -> Person:
    """A new member who signs in with `email` and `password`."""
    problems = []
    email = email.strip()
    if len(email) > 254 or not _EMAIL.match(email):
        problems.append({"name": "email", "in": "body", "message": "is not an email address"})
    if not _HANDLE.match(handle):
        problems.append({"name": "handle", "in": "body", "message":
                         "must be 3 to 40 of a-z, 0-9, '.', '_', '-' (not first or last)"})
    if not name.strip() or len(name) > 120:
        problems.append({"name": "name", "in": "body", "message": "must be 1 to 120 characters"})
    if len(password) < MIN_PASSWORD:
        problems.append({"name": "password", "in": "body",
                         "message": f"must be at least {MIN_PASSWORD} characters"})
    if problems:
        raise BadRequest(problems, "The account has invalid fields.")
    taken = session.scalar(select(Person.id).where(
        (Person.email_key == email.lower()) | (func.lower(Person.handle) == handle.lower())))
    if taken is not None:
        raise Conflict("An account with this email address or handle exists already.")
    person = Person(id=new_id("per"), email=email, email_key=email.lower(), handle=handle,
                    name=name.strip(), visibility=visibility, created_at=now,
                    password_hash=_HASHER.hash(password))
    session.add(person)
    session.flush()
    return person


def set_password(session: Session, *, person: Person, password: str) -> None:
    """A new password for the member (only its hash is stored)."""
    if len(password) < MIN_PASSWORD:
        raise BadRequest([{"name": "password", "in": "body",
                           "message": f"must be at least {MIN_PASSWORD} characters"}])
    person.password_hash = _HASHER.hash(password)
    session.flush()


def set_role(session: Session, *, person: Person, organisation_key: str, role: str) -> None:
    """Give the person `role` in the organisation (id or name)."""
    if role not in ROLES:
        raise BadRequest([{"name": "role", "in": "body",
                           "message": f"must be one of {', '.join(ROLES)}"}])
    organisation = find_organisation(session, organisation_key)
    if organisation is None:
        raise NotFound("organisation", organisation_key)
    membership = session.get(Membership, (person.id, organisation.id))
    if membership is None:
        session.add(Membership(person_id=person.id, organisation_id=organisation.id, role=role))
    else:
        membership.role = role
    session.flush()


def sign_in(session: Session, *, email: str, password: str, secret_key: str,
            now: int) -> Person:
    """The member with this address and password, with their waiting tickets attached;
    `Unauthorized` for a wrong address or password and for a suspended account alike."""
    person = session.scalar(select(Person).where(Person.email_key == email.strip().lower()))
    try:
        _HASHER.verify(person.password_hash if person and person.password_hash else _UNKNOWN,
                       password)
    except (argon2.exceptions.VerificationError, argon2.exceptions.InvalidHashError):
        raise Unauthorized("The email address or password is wrong.") from None
    if person is None or person.password_hash is None or person.visibility == "suspended":
        raise Unauthorized("The email address or password is wrong.")
    if _HASHER.check_needs_rehash(person.password_hash):
        person.password_hash = _HASHER.hash(password)
    person.last_login_at = now
    deliveries.link_waiting_tickets(session, person=person, secret_key=secret_key, now=now)
    session.flush()
    return person


def roles_of(session: Session, person_id: str) -> list[tuple[str, str, str]]:
    """(organisation id, name, role) of each organisation the person has a role in."""
    return [tuple(row) for row in session.execute(
        select(Organisation.id, Organisation.name, Membership.role)
        .join(Membership, Membership.organisation_id == Organisation.id)
        .where(Membership.person_id == person_id, Organisation.suspended.is_(False))
        .order_by(Organisation.name))]


def start_session(session: Session, *, person: Person, now: int) -> str:
    """A new signed-in session of `person`: the secret its cookie holds (stored hashed).
    The person's sessions that ended by time are cleared away."""
    session.execute(delete(SignInSession).where(SignInSession.person_id == person.id,
                                                SignInSession.expires_at <= now))
    secret = new_secret()
    session.add(SignInSession(secret_hash=digest(secret), person_id=person.id, created_at=now,
                              expires_at=now + SESSION_LIFETIME))
    session.flush()
    return secret


def session_person(session: Session, secret: str, *, now: int) -> Person | None:
    """The person a live session's secret signs in; None when it ended, expired or the
    person is suspended."""
    return session.scalar(select(Person).join(
        SignInSession, SignInSession.person_id == Person.id).where(
        SignInSession.secret_hash == digest(secret), SignInSession.expires_at > now,
        Person.visibility != "suspended"))


def end_session(session: Session, secret: str) -> None:
    """Sign out: the session's secret no longer signs anyone in, wherever it was copied."""
    session.execute(delete(SignInSession).where(SignInSession.secret_hash == digest(secret)))
    session.flush()

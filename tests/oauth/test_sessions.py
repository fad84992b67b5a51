"""Signed-in sessions live on the server: signing out ends them (issue 22, "Sign-out must
end the session")."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from models import members, oauth
from models.db import now
from models.people import SignInSession
from tests.oauth import flow


@pytest.fixture
def person(db):
    return members.create_person(db, email="session@mail.example", handle="session",
                                 name="Session", password=flow.PASSWORD, now=now())


def _sessions(db, person) -> int:
    return db.scalar(select(func.count()).select_from(SignInSession).where(
        SignInSession.person_id == person.id))


def _signed_in(app, cookie: str) -> bool:
    """Whether a browser holding only `cookie` is signed in."""
    with app.test_client() as browser:
        browser.cookies.set("agenda_session", cookie)
        page = browser.get("/settings/apps", follow_redirects=False)
    return page.status_code == 200


def test_sign_out_ends_the_session_so_a_copied_cookie_no_longer_works(app, client, db,
                                                                      person):
    assert flow.sign_in(client, person.email).status_code == 302
    copied = client.cookies["agenda_session"]
    assert _signed_in(app, copied)
    assert _sessions(db, person) == 1
    page = client.get("/settings/apps")
    signed_out = client.post("/signout", data={"csrf": flow.csrf_of(page.text)},
                             follow_redirects=False)
    assert signed_out.headers["Location"] == "/signin"
    assert not _signed_in(app, copied)
    assert _sessions(db, person) == 0


def test_signing_out_one_browser_leaves_the_others_signed_in(app, client, db, person):
    flow.sign_in(client, person.email)
    with app.test_client() as other:
        flow.sign_in(other, person.email)
        page = other.get("/settings/apps")
        other.post("/signout", data={"csrf": flow.csrf_of(page.text)})
    assert client.get("/settings/apps", follow_redirects=False).status_code == 200


def test_a_session_ends_after_its_lifetime(app, client, db, person):
    flow.sign_in(client, person.email)
    cookie = client.cookies["agenda_session"]
    for row in db.scalars(select(SignInSession).where(SignInSession.person_id == person.id)):
        row.expires_at = now()
    db.flush()
    assert not _signed_in(app, cookie)


def test_a_suspended_person_is_signed_out_at_once(app, client, db, person):
    flow.sign_in(client, person.email)
    person.visibility = "suspended"
    db.flush()
    assert client.get("/settings/apps", follow_redirects=False).status_code == 302


def test_the_cookie_holds_a_secret_the_database_keeps_only_hashed(app, client, db, person):
    flow.sign_in(client, person.email)
    flask_app = app.app
    content = flask_app.session_interface.get_signing_serializer(flask_app).loads(
        client.cookies["agenda_session"])
    assert set(content) == {"sid", "csrf"}
    stored = db.scalars(select(SignInSession).where(
        SignInSession.person_id == person.id)).one()
    assert stored.secret_hash == oauth.digest(content["sid"]) != content["sid"]
    assert stored.expires_at - stored.created_at == members.SESSION_LIFETIME

"""Issue 22, "Sign-in, sessions, OAuth (RFC 9700)": each finding of the hostile tester,
kept fixed."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import func, select

from models import members, oauth
from models.db import now
from models.oauth import OAuthGrant
from tests.factories import OrganisationFactory
from tests.oauth import flow
from tests.oauth.flow import REDIRECT, SITE


@pytest.fixture
def person(db):
    return members.create_person(db, email="hard@mail.example", handle="hard",
                                 name="Hard", password=flow.PASSWORD, now=now())


def _is_page(response, status: int) -> None:
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"].startswith("text/html")
    assert "Location" not in response.headers


# --- input 7: /signin?next= with CR/LF --------------------------------------------------

@pytest.mark.parametrize("target", [
    "/settings/apps\r\nSet-Cookie: evil=1", "/portal\n", "/portal\tx", "/x\x7f",
    "/caf\u00e9\u202e", "https://evil.example/", "//evil.example/", "/\\evil.example",
])
def test_a_sign_in_with_a_bad_next_succeeds_and_lands_on_a_local_page(client, person,
                                                                       target):
    page = client.get("/signin", params={"next": target})
    assert page.status_code == 200
    assert 'name="next" value="/settings/apps"' in page.text
    response = client.post("/signin", data={"email": person.email, "password": flow.PASSWORD,
                                            "next": target, "csrf": flow.csrf_of(page.text)},
                           follow_redirects=False)
    assert response.status_code == 302, response.text
    assert response.headers["Location"] == "/settings/apps"
    assert "evil" not in str(response.headers)
    assert "Connected apps" in client.get("/settings/apps").text


# --- iss -------------------------------------------------------------------------------

@pytest.mark.parametrize("decision", ["allow", "deny"])
@pytest.mark.parametrize("query", ["kiss=1", "iss=https%3A%2F%2Fevil.example", "a=b&miss="])
def test_iss_is_always_added_to_the_authorization_response(client, person, decision, query):
    redirect = f"{REDIRECT}?{query}"
    app = flow.register(client, redirect_uris=[redirect])
    flow.sign_in(client, person.email)
    params = flow.authorize_params(app, flow.pkce()[1], redirect_uri=redirect)
    page = flow.consent_page(client, params)
    ticket = re.search(r'name="request" value="([^"]+)"', page.text).group(1)
    response = client.post("/oauth/consent", data={
        "csrf": flow.csrf_of(page.text), "request": ticket, "decision": decision,
        "organisation": ""}, follow_redirects=False)
    location = response.headers["Location"]
    back = parse_qs(urlsplit(location).query, keep_blank_values=True)
    assert back["iss"] == [SITE]
    assert back["state"] == ["st-123"]
    assert ("code" if decision == "allow" else "error") in back
    # The client's own parameters stay, but for an `iss` of its own.
    for key, value in parse_qs(query, keep_blank_values=True).items():
        if key != "iss":
            assert back[key] == value


# --- registration refuses control and bidi characters; the consent page shows ASCII -----

@pytest.mark.parametrize("uri", [
    "https://app.example/cb\r\n", "https://app.ex\nample/cb", "https://app.example/c\tb",
    "https://app.example/\u202ebc", "https://app\u200e.example/cb", "https://app.example/ cb",
    "https://app.example/cb\x0b", "https://app.example/\u2028",
])
def test_registration_refuses_control_and_bidi_characters_in_redirect_uris(client, db, uri):
    before = db.scalar(select(func.count()).select_from(oauth.OAuthClient))
    response = client.post("/oauth/register", json={"client_name": "x", "redirect_uris": [uri]})
    assert response.status_code == 400
    assert response.headers["Content-Type"] == "application/json"
    body = response.json()
    assert set(body) == {"error", "error_description"}
    assert body["error"] == "invalid_redirect_uri"
    assert db.scalar(select(func.count()).select_from(oauth.OAuthClient)) == before


def test_registration_refuses_control_and_bidi_characters_in_the_client_name(client):
    response = client.post("/oauth/register", json={"client_name": "Safe\u202eppA",
                                                    "redirect_uris": [REDIRECT]})
    assert (response.status_code, response.json()["error"]) == (400, "invalid_client_metadata")


def test_the_consent_page_shows_the_redirect_host_in_punycode(client, person):
    redirect = "https://\u0430pple.example/callback"  # a Cyrillic "а"
    app = flow.register(client, redirect_uris=[redirect])
    flow.sign_in(client, person.email)
    page = flow.consent_page(client, flow.authorize_params(app, flow.pkce()[1],
                                                           redirect_uri=redirect))
    assert "You will be sent back to xn--pple-43d.example." in page.text
    assert "\u0430pple" not in page.text


# --- consent for an organisation without a role: an HTML page -----------------------------

def test_consent_for_an_organisation_without_a_role_gets_an_html_page(client, db, person):
    stranger = OrganisationFactory(name="Not Mine")
    app = flow.register(client)
    flow.sign_in(client, person.email)
    page = flow.consent_page(client, flow.authorize_params(app, flow.pkce()[1]))
    ticket = re.search(r'name="request" value="([^"]+)"', page.text).group(1)
    response = client.post("/oauth/consent", data={
        "csrf": flow.csrf_of(page.text), "request": ticket, "decision": "allow",
        "organisation": stranger.id}, follow_redirects=False)
    _is_page(response, 400)
    assert "invalid_request" in response.text and "no role" in response.text
    assert db.scalars(select(OAuthGrant).where(
        OAuthGrant.client_id == app["client_id"])).first() is None


def test_a_consent_form_without_its_csrf_token_gets_an_html_page(client, person):
    app = flow.register(client)
    flow.sign_in(client, person.email)
    page = flow.consent_page(client, flow.authorize_params(app, flow.pkce()[1]))
    ticket = re.search(r'name="request" value="([^"]+)"', page.text).group(1)
    response = client.post("/oauth/consent", data={"request": ticket, "decision": "allow",
                                                   "csrf": "forged"}, follow_redirects=False)
    _is_page(response, 403)


# --- open redirector ---------------------------------------------------------------------

def _evil_error(client, app, redirect_uri=REDIRECT):
    """An authorization request that fails after the client and redirect are known good
    (no PKCE): the error would go back to the client."""
    params = {key: value for key, value in flow.authorize_params(
        app, "x", redirect_uri=redirect_uri).items()
              if key not in ("code_challenge", "code_challenge_method")}
    return client.get("/oauth/authorize", params=params, follow_redirects=False)


def test_an_error_for_a_client_never_approved_is_a_page_not_a_redirect(client, person):
    evil = "https://evil.example/landing"
    app = flow.register(client, redirect_uris=[evil])
    _is_page(_evil_error(client, app, evil), 400)
    flow.sign_in(client, person.email)
    response = _evil_error(client, app, evil)
    _is_page(response, 400)
    assert "invalid_request" in response.text
    # The way back is a link the person may follow, showing where it goes.
    link = unescape(re.search(r'<a href="([^"]+)" rel="noreferrer">', response.text).group(1))
    assert link.startswith(f"{evil}?") and "Back to the app at evil.example" in response.text
    back = parse_qs(urlsplit(link).query)
    assert back["error"] == ["invalid_request"] and back["iss"] == [SITE]


def test_an_error_for_a_client_the_person_approved_before_goes_back_to_it(client, person):
    app, _token = flow.tokens_for(client, person.email)
    response = _evil_error(client, app)
    assert response.status_code == 302
    back = flow.callback(response.headers["Location"])
    assert back["error"] == "invalid_request" and back["iss"] == SITE


def test_a_newly_registered_client_never_gets_a_redirect_without_a_page_of_this_site(
        client, person):
    app = flow.register(client, redirect_uris=["https://evil.example/landing"])
    flow.sign_in(client, person.email)
    params = flow.authorize_params(app, flow.pkce()[1],
                                   redirect_uri="https://evil.example/landing")
    response = client.get("/oauth/authorize", params=params, follow_redirects=False)
    # Only to this site's consent page.
    assert response.status_code == 302
    assert response.headers["Location"].startswith("/oauth/consent?")


def test_a_portal_form_without_its_csrf_token_gets_an_html_page(client, db, person):
    organisation = OrganisationFactory(name="Formed")
    members.set_role(db, person=person, organisation_key=organisation.id, role="owner")
    flow.sign_in(client, person.email)
    response = client.post(f"/portal/{organisation.id}/api/tokens", data={
        "csrf": "forged", "name": "Website", "scopes": "read"}, follow_redirects=False)
    _is_page(response, 403)
    assert "forbidden" in response.text

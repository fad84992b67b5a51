"""The OAuth 2.1 authorization server over HTTP: metadata, registration, the code flow with
PKCE, refresh rotation, revocation, and the attacks of RFC 9700 that apply."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from models import members, oauth
from models.db import now
from models.oauth import OAuthCode, OAuthGrant
from tests.factories import OrganisationFactory
from tests.oauth import flow
from tests.oauth.flow import REDIRECT, SITE


@pytest.fixture
def person(db):
    return members.create_person(db, email="sanne@mail.example", handle="sanne",
                                 name="Sanne", password=flow.PASSWORD, now=now())


def _access(db, token: str) -> oauth.Access | None:
    db.expire_all()
    return oauth.authenticate_access(db, token, now=now())


# --- metadata -----------------------------------------------------------------------------

def test_the_authorization_server_metadata_has_every_key_of_the_specification(client):
    body = client.get("/.well-known/oauth-authorization-server").json()
    assert body == {
        "issuer": SITE,
        "authorization_endpoint": f"{SITE}/oauth/authorize",
        "token_endpoint": f"{SITE}/oauth/token",
        "registration_endpoint": f"{SITE}/oauth/register",
        "revocation_endpoint": f"{SITE}/oauth/revoke",
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post",
                                                  "client_secret_basic"],
        "revocation_endpoint_auth_methods_supported": ["none", "client_secret_post",
                                                       "client_secret_basic"],
        "code_challenge_methods_supported": ["S256"],
        "scopes_supported": ["read", "attendance", "scan", "admin"],
        "authorization_response_iss_parameter_supported": True,
        "service_documentation": f"{SITE}/docs",
        "ui_locales_supported": ["nl", "en"],
        "client_id_metadata_document_supported": True,
    }


@pytest.mark.parametrize("path", ["/.well-known/oauth-protected-resource",
                                  "/.well-known/oauth-protected-resource/mcp"])
def test_the_protected_resource_metadata_names_the_mcp_endpoint(client, path):
    body = client.get(path).json()
    assert body["resource"] == f"{SITE}/mcp"
    assert body["authorization_servers"] == [SITE]
    assert body["scopes_supported"] == ["read", "attendance", "scan", "admin"]
    assert body["bearer_methods_supported"] == ["header"]


# --- registration -------------------------------------------------------------------------

def test_a_public_client_registers_without_a_secret_and_with_defaults(client):
    app = flow.register(client)
    assert app["client_id"].startswith("cli_")
    assert app["token_endpoint_auth_method"] == "none" and "client_secret" not in app
    assert app["grant_types"] == ["authorization_code", "refresh_token"]
    assert app["response_types"] == ["code"]
    assert app["redirect_uris"] == [REDIRECT] and app["client_name"] == "Test App"
    assert isinstance(app["client_id_issued_at"], int)


def test_a_confidential_client_gets_a_secret_that_is_stored_hashed(client, db):
    app = flow.register(client, token_endpoint_auth_method="client_secret_post")
    assert app["client_secret"] and app["client_secret_expires_at"] == 0
    stored = db.get(oauth.OAuthClient, app["client_id"])
    assert stored.secret_hash == oauth.digest(app["client_secret"])
    assert app["client_secret"] not in str(vars(stored))


@pytest.mark.parametrize("uris", [
    ["http://example.com/cb"], ["ftp://127.0.0.1/cb"], ["https://app.example/cb#frag"],
    ["not a uri"], [], "https://app.example/cb", ["http://127.0.0.2.example/cb"],
])
def test_a_redirect_uri_must_be_https_or_loopback_http(client, uris):
    response = client.post("/oauth/register", json={"client_name": "x", "redirect_uris": uris})
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_redirect_uri"


@pytest.mark.parametrize("uri", ["https://app.example/cb", "http://localhost:3000/cb",
                                 "http://127.0.0.1/cb", "http://[::1]:8765/cb"])
def test_https_and_loopback_redirects_are_accepted(client, uri):
    assert client.post("/oauth/register", json={"redirect_uris": [uri]}).status_code == 201


@pytest.mark.parametrize("body", [b"not json", b"[]", b'{"redirect_uris": ["https://a.example/"],'
                                  b' "token_endpoint_auth_method": "private_key_jwt"}',
                                  b'{"redirect_uris": ["https://a.example/"], "grant_types":'
                                  b' ["implicit"]}'])
def test_bad_registrations_get_rfc_7591_errors(client, body):
    response = client.post("/oauth/register", content=body,
                           headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert set(response.json()) == {"error", "error_description"}


# --- the code flow ------------------------------------------------------------------------

def test_the_whole_flow_gives_prefixed_tokens_that_are_stored_hashed(client, db, person):
    app = flow.register(client)
    verifier, challenge = flow.pkce()
    flow.sign_in(client, person.email)
    page = flow.consent_page(client, flow.authorize_params(app, challenge))
    assert "Test App" in page.text and "127.0.0.1" in page.text
    # The browser may follow the consent form's redirect to the client, and nowhere else.
    assert "form-action 'self' http://127.0.0.1:9999;" in page.headers["Content-Security-Policy"]
    back = flow.decide(client, page)
    assert back["state"] == "st-123" and back["iss"] == SITE
    response = flow.exchange(client, app, back["code"], verifier)
    assert response.status_code == 200, response.text
    assert response.headers["Cache-Control"] == "no-store"
    token = response.json()
    assert token["token_type"] == "Bearer" and token["expires_in"] == 3600
    assert token["access_token"].startswith("svc_oat_")
    assert token["refresh_token"].startswith("svc_ort_")
    assert token["scope"] == "read"
    assert db.get(oauth.OAuthToken, oauth.digest(token["access_token"])) is not None
    assert db.get(oauth.OAuthToken, token["access_token"]) is None
    access = _access(db, token["access_token"])
    assert (access.person_id, access.scopes, access.resource) == (
        person.id, frozenset({"read"}), f"{SITE}/mcp")


def test_an_oauth_access_token_is_refused_by_the_rest_api(client, person):
    _app, token = flow.tokens_for(client, person.email)
    response = client.get("/v1/me", headers={"Authorization": f"Bearer {token['access_token']}"})
    assert response.status_code == 401


def test_a_confidential_client_authenticates_at_the_token_endpoint(client, person):
    app = flow.register(client, token_endpoint_auth_method="client_secret_basic")
    verifier, challenge = flow.pkce()
    flow.sign_in(client, person.email)
    back = flow.decide(client, flow.consent_page(client, flow.authorize_params(app, challenge)))
    unauthenticated = flow.exchange(client, app, back["code"], verifier)
    assert unauthenticated.status_code == 401
    assert unauthenticated.json()["error"] == "invalid_client"
    response = client.post("/oauth/token", auth=(app["client_id"], app["client_secret"]), data={
        "grant_type": "authorization_code", "code": back["code"], "redirect_uri": REDIRECT,
        "code_verifier": verifier})
    assert response.status_code == 200, response.text


def test_a_loopback_redirect_may_use_another_port(client, person):
    app = flow.register(client)
    verifier, challenge = flow.pkce()
    flow.sign_in(client, person.email)
    params = flow.authorize_params(app, challenge, redirect_uri="http://127.0.0.1:45678/callback")
    response = client.get("/oauth/authorize", params=params, follow_redirects=False)
    assert response.headers["Location"].startswith("/oauth/consent?")


def test_organisation_roles_decide_the_scopes_and_a_role_change_applies_at_once(
        client, db, person):
    organisation = OrganisationFactory(name="Nachtwerk")
    members.set_role(db, person=person, organisation_key=organisation.id, role="door")
    _app, token = flow.tokens_for(client, person.email, organisation=organisation.id)
    assert set(token["scope"].split()) == {"read", "scan"}
    assert _access(db, token["access_token"]).scopes == {"read", "scan"}
    members.set_role(db, person=person, organisation_key=organisation.id, role="viewer")
    assert _access(db, token["access_token"]).scopes == {"read"}
    members.set_role(db, person=person, organisation_key=organisation.id, role="owner")
    # Never more than what was consented to, whatever the role becomes.
    assert _access(db, token["access_token"]).scopes == {"read", "scan"}


def test_the_consent_page_offers_each_organisation_with_what_its_role_allows(client, db,
                                                                              person):
    editors, door = OrganisationFactory(name="Editors"), OrganisationFactory(name="Doors")
    members.set_role(db, person=person, organisation_key=editors.id, role="editor")
    members.set_role(db, person=person, organisation_key=door.id, role="door")
    app = flow.register(client)
    flow.sign_in(client, person.email)
    page = flow.consent_page(client, flow.authorize_params(app, flow.pkce()[1]))
    assert page.text.count('name="organisation"') == 3
    assert 'data-scope="attendance"' in page.text and 'data-scope="scan"' in page.text
    assert 'data-scope="tickets"' not in page.text


def test_a_token_of_a_suspended_organisation_stops_working(client, db, person):
    organisation = OrganisationFactory(name="Closing Down")
    members.set_role(db, person=person, organisation_key=organisation.id, role="editor")
    _app, token = flow.tokens_for(client, person.email, organisation=organisation.id)
    assert _access(db, token["access_token"]) is not None
    organisation.suspended = True
    db.flush()
    assert _access(db, token["access_token"]) is None


def test_denying_consent_sends_access_denied_with_state_and_iss(client, person):
    app = flow.register(client)
    flow.sign_in(client, person.email)
    back = flow.decide(client, flow.consent_page(client, flow.authorize_params(
        app, flow.pkce()[1])), decision="deny")
    assert back == {"error": "access_denied", "error_description": back["error_description"],
                    "state": "st-123", "iss": SITE}


def test_the_pages_speak_dutch_or_english(client, person):
    assert "Inloggen" in client.get("/signin", headers={"Accept-Language": "nl-NL,nl"}).text
    assert "Sign in" in client.get("/signin", headers={"Accept-Language": "en"}).text
    app = flow.register(client)
    flow.sign_in(client, person.email)
    params = flow.authorize_params(app, flow.pkce()[1], ui_locales="nl")
    assert "Toegang geven?" in flow.consent_page(client, params).text


# --- refresh and revocation ---------------------------------------------------------------

def test_a_refresh_token_is_replaced_on_every_use(client, db, person):
    app, token = flow.tokens_for(client, person.email)
    response = flow.refresh(client, app, token["refresh_token"])
    assert response.status_code == 200, response.text
    renewed = response.json()
    assert renewed["refresh_token"] != token["refresh_token"]
    assert renewed["access_token"].startswith("svc_oat_")
    assert flow.refresh(client, app, renewed["refresh_token"]).status_code == 200


def test_a_reused_refresh_token_revokes_the_whole_family(client, db, person):
    app, token = flow.tokens_for(client, person.email)
    renewed = flow.refresh(client, app, token["refresh_token"]).json()
    replay = flow.refresh(client, app, token["refresh_token"])
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    assert _access(db, renewed["access_token"]) is None
    assert flow.refresh(client, app, renewed["refresh_token"]).status_code == 400


def test_a_refresh_may_only_narrow_the_scope_and_only_for_the_mcp_resource(client, db,
                                                                           person):
    organisation = OrganisationFactory(name="Owners")
    members.set_role(db, person=person, organisation_key=organisation.id, role="owner")
    app, token = flow.tokens_for(client, person.email, organisation=organisation.id)
    wider = flow.refresh(client, app, token["refresh_token"], scope="read admin")
    assert wider.json()["error"] == "invalid_scope"
    elsewhere = flow.refresh(client, app, token["refresh_token"],
                             resource="https://elsewhere.example/api")
    assert elsewhere.json()["error"] == "invalid_target"
    narrower = flow.refresh(client, app, token["refresh_token"], scope="read")
    assert narrower.status_code == 200 and narrower.json()["scope"] == "read"


def test_revoking_an_access_token_makes_it_useless(client, db, person):
    app, token = flow.tokens_for(client, person.email)
    response = client.post("/oauth/revoke", data={"token": token["access_token"],
                                                  "client_id": app["client_id"]})
    assert response.status_code == 200
    assert _access(db, token["access_token"]) is None
    # Revoking something unknown is not an error (RFC 7009).
    assert client.post("/oauth/revoke", data={"token": "svc_oat_unknown",
                                              "client_id": app["client_id"]}).status_code == 200


def test_revoking_a_refresh_token_revokes_its_family(client, db, person):
    app, token = flow.tokens_for(client, person.email)
    client.post("/oauth/revoke", data={"token": token["refresh_token"],
                                       "client_id": app["client_id"]})
    assert _access(db, token["access_token"]) is None
    assert flow.refresh(client, app, token["refresh_token"]).status_code == 400


def test_connected_apps_lists_and_revokes_a_client(client, db, person):
    app, token = flow.tokens_for(client, person.email)
    page = client.get("/settings/apps")
    assert "Test App" in page.text
    client.post("/settings/apps", data={"csrf": flow.csrf_of(page.text),
                                        "client_id": app["client_id"]})
    assert _access(db, token["access_token"]) is None
    assert "Test App" not in client.get("/settings/apps").text


# --- attacks (RFC 9700) -------------------------------------------------------------------

def _code(client, person, app, challenge, **extra) -> dict:
    flow.sign_in(client, person.email)
    return flow.decide(client, flow.consent_page(client, flow.authorize_params(
        app, challenge, **extra)))


def test_a_replayed_code_fails_and_revokes_the_tokens_issued_from_it(client, db, person):
    app = flow.register(client)
    verifier, challenge = flow.pkce()
    back = _code(client, person, app, challenge)
    first = flow.exchange(client, app, back["code"], verifier).json()
    replay = flow.exchange(client, app, back["code"], verifier)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    assert _access(db, first["access_token"]) is None


@pytest.mark.parametrize("extra, problem", [
    ({"code_challenge": None, "code_challenge_method": None}, "code_challenge"),
    ({"code_challenge_method": "plain"}, "S256"),
    ({"code_challenge_method": None}, "S256"),
])
def test_pkce_is_required_with_s256(client, person, extra, problem):
    # A client the person approved before gets its errors back (test_hardening.py: others
    # get a page).
    app, _token = flow.tokens_for(client, person.email)
    params = {key: value for key, value in
              {**flow.authorize_params(app, flow.pkce()[1]), **extra}.items()
              if value is not None}
    response = client.get("/oauth/authorize", params=params, follow_redirects=False)
    back = flow.callback(response.headers["Location"])
    assert back["error"] == "invalid_request" and problem in back["error_description"]
    assert back["iss"] == SITE and back["state"] == "st-123"


def test_a_wrong_or_missing_code_verifier_fails(client, person):
    app = flow.register(client)
    verifier, challenge = flow.pkce()
    back = _code(client, person, app, challenge)
    wrong = flow.exchange(client, app, back["code"], flow.pkce()[0])
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    missing = flow.exchange(client, app, back["code"], "")
    assert missing.status_code == 400 and missing.json()["error"] == "invalid_request"
    # The failed attempts did not use the code up.
    assert flow.exchange(client, app, back["code"], verifier).status_code == 200


def test_an_unregistered_redirect_uri_gets_an_error_page_not_a_redirect(client, person):
    app = flow.register(client)
    flow.sign_in(client, person.email)
    for uri in ("https://evil.example/callback", "http://127.0.0.1:9999/other",
                "http://localhost:9999/callback"):
        params = flow.authorize_params(app, flow.pkce()[1], redirect_uri=uri)
        response = client.get("/oauth/authorize", params=params, follow_redirects=False)
        assert response.status_code == 400 and "Location" not in response.headers


def test_an_unknown_client_gets_an_error_page(client):
    params = flow.authorize_params({"client_id": "cli_nobody"}, flow.pkce()[1])
    response = client.get("/oauth/authorize", params=params, follow_redirects=False)
    assert response.status_code == 400 and "Location" not in response.headers


def test_a_redirect_uri_at_the_token_endpoint_must_match(client, person):
    app = flow.register(client)
    verifier, challenge = flow.pkce()
    back = _code(client, person, app, challenge)
    response = flow.exchange(client, app, back["code"], verifier,
                             redirect_uri="http://127.0.0.1:9999/elsewhere")
    assert response.json()["error"] == "invalid_grant"


def test_a_resource_other_than_the_mcp_endpoint_is_invalid_target(client, person):
    app, _token = flow.tokens_for(client, person.email)
    params = flow.authorize_params(app, flow.pkce()[1], resource=f"{SITE}/v1")
    response = client.get("/oauth/authorize", params=params, follow_redirects=False)
    back = flow.callback(response.headers["Location"])
    assert back["error"] == "invalid_target" and back["iss"] == SITE
    verifier, challenge = flow.pkce()
    code = _code(client, person, app, challenge)["code"]
    response = flow.exchange(client, app, code, verifier, resource="https://other.example/")
    assert response.json()["error"] == "invalid_target"


def test_an_expired_code_fails(client, db, person):
    app = flow.register(client)
    verifier, challenge = flow.pkce()
    back = _code(client, person, app, challenge)
    for stored in db.scalars(select(OAuthCode)):
        stored.expires_at = now() - 1
    db.flush()
    response = flow.exchange(client, app, back["code"], verifier)
    assert response.json()["error"] == "invalid_grant"


def test_the_code_of_another_client_fails(client, person):
    app, other = flow.register(client), flow.register(client)
    verifier, challenge = flow.pkce()
    back = _code(client, person, app, challenge)
    response = flow.exchange(client, other, back["code"], verifier)
    assert response.json()["error"] == "invalid_grant"


def test_consent_without_the_sessions_csrf_token_is_refused(client, db, person):
    app = flow.register(client)
    flow.sign_in(client, person.email)
    page = flow.consent_page(client, flow.authorize_params(app, flow.pkce()[1]))
    ticket = page.text.split('name="request" value="')[1].split('"')[0]
    response = client.post("/oauth/consent", data={"request": ticket, "decision": "allow",
                                                   "csrf": "forged"}, follow_redirects=False)
    assert response.status_code == 403
    assert db.scalars(select(OAuthGrant)).first() is None


def test_sign_in_never_redirects_off_the_site(client, person):
    for target in ("https://evil.example/", "//evil.example/x", "/\\evil.example"):
        page = client.get("/signin")
        response = client.post("/signin", data={"email": person.email,
                                                "password": flow.PASSWORD, "next": target,
                                                "csrf": flow.csrf_of(page.text)},
                               follow_redirects=False)
        assert response.headers["Location"] == "/settings/apps"


def test_a_wrong_password_and_an_unknown_address_look_the_same(client, person):
    wrong = flow.sign_in(client, person.email, password="not the password")
    unknown = flow.sign_in(client, "nobody@mail.example")
    assert wrong.status_code == unknown.status_code == 401
    assert "wrong" in wrong.text and wrong.text.replace(person.email, "") == unknown.text


@pytest.mark.parametrize("data", [{}, {"grant_type": "password"},
                                  {"grant_type": "authorization_code"},
                                  {"grant_type": "refresh_token", "client_id": "nobody"}])
def test_malformed_token_requests_get_rfc_6749_errors(client, data):
    response = client.post("/oauth/token", data=data)
    assert response.status_code in (400, 401)
    assert set(response.json()) >= {"error"}


def test_a_plain_http_site_address_gets_an_oauth_error_not_a_500(database_url):
    from agenda.app import create_app

    insecure = create_app({"database_url": database_url, "secret_key": "x",
                           "site_url": "http://agenda.example"})
    with insecure.test_client() as client:
        response = client.post("/oauth/token", data={"grant_type": "refresh_token",
                                                     "refresh_token": "svc_ort_x",
                                                     "client_id": "cli_x"})
    insecure.service.close()
    assert response.status_code == 400
    assert response.json()["error"] == "insecure_transport"


def test_signing_in_attaches_the_tickets_waiting_for_the_address(client, db, person):
    from models import deliveries
    from models.tickets import Ticket
    from tests.factories import EventFactory, TicketFactory

    event = EventFactory(external_ticketing=True)
    waiting = TicketFactory(event_id=event.id, person_id=None, buyer_email_hash=(
        deliveries.address_hash("test-secret", person.email_key)))
    assert flow.sign_in(client, "Sanne@Mail.example").status_code == 302
    db.expire_all()
    assert db.get(Ticket, waiting.id).person_id == person.id


def test_a_suspended_person_cannot_sign_in(client, db, person):
    person.visibility = "suspended"
    db.flush()
    assert flow.sign_in(client, person.email).status_code == 401


# --- malformed requests: always an RFC 6749 error, never a 500 ----------------------------

_FIELDS = ["grant_type", "code", "redirect_uri", "client_id", "client_secret", "code_verifier",
           "refresh_token", "scope", "resource", "token", "token_type_hint"]
_VALUES = st.one_of(st.sampled_from(["authorization_code", "refresh_token", "none", "",
                                     "svc_ort_x", "svc_oat_x", "cli_x", "read admin",
                                     "http://127.0.0.1:9999/callback", "access_token"]),
                    st.text(max_size=40))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(_FIELDS), _VALUES, max_size=6),
       st.sampled_from(["/oauth/token", "/oauth/revoke"]),
       st.sampled_from([None, "Basic !!!", "Basic Y2xpX3g6eA==", "Bearer x"]))
def test_any_form_to_the_token_and_revocation_endpoints_gets_an_oauth_answer(
        client, data, path, authorization):
    headers = {"Authorization": authorization} if authorization else {}
    response = client.post(path, data=data, headers=headers)
    assert response.status_code in (200, 400, 401, 429), response.text
    if response.status_code != 200:
        assert isinstance(response.json()["error"], str)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(
    st.dictionaries(
        st.sampled_from(["redirect_uris", "client_name", "token_endpoint_auth_method",
                         "grant_types", "response_types", "scope"]),
        st.one_of(st.text(max_size=30), st.integers(), st.none(), st.booleans(),
                  st.lists(st.text(max_size=30), max_size=3))),
    st.lists(st.integers()), st.text(max_size=20)))
def test_any_registration_body_gets_a_registration_or_an_rfc_7591_error(client, body):
    response = client.post("/oauth/register", json=body)
    assert response.status_code in (201, 400, 429), response.text
    if response.status_code == 400:
        assert set(response.json()) == {"error", "error_description"}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(
    ["response_type", "client_id", "redirect_uri", "code_challenge", "code_challenge_method",
     "state", "resource", "scope", "ui_locales"]), st.text(max_size=40), max_size=8))
def test_any_authorization_request_gets_an_error_page_or_a_redirect(client, params):
    response = client.get("/oauth/authorize", params=params, follow_redirects=False)
    assert response.status_code in (302, 400), response.text


# --- a NUL character (%00): no client, code, token or address has one ------------------------
# PostgreSQL refuses it in any text it compares, so each endpoint refuses it first, in its
# own kind of answer.

@pytest.mark.parametrize("field", ["client_id", "code", "redirect_uri", "code_verifier"])
def test_a_nul_in_a_token_request_is_an_oauth_invalid_request(client, field):
    form = {"grant_type": "authorization_code", "client_id": "cli_x", "code": "svc_oac_x",
            "redirect_uri": REDIRECT, "code_verifier": "v" * 43}
    response = client.post("/oauth/token", data={**form, field: form[field] + "\x00"})
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"


def test_a_nul_in_a_refresh_or_a_revocation_is_an_oauth_invalid_request(client):
    refresh = client.post("/oauth/token", data={"grant_type": "refresh_token",
                                                "client_id": "cli_x", "refresh_token": "\x00"})
    revoke = client.post("/oauth/revoke", data={"client_id": "cli_x", "token": "svc_oat_\x00"})
    for response in (refresh, revoke):
        assert response.status_code == 400
        assert response.json()["error"] == "invalid_request"


def test_a_nul_in_basic_credentials_is_an_oauth_invalid_request(client):
    import base64
    credentials = base64.b64encode(b"cli_\x00:secret").decode()
    response = client.post("/oauth/token", data={"grant_type": "refresh_token",
                                                 "refresh_token": "svc_ort_x"},
                           headers={"Authorization": f"Basic {credentials}"})
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"


def test_a_nul_in_a_registration_is_an_rfc_7591_error(client):
    named = client.post("/oauth/register", json={
        "redirect_uris": [REDIRECT], "client_name": "Assistant\x00"})
    redirected = client.post("/oauth/register", json={"redirect_uris": [REDIRECT + "\x00"]})
    assert (named.status_code, named.json()["error"]) == (400, "invalid_client_metadata")
    assert (redirected.status_code, redirected.json()["error"]) == (400, "invalid_redirect_uri")


def test_a_redirect_uri_has_at_most_500_characters(client):
    longest = REDIRECT + "/" + "p" * (500 - len(REDIRECT) - 1)
    assert client.post("/oauth/register", json={"redirect_uris": [longest]}).status_code == 201
    response = client.post("/oauth/register", json={"redirect_uris": [longest + "p"]})
    assert (response.status_code, response.json()["error"]) == (400, "invalid_redirect_uri")


def test_a_nul_in_an_authorization_request_is_an_error_page(client):
    response = client.get("/oauth/authorize", params={
        "response_type": "code", "client_id": "cli_\x00", "redirect_uri": REDIRECT},
        follow_redirects=False)
    assert response.status_code == 400
    assert response.headers["Content-Type"].startswith("text/html")
    assert "invalid_request" in response.text


def test_a_nul_in_a_sign_in_is_an_error_page(client):
    response = flow.sign_in(client, "sanne\x00@mail.example")
    assert response.status_code == 400
    assert response.headers["Content-Type"].startswith("text/html")
    assert "invalid_request" in response.text
    dutch = client.post("/signin", params={"lang": "nl"}, data={"email": "sanne\x00"})
    assert dutch.status_code == 400
    assert "Dit verzoek kan niet worden afgehandeld" in dutch.text

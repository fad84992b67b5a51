"""The API page of the organiser portal: the organisation's live tokens, listed to owners,
editors and viewers, created, renamed and revoked by owners and editors, each form
protected against CSRF."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from models import tokens
from tests.factories import MembershipFactory, OrganisationFactory
from tests.oauth.flow import csrf_of
from tests.pages.test_pages import _text


def _api(client, organisation, lang="en"):
    return client.get(f"/portal/{organisation.id}/api", params={"lang": lang})


def _create(client, organisation, *scopes, name="Website", csrf=None):
    page = _api(client, organisation)
    return client.post(f"/portal/{organisation.id}/api/tokens", params={"lang": "en"},
                       data={"csrf": csrf or csrf_of(page.text), "name": name,
                             "scope": list(scopes)}, follow_redirects=False)


def _shown_token(response) -> str:
    return re.search(r'id="new-token">(svc_live_[^<]+)<', response.text).group(1)


def _post(client, organisation, path, csrf=None, **data):
    page = _api(client, organisation)
    return client.post(f"/portal/{organisation.id}/api/tokens/{path}",
                       data={"csrf": csrf or csrf_of(page.text), **data},
                       follow_redirects=False)


def test_signed_out_the_api_page_sends_to_sign_in_and_back(client, organisation):
    response = client.get(f"/portal/{organisation.id}/api", params={"lang": "nl"},
                          follow_redirects=False)
    assert response.status_code == 302
    assert response.headers["location"] == (
        f"/signin?next=%2Fportal%2F{organisation.id}%2Fapi%3Flang%3Dnl&lang=nl")


def test_one_organisation_opens_its_api_page_several_are_a_choice(client, signed_in, db):
    member = signed_in("owner")
    first = client.get("/portal", follow_redirects=False)
    assert first.status_code == 302 and "/api?lang=" in first.headers["location"]
    other = OrganisationFactory(name="Awakenings")
    MembershipFactory(person_id=member.id, organisation_id=other.id, role="door")
    choice = client.get("/portal", params={"lang": "nl"})
    assert choice.status_code == 200
    text = _text(choice)
    assert "Kies een organisatie" in text
    assert "Awakenings (deur)" in text and "Dekmantel (eigenaar)" in text
    assert f'href="/portal/{other.id}/door?lang=nl"' in choice.text


def test_an_owner_creates_a_read_token_shown_once_and_stored_hashed(client, signed_in,
                                                                      organisation, db):
    signed_in("owner")
    response = _create(client, organisation, "read", name="Website")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    token = _shown_token(response)
    record = db.scalars(select(tokens.ApiToken).where(
        tokens.ApiToken.organisation_id == organisation.id)).one()
    assert record.token_hash == tokens.hash_token(token) and token not in record.token_hash
    assert token.startswith(record.prefix) and record.scopes == "read"
    assert record.name == "Website"
    listed = _api(client, organisation)
    assert token not in listed.text and record.prefix in listed.text
    assert "Website" in _text(listed) and _requests_today(listed.text) == ["0"]


def test_a_new_token_works_on_the_api_and_is_refused_after_revoking(client, signed_in,
                                                                     organisation):
    signed_in("owner")
    token = _shown_token(_create(client, organisation, "read"))
    bearer = {"Authorization": f"Bearer {token}"}
    me = client.get("/v1/me", headers=bearer)
    assert me.status_code == 200 and me.json()["data"]["organisation"]["id"] == organisation.id
    assert _requests_today(_api(client, organisation).text) == ["1"]
    prefix = token[:len(tokens.LIVE_PREFIX) + tokens.VISIBLE_CHARS]
    revoked = _post(client, organisation, f"{prefix}/revoke")
    assert revoked.status_code == 303
    assert revoked.headers["location"] == f"/portal/{organisation.id}/api?lang=en"
    assert client.get("/v1/me", headers=bearer).status_code == 401
    assert prefix not in _api(client, organisation).text


def test_tickets_is_refused_without_a_ticket_shop(client, signed_in, db):
    shopless = OrganisationFactory(ticket_shop_url=None)
    signed_in("owner", of=shopless)
    page = _api(client, shopless)
    assert 'value="tickets"' not in page.text
    response = _create(client, shopless, "read", "tickets")
    assert response.status_code == 400
    assert "needs a link to the organisation's own ticket shop" in _text(response)
    assert tokens.list_tokens(db, shopless.id) == []


def test_an_owner_with_a_ticket_shop_creates_a_tickets_token(client, signed_in, organisation, db):
    signed_in("owner")
    assert 'value="tickets"' in _api(client, organisation).text
    assert _create(client, organisation, "read", "tickets").status_code == 200
    (record,) = tokens.list_tokens(db, organisation.id)
    assert record.scope_list == ["read", "tickets"]


def test_an_editor_creates_scan_and_attendance_but_not_tickets(client, signed_in,
                                                               organisation, db):
    signed_in("editor")
    page = _api(client, organisation)
    assert 'value="tickets"' not in page.text and 'value="scan"' in page.text
    assert _create(client, organisation, "scan", "attendance").status_code == 200
    refused = _create(client, organisation, "read", "tickets")
    assert refused.status_code == 403
    assert [record.scope_list for record in tokens.list_tokens(db, organisation.id)] == [
        ["scan", "attendance"]]


def test_an_editor_cannot_rename_or_revoke_the_owners_tickets_token(client, signed_in,
                                                                    organisation, db):
    record, _token = tokens.create_token(db, organisation=organisation, name="Shop",
                                         scopes=["tickets"])
    signed_in("editor")
    page = _api(client, organisation)
    assert record.prefix in page.text and f"{record.prefix}/revoke" not in page.text
    assert _post(client, organisation, f"{record.prefix}/revoke").status_code == 403
    assert _post(client, organisation, f"{record.prefix}/name", name="Mine").status_code == 403
    db.refresh(record)
    assert record.revoked_at is None and record.name == "Shop"


@pytest.mark.parametrize("role", ["owner", "editor"])
def test_owners_and_editors_rename_a_token(client, signed_in, organisation, db, role):
    record, _token = tokens.create_token(db, organisation=organisation, name="Old",
                                         scopes=["read"])
    signed_in(role)
    response = _post(client, organisation, f"{record.prefix}/name", name="  Door app ")
    assert response.status_code == 303
    db.refresh(record)
    assert record.name == "Door app"
    assert "Door app" in _text(_api(client, organisation))
    empty = _post(client, organisation, f"{record.prefix}/name", name=" ")
    assert empty.status_code == 400 and "a name has 1 to 120 characters" in _text(empty)


def test_a_viewer_sees_the_list_and_changes_nothing(client, signed_in, organisation, db):
    record, _token = tokens.create_token(db, organisation=organisation, name="Feed",
                                         scopes=["read"])
    signed_in("viewer")
    page = _api(client, organisation)
    assert page.status_code == 200 and record.prefix in page.text
    assert "<form method=\"post\" action=\"/portal" not in page.text
    assert "Your role lets you see the tokens, not change them." in _text(page)
    assert _create(client, organisation, "read").status_code == 403
    assert _post(client, organisation, f"{record.prefix}/revoke").status_code == 403
    assert _post(client, organisation, f"{record.prefix}/name", name="X").status_code == 403
    db.refresh(record)
    assert record.revoked_at is None and record.name == "Feed"
    assert len(tokens.list_tokens(db, organisation.id)) == 1


def test_the_door_role_gets_no_api_page(client, signed_in, organisation):
    signed_in("door")
    response = _api(client, organisation, lang="nl")
    assert response.status_code == 403
    assert "Jouw rol in deze organisatie geeft geen toegang tot deze pagina." in _text(response)


def test_another_organisations_page_and_tokens_are_not_found(client, signed_in, db):
    other = OrganisationFactory()
    record, _token = tokens.create_token(db, organisation=other, name="Theirs", scopes=["read"])
    mine = OrganisationFactory()
    signed_in("owner", of=mine)
    missing = client.get("/portal/org_missing/api")
    foreign = _api(client, other)
    assert foreign.status_code == missing.status_code == 404
    assert _text(foreign) == _text(missing)
    page = _api(client, mine)
    response = client.post(f"/portal/{mine.id}/api/tokens/{record.prefix}/revoke",
                           data={"csrf": csrf_of(page.text)}, follow_redirects=False)
    assert response.status_code == 404
    db.refresh(record)
    assert record.revoked_at is None


def test_every_form_without_the_sessions_csrf_token_is_refused(client, signed_in,
                                                               organisation, db):
    record, _token = tokens.create_token(db, organisation=organisation, name="Kept",
                                         scopes=["read"])
    signed_in("owner")
    assert _create(client, organisation, "read", csrf="forged").status_code == 403
    assert _post(client, organisation, f"{record.prefix}/revoke", csrf="forged").status_code == 403
    assert _post(client, organisation, f"{record.prefix}/name", csrf="forged",
                 name="Taken").status_code == 403
    db.refresh(record)
    assert record.revoked_at is None and record.name == "Kept"
    assert len(tokens.list_tokens(db, organisation.id)) == 1


def test_the_api_page_speaks_dutch_and_is_private(client, signed_in, organisation):
    signed_in("owner")
    response = client.get(f"/portal/{organisation.id}/api",
                          headers={"Accept-Language": "nl-NL,nl;q=0.9"})
    assert '<html lang="nl">' in response.text
    assert "API-tokens · Dekmantel" in _text(response) and "Token aanmaken" in _text(response)
    assert response.headers["cache-control"] == "no-store"
    assert "form-action 'self'" in response.headers["content-security-policy"]
    assert "<script" not in response.text


def test_a_token_name_has_1_to_120_characters_without_nul(client, signed_in, organisation, db):
    signed_in("owner")
    assert _create(client, organisation, "read", name="n" * 120).status_code == 200
    for name in ("n" * 121, "Web\x00site"):
        refused = _create(client, organisation, "read", name=name)
        assert refused.status_code == 400 and "a name has 1 to 120 characters" in _text(refused)
    record = db.scalars(select(tokens.ApiToken).where(
        tokens.ApiToken.organisation_id == organisation.id)).one()
    renamed = _post(client, organisation, f"{record.prefix}/name", name="Door\x00app")
    assert renamed.status_code == 400
    db.refresh(record)
    assert record.name == "n" * 120


def test_an_address_with_a_nul_is_the_not_found_page(client, signed_in, organisation):
    signed_in("owner")
    for path in (f"/portal/{organisation.id}%00/api", f"/portal/{organisation.id}/api?lang=%00"):
        response = client.get(path)
        assert response.status_code == 404
        assert response.headers["content-type"].startswith("text/html")


def _requests_today(page: str) -> list[str]:
    """The "requests today" cells of the token table (labelled for the stacked phone layout)."""
    return re.findall(r'<td class="today" data-label="[^"]*">([^<]*)</td>', page)

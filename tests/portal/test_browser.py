"""The portal in a real browser (headless Chromium, JavaScript off) against the served
service: an organiser creates a read token, uses it on the API and revokes it; the door
scans a delivered ticket twice.

What the served app sees must be committed, so each test makes its own organisation
(through the `agenda` command) and events (in a fresh session); nothing collides on reruns.
"""

from __future__ import annotations

import uuid
from urllib.parse import urlsplit

import httpx
import pytest
from sqlalchemy import delete

from models.events import Event
from models.organisations import Organisation
from models.venues import Venue
from tests import factories
from tests.handlers.test_door import tonight
from tests.oauth import flow
from tests.oauth.test_browser import PNG_SIGNATURE, _agenda, chromium, site  # noqa: F401 - fixtures


@pytest.fixture
def page(chromium):  # noqa: F811 - the imported fixture
    """A fresh profile without JavaScript: the pages must work without it."""
    context = chromium.new_context(locale="en-GB", java_script_enabled=False)
    yield context.new_page()
    context.close()


def _organiser(site, role: str, ticket_shop: str | None = None) -> dict:  # noqa: F811
    """A new organisation and a member with `role` there, committed."""
    tag = uuid.uuid4().hex[:10]
    shop = ["--ticket-shop", ticket_shop] if ticket_shop else []
    organisation_id = _agenda(site.database_url, "organisation", "create", f"Club {tag}", *shop)
    email = f"d{tag}@mail.example"
    _agenda(site.database_url, "person", "create", "--email", email, "--handle", f"d-{tag}",
            "--name", f"Door {tag}", "--password", flow.PASSWORD,
            "--role", f"{organisation_id}:{role}")
    return {"email": email, "organisation_id": organisation_id}


@pytest.fixture
def committed_event(site):  # noqa: F811 - the imported fixture
    """`committed_event(organisation_id, make=..., **fields)` -> (id, slug) of an approved
    event committed on the served database; deleted again (with what cascades from it and
    its venue) after the test, so the other tests' agenda stays as they made it."""
    made = []

    def make_event(organisation_id: str, make=factories.EventFactory, **fields):
        with site.app.service.sessions() as fresh:
            factories.bind(fresh)
            event = make(organisation=fresh.get(Organisation, organisation_id), **fields)
            made.append((event.id, event.venue_id))
            fresh.commit()
            return event.id, event.slug

    yield make_event
    with site.app.service.sessions() as fresh:
        for event_id, venue_id in made:
            fresh.execute(delete(Event).where(Event.id == event_id))
            fresh.execute(delete(Venue).where(Venue.id == venue_id))
        fresh.commit()


def _token(site, organisation_id: str, scopes: str) -> dict:  # noqa: F811
    made = _agenda(site.database_url, "token", "create", "--organisation", organisation_id,
                   "--scopes", scopes, "--name", "test").splitlines()[-1]
    return {"Authorization": f"Bearer {made}"}


def _sign_in(page, email: str) -> None:
    page.get_by_label("Email address").fill(email)
    page.get_by_label("Password").fill(flow.PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def test_an_organiser_creates_uses_and_revokes_a_read_token(page, site, committed_event,  # noqa: F811
                                                            tmp_path):
    organiser = _organiser(site, "owner")
    event_id, slug = committed_event(organiser["organisation_id"], title="Portal Night")
    api = httpx.get(f"{site.url}/v1/events/{event_id}",
                    headers=_token(site, organiser["organisation_id"], "read"))
    assert api.status_code == 200, api.text
    page.goto(api.json()["data"]["url"])
    assert page.get_by_role("heading", level=1).inner_text() == "Portal Night"
    assert urlsplit(page.url).path == f"/events/{slug}"

    page.goto(f"{site.url}/portal")
    assert urlsplit(page.url).path == "/signin"
    _sign_in(page, organiser["email"])
    page.wait_for_url(f"{site.url}/portal/{organiser['organisation_id']}/api?*")
    page.get_by_label("Name", exact=True).fill("My website")
    assert page.get_by_label("read (free)").is_checked()
    page.get_by_role("button", name="Create token").click()
    token = page.locator("#new-token").inner_text()
    assert token.startswith("svc_live_")
    assert "shown only this once" in page.get_by_role("status").inner_text()
    page.screenshot(path=str(tmp_path / "api.png"), full_page=True)
    assert (tmp_path / "api.png").read_bytes().startswith(PNG_SIGNATURE)

    bearer = {"Authorization": f"Bearer {token}"}
    me = httpx.get(f"{site.url}/v1/me", headers=bearer)
    assert me.status_code == 200 and me.json()["data"]["token"]["name"] == "My website"

    page.goto(f"{site.url}/portal/{organiser['organisation_id']}/api?lang=en")
    assert token not in page.content()
    page.get_by_role("button", name="Revoke My website").click()
    page.wait_for_url(f"{site.url}/portal/{organiser['organisation_id']}/api?*")
    assert page.get_by_text("My website").count() == 0
    refused = httpx.get(f"{site.url}/v1/me", headers=bearer)
    assert refused.status_code == 401


def test_the_door_scans_a_delivered_ticket_twice(page, site, committed_event,  # noqa: F811
                                                 tmp_path):
    organiser = _organiser(site, "door", ticket_shop="https://shop.example")
    event_id, _slug = committed_event(organiser["organisation_id"], make=tonight,
                                      external_ticketing=True, title="Door Night")
    code = f"DLV-{uuid.uuid4().hex[:10]}"
    delivered = httpx.post(
        f"{site.url}/v1/events/{event_id}/external-tickets",
        headers=_token(site, organiser["organisation_id"], "tickets"),
        json={"source": "paylogic", "items": [{"email": "buyer@mail.example", "code": code,
                                               "type": "Regular", "name": "Sam"}]})
    assert delivered.status_code == 200, delivered.text

    page.goto(f"{site.url}/portal/{organiser['organisation_id']}/door?lang=en")
    _sign_in(page, organiser["email"])
    page.wait_for_url(f"{site.url}/portal/{organiser['organisation_id']}/door?*")
    assert "Door Night" in page.get_by_role("list").last.inner_text()

    page.get_by_label("Ticket code or scanned link").fill(code)
    page.get_by_role("button", name="Check ticket").click()
    verdict = page.get_by_role("status")
    assert verdict.inner_text().startswith("Valid: let in")
    assert verdict.get_attribute("class") == "verdict ok"
    page.screenshot(path=str(tmp_path / "ok.png"), full_page=True)

    page.get_by_label("Ticket code or scanned link").fill(f"{site.url}/t/{code}")
    page.get_by_role("button", name="Check ticket").click()
    refusal = page.get_by_role("alert")
    assert refusal.inner_text().startswith("Already used")
    assert "Already scanned at" in refusal.inner_text()
    assert refusal.get_attribute("class") == "verdict refused"
    page.screenshot(path=str(tmp_path / "used.png"), full_page=True)
    assert (tmp_path / "used.png").read_bytes().startswith(PNG_SIGNATURE)

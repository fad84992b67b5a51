"""The door page: codes scanned through `models.door.scan` (as POST /scan), the verdict
large in green or red, tonight's events, for owners, editors and the door role."""

from __future__ import annotations

import re

import pytest

from tests.factories import EventFactory, OrganisationFactory, TicketFactory
from tests.handlers.test_door import tonight
from tests.oauth.flow import csrf_of
from tests.pages.test_pages import _text


def _scan(client, organisation, code, lang="en", csrf=None):
    page = client.get(f"/portal/{organisation.id}/door", params={"lang": lang})
    return client.post(f"/portal/{organisation.id}/door", params={"lang": lang},
                       data={"csrf": csrf or csrf_of(page.text), "code": code})


def _verdict(response) -> tuple[str, str]:
    """(data-status, visible text) of the verdict box."""
    found = re.search(r'class="verdict [a-z]+" role="[a-z]+" data-status="([a-z_]+)">(.*?)</div>',
                      response.text, re.DOTALL)
    return found.group(1), _text_of(found.group(2))


def _text_of(fragment: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment)).strip()


@pytest.mark.parametrize("role", ["owner", "editor", "door"])
def test_a_ticket_is_let_in_once_then_refused_as_used(client, signed_in, organisation, role):
    event = tonight(organisation=organisation, title="Awakenings")
    TicketFactory(event_id=event.id, code="DOOR1234", type="Early bird", holder="Sam")
    signed_in(role)
    first = _scan(client, organisation, "DOOR1234")
    assert first.status_code == 200 and first.headers["cache-control"] == "no-store"
    assert _verdict(first) == ("ok", "Valid: let in Awakenings · Early bird · Sam")
    assert 'class="verdict ok" role="status"' in first.text
    status, text = _verdict(_scan(client, organisation, "https://x.example/t/DOOR1234"))
    assert status == "used" and text.startswith("Already used Already scanned at ")


def test_refusals_are_red_with_their_reason_in_dutch(client, signed_in, organisation):
    event = tonight(organisation=organisation)
    TicketFactory(event_id=event.id, code="VOID1234", status="void")
    later = EventFactory(organisation=organisation, title="Next Year")
    TicketFactory(event_id=later.id, code="LATE1234")
    signed_in("door")
    void = _scan(client, organisation, "VOID1234", lang="nl")
    assert 'class="verdict refused" role="alert"' in void.text
    assert _verdict(void) == ("void", ("Terugbetaald of geannuleerd Dit ticket is "
                                       "terugbetaald of geannuleerd."))
    assert _verdict(_scan(client, organisation, "NOPE1234", lang="nl")) == (
        "unknown", "Onbekend ticket Geen ticket met deze code bij deze organisatie.")
    assert _verdict(_scan(client, organisation, "LATE1234", lang="nl")) == (
        "not_today", "Niet vanavond Dit ticket is voor Next Year; de deuren zijn nu niet open.")
    # In English the door says what the API's `reason` says.
    status, text = _verdict(_scan(client, organisation, "LATE1234"))
    assert status == "not_today" and text.startswith("Not tonight This ticket is for Next Year")


def test_another_organisations_ticket_is_unknown_at_this_door(client, signed_in, organisation):
    theirs = tonight(organisation=OrganisationFactory())
    ticket = TicketFactory(event_id=theirs.id, code="THEIRS12")
    signed_in("door")
    assert _verdict(_scan(client, organisation, "THEIRS12"))[0] == "unknown"
    assert ticket.status == "valid"


def test_the_door_page_shows_tonights_events_only(client, signed_in, organisation):
    tonight(organisation=organisation, title="Tonight's Rave")
    EventFactory(organisation=organisation, title="Far Future Fest")
    tonight(organisation=OrganisationFactory(), title="Someone Else's Night")
    signed_in("door")
    text = _text(client.get(f"/portal/{organisation.id}/door", params={"lang": "en"}))
    assert "Tonight Tonight's Rave" in text
    assert "Far Future Fest" not in text and "Someone Else's Night" not in text


def test_a_scan_without_the_csrf_token_is_refused_and_marks_nothing(client, signed_in,
                                                                    organisation):
    event = tonight(organisation=organisation)
    ticket = TicketFactory(event_id=event.id, code="KEEP1234")
    signed_in("door")
    assert _scan(client, organisation, "KEEP1234", csrf="forged").status_code == 403
    assert ticket.status == "valid"
    assert _verdict(_scan(client, organisation, "KEEP1234"))[0] == "ok"


def test_a_viewer_has_no_door(client, signed_in, organisation):
    event = tonight(organisation=organisation)
    ticket = TicketFactory(event_id=event.id, code="VIEW1234")
    signed_in("viewer")
    assert client.get(f"/portal/{organisation.id}/door").status_code == 403
    page = client.get(f"/portal/{organisation.id}/api")
    refused = client.post(f"/portal/{organisation.id}/door",
                          data={"csrf": csrf_of(page.text), "code": "VIEW1234"})
    assert refused.status_code == 403
    assert ticket.status == "valid"


def test_a_code_with_a_nul_is_an_unknown_ticket_at_the_door(client, signed_in, organisation):
    TicketFactory(event_id=tonight(organisation=organisation).id, code="NULL1234")
    signed_in("door")
    response = _scan(client, organisation, "NULL1234\x00")
    assert response.status_code == 200
    assert _verdict(response)[0] == "unknown"

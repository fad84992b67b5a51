"""Ticket links `/t/<code>`: the ticket to its holder, and to anyone else the same 404 page
as a code that does not exist."""

from __future__ import annotations

import datetime as dt

from tests.factories import EventFactory, TicketFactory
from tests.pages.test_pages import _text


def test_signed_out_a_ticket_link_sends_to_sign_in_and_back(client, db):
    TicketFactory(code="LINK1234")
    response = client.get("/t/LINK1234", params={"lang": "nl"}, follow_redirects=False)
    assert response.status_code == 302
    assert response.headers["location"] == "/signin?next=%2Ft%2FLINK1234%3Flang%3Dnl&lang=nl"


def test_the_holder_sees_event_type_holder_status_and_code(client, signed_in, db):
    holder = signed_in(None)
    event = EventFactory(title="Dekmantel Festival", date=dt.date(2031, 8, 1), start="12:00")
    TicketFactory(event_id=event.id, code="MINE1234", person_id=holder.id, type="Weekend",
                  holder="Sam de Vries")
    response = client.get("/t/MINE1234", params={"lang": "en"})
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    text = _text(response)
    assert "Event Dekmantel Festival, Friday 1 August 2031, 12:00" in text
    assert "Type Weekend Name Sam de Vries Status valid Code MINE1234" in text
    assert '<p class="code" id="code">MINE1234</p>' in response.text
    dutch = _text(client.get("/t/MINE1234", params={"lang": "nl"}))
    assert "Je ticket" in dutch and "vrijdag 1 augustus 2031" in dutch and "geldig" in dutch


def test_someone_elses_ticket_looks_like_a_missing_one(client, signed_in, db):
    signed_in(None)
    TicketFactory(code="THEIR123", holder="Someone Else")
    theirs = client.get("/t/THEIR123", params={"lang": "en"})
    missing = client.get("/t/NOSUCH12", params={"lang": "en"})
    assert theirs.status_code == missing.status_code == 404
    # The same page; only the language link names the address asked for.
    assert theirs.text.replace("THEIR123", "CODE") == missing.text.replace("NOSUCH12", "CODE")
    assert "Someone Else" not in theirs.text
    assert theirs.headers["cache-control"] == "no-store"


def test_a_waiting_delivered_ticket_shows_to_nobody(client, signed_in, db):
    signed_in(None)
    TicketFactory(code="WAIT1234", person_id=None, source="paylogic")
    assert client.get("/t/WAIT1234").status_code == 404

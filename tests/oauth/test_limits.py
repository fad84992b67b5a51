"""The OAuth limits at their edges, with the specification's numbers: 30 registrations per
address per 10 minutes, 1,000 for the whole platform per hour, 120 token requests per address
per minute, 10 minutes for an authorization request to wait for sign-in and consent; and the
service's own: 60 authorization requests per address per minute, an IPv6 /64 as one address,
registrations beyond an address's first five of the hour sharing 500, 200 registrations per
client name an hour, and sign-ins per account with a backoff."""

from __future__ import annotations

import time
from contextlib import contextmanager

import pytest
from itsdangerous.timed import TimestampSigner
from sqlalchemy import func, select

from models import members, oauth
from models.db import now
from tests.oauth import flow

# The counters' clock, frozen 545 seconds into an hour: the 10-minute window then ends in
# 55 seconds, the hour in 3,055 and the minute in 55.
HOUR = (int(time.time()) // 3600) * 3600
MOMENT = HOUR + 545


@pytest.fixture
def clock(app, monkeypatch):
    """The counters' clock: `clock.now` is the moment every window is counted at."""

    class Clock:
        now = MOMENT

    monkeypatch.setattr(app.service.usage, "clock", lambda: Clock.now)
    return Clock


@pytest.fixture
def person(db):
    return members.create_person(db, email="limits@mail.example", handle="limits",
                                 name="Limits", password=flow.PASSWORD, now=now())


@contextmanager
def _from(app, address: str):
    """A client of the whole app whose requests come from `address`."""
    with app.test_client(client=(address, 50000)) as client:
        yield client


def _register(client, name: str = "Limits"):
    return client.post("/oauth/register", json={"client_name": name,
                                                "redirect_uris": [flow.REDIRECT]})


def _assert_refused(response, retry_after: int) -> None:
    """429 with `Retry-After` and an RFC 6749 error body, not the REST envelope."""
    assert response.status_code == 429, response.text
    assert response.headers["Retry-After"] == str(retry_after)
    assert response.headers["Cache-Control"] == "no-store"
    body = response.json()
    assert set(body) == {"error", "error_description"} and body["error"] == "slow_down"


def _token_request(client):
    """A cheap token request, counted like any other: a refresh by an unknown client."""
    return flow.refresh(client, {"client_id": "cli_nobody"}, "svc_ort_unknown")


def _clients(db) -> int:
    return db.scalar(select(func.count()).select_from(oauth.OAuthClient))


# --- registrations ------------------------------------------------------------------------

def test_the_31st_registration_from_an_address_in_10_minutes_is_refused(app, db, clock):
    before = _clients(db)
    with _from(app, "198.51.100.1") as client:
        for _ in range(30):
            assert _register(client).status_code == 201
        _assert_refused(_register(client), 55)
    assert _clients(db) == before + 30
    with _from(app, "198.51.100.2") as other:
        assert _register(other).status_code == 201


def test_registrations_from_an_address_are_admitted_again_when_the_10_minutes_end(app, db,
                                                                                  clock):
    with _from(app, "198.51.100.3") as client:
        for _ in range(30):
            _register(client)
        clock.now = HOUR + 599
        _assert_refused(_register(client), 1)
        clock.now = HOUR + 600
        assert _register(client).status_code == 201


def test_the_1001st_registration_of_the_platform_in_an_hour_is_refused(app, db, clock):
    before = _clients(db)
    # Five from each address, of five apps each: none over a share of its own.
    for number in range(200):
        with _from(app, f"10.0.{number}.1") as client:
            for _ in range(5):
                assert _register(client, f"Limits {number % 8}").status_code == 201
    with _from(app, "10.1.0.1") as newcomer:
        _assert_refused(_register(newcomer), 3055)
        # The whole hour: a new 10-minute window of the address does not help.
        clock.now = HOUR + 3599
        _assert_refused(_register(newcomer), 1)
        clock.now = HOUR + 3600
        assert _register(newcomer).status_code == 201
    assert _clients(db) == before + 1001


def test_a_few_dozen_addresses_cannot_use_up_the_platforms_registrations(app, db, clock):
    before = _clients(db)
    for number in range(40):
        with _from(app, f"10.2.{number}.1") as client:
            answers = [_register(client, f"Flood {number} {attempt}") for attempt in range(30)]
        # The first five of the hour, then the rest from what all such share.
        assert [answer.status_code for answer in answers[:5]] == [201] * 5
    assert _clients(db) == before + 40 * 5 + 500
    with _from(app, "10.3.0.1") as newcomer:
        assert _register(newcomer, "A Real App").status_code == 201
        for _ in range(4):
            assert _register(newcomer, "A Real App").status_code == 201
        # Its sixth is beyond its first five: the flood used up what those share.
        _assert_refused(_register(newcomer, "A Real App"), 3055)


def test_an_ipv6_64_counts_as_one_address_for_registrations(app, db, clock):
    for number in range(30):
        with _from(app, f"2001:db8:1:2::{number + 1:x}") as client:
            assert _register(client, f"Six {number}").status_code == 201
    with _from(app, "2001:db8:1:2:ffff:ffff:ffff:ffff") as client:
        _assert_refused(_register(client, "Six more"), 55)
    with _from(app, "2001:db8:1:3::1") as neighbour:
        assert _register(neighbour, "Six more").status_code == 201


def test_one_client_name_registers_at_most_200_times_an_hour(app, db, clock):
    for number in range(20):
        with _from(app, f"10.4.{number}.1") as client:
            for _ in range(10):
                assert _register(client, "Same App").status_code == 201
    with _from(app, "10.5.0.1") as client:
        # Names are compared as people read them: case and spacing aside.
        _assert_refused(_register(client, "  same   APP "), 3055)
        assert _register(client, "Other App").status_code == 201


# --- token requests -----------------------------------------------------------------------

def test_the_121st_token_request_from_an_address_in_a_minute_is_refused(app, db, clock,
                                                                        person):
    with _from(app, "203.0.113.1") as client:
        # A whole flow is one token request (the code exchange).
        registered, token = flow.tokens_for(client, person.email)
        for _ in range(118):
            assert _token_request(client).json()["error"] == "invalid_client"
        renewed = flow.refresh(client, registered, token["refresh_token"])
        assert renewed.status_code == 200, renewed.text
        _assert_refused(flow.refresh(client, registered, renewed.json()["refresh_token"]), 55)
    # Refused before it was looked at: the refresh token was not used up.
    with _from(app, "203.0.113.2") as other:
        assert flow.refresh(other, registered, renewed.json()["refresh_token"]).status_code == 200


def test_token_requests_are_admitted_again_in_the_next_minute(app, db, clock):
    with _from(app, "203.0.113.3") as client:
        for _ in range(120):
            assert _token_request(client).json()["error"] == "invalid_client"
        clock.now = HOUR + 599
        _assert_refused(_token_request(client), 1)
        clock.now = HOUR + 600
        assert _token_request(client).json()["error"] == "invalid_client"


# --- authorization requests -----------------------------------------------------------------

def _authorize(client):
    """An authorization request of an unknown client: an error page, counted all the same."""
    return client.get("/oauth/authorize", params={"response_type": "code",
                                                  "client_id": "cli_nobody"})


def test_the_61st_authorization_request_from_an_address_in_a_minute_gets_a_page_to_wait(
        app, db, clock):
    with _from(app, "192.0.2.61") as client:
        for _ in range(60):
            answer = _authorize(client)
            assert answer.status_code == 400 and "invalid_client" in answer.text
        refused = _authorize(client)
        assert refused.status_code == 429 and refused.headers["Retry-After"] == "55"
        assert refused.headers["Content-Type"].startswith("text/html")
        assert "slow_down" in refused.text and "Location" not in refused.headers
        clock.now = HOUR + 600
        assert _authorize(client).status_code == 400
    with _from(app, "192.0.2.62") as other:
        assert _authorize(other).status_code == 400


# --- the wait for sign-in and consent -----------------------------------------------------

@pytest.fixture
def ticket_clock(monkeypatch):
    """The clock of the signed authorization request tickets (itsdangerous)."""

    class Clock:
        now = int(time.time())

    monkeypatch.setattr(TimestampSigner, "get_timestamp", lambda _signer: Clock.now)
    return Clock


def test_an_authorization_request_waits_10_minutes_for_consent_and_no_longer(
        client, db, person, ticket_clock):
    registered = flow.register(client)
    flow.sign_in(client, person.email)
    response = client.get("/oauth/authorize", params=flow.authorize_params(
        registered, flow.pkce()[1]), follow_redirects=False)
    consent = response.headers["Location"]
    ticket_clock.now += 600
    page = client.get(consent)
    assert page.status_code == 200 and 'name="decision"' in page.text

    ticket_clock.now += 1
    expired = client.get(consent, follow_redirects=False)
    assert expired.status_code == 400 and "Location" not in expired.headers
    assert expired.headers["Content-Type"].startswith("text/html")
    assert "request_expired" in expired.text
    posted = client.post("/oauth/consent", data={
        "request": consent.split("request=", 1)[1], "csrf": flow.csrf_of(page.text),
        "decision": "allow", "organisation": ""}, follow_redirects=False)
    assert posted.status_code == 400 and "Location" not in posted.headers
    assert "request_expired" in posted.text
    assert db.scalar(select(func.count()).select_from(oauth.OAuthGrant).where(
        oauth.OAuthGrant.client_id == registered["client_id"])) == 0


# --- sign-ins per account (issue 22): a backoff, not a lockout ------------------------------

def _assert_wait_page(response, retry_after: int) -> None:
    """429 with `Retry-After` and a page saying to wait, not "wrong password"."""
    assert response.status_code == 429, response.text
    assert response.headers["Retry-After"] == str(retry_after)
    assert response.headers["Content-Type"].startswith("text/html")
    assert f"Wait {retry_after} seconds" in response.text and "wrong" not in response.text


def test_fifty_wrong_passwords_from_five_addresses_are_not_all_tried(app, db, clock, person):
    answers = []
    for number in range(5):
        with _from(app, f"198.51.100.{number + 10}") as client:
            answers += [flow.sign_in(client, person.email, password=f"guess {number} {attempt}")
                        for attempt in range(10)]
    tried = [answer for answer in answers if answer.status_code == 401]
    # Five at once, the sixth sets a wait of a second: in the same second nothing more.
    assert len(tried) == 6 and "wrong" in tried[0].text
    for refused in answers[6:]:
        _assert_wait_page(refused, 1)
    # The right password is not looked at either while the wait runs.
    with _from(app, "198.51.100.99") as owner:
        _assert_wait_page(flow.sign_in(owner, person.email), 1)


def test_the_wait_doubles_with_each_failure_up_to_five_minutes(app, db, clock, person):
    waits = []
    with _from(app, "198.51.100.20") as client:
        for _ in range(5):
            assert flow.sign_in(client, person.email, password="wrong").status_code == 401
        for _ in range(12):
            assert flow.sign_in(client, person.email, password="wrong").status_code == 401
            refused = flow.sign_in(client, person.email, password="wrong")
            assert refused.status_code == 429
            waits.append(int(refused.headers["Retry-After"]))
            # At least a minute on (an address may try 10 a minute): only the account waits.
            clock.now += max(waits[-1], 60)
    assert waits == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300]


def test_a_successful_sign_in_starts_the_account_afresh(app, db, clock, person):
    with _from(app, "198.51.100.30") as client:
        for _ in range(6):
            flow.sign_in(client, person.email, password="wrong")
        _assert_wait_page(flow.sign_in(client, person.email), 1)
        clock.now += 1
        assert flow.sign_in(client, person.email).status_code == 302
    with _from(app, "198.51.100.31") as client:
        for _ in range(5):
            assert flow.sign_in(client, person.email, password="wrong").status_code == 401


def test_attempts_at_an_account_are_forgotten_an_hour_after_the_last(app, db, clock, person):
    with _from(app, "198.51.100.32") as client:
        for _ in range(6):
            flow.sign_in(client, person.email, password="wrong")
        store = app.service.usage.store
        # The memory store's expiry runs on the monotonic clock: an hour passes there.
        for key in list(store._expiry):
            store._expiry[key] -= 3600
        store._swept -= 60
        clock.now += 3600
        for _ in range(5):
            assert flow.sign_in(client, person.email, password="wrong").status_code == 401


def test_an_attacker_cannot_keep_the_owner_out_of_a_browser_that_signed_in_before(
        app, db, clock, person):
    with _from(app, "198.51.100.40") as owner:
        assert flow.sign_in(owner, person.email).status_code == 302
        owner.cookies.delete("agenda_session")  # signed out, the browser remembered
        for number in range(5):
            with _from(app, f"203.0.113.{number + 40}") as attacker:
                for _ in range(10):
                    flow.sign_in(attacker, person.email, password="guess")
            clock.now += 60
        assert flow.sign_in(owner, person.email).status_code == 302
        # The remembered browser is no way around the wait for guesses either.
        for _ in range(6):
            flow.sign_in(owner, person.email, password="wrong")
        _assert_wait_page(flow.sign_in(owner, person.email, password="wrong"), 1)


def test_an_unknown_address_is_limited_like_a_known_one(app, db, clock):
    with _from(app, "198.51.100.50") as client:
        for _ in range(6):
            assert flow.sign_in(client, "nobody@mail.example").status_code == 401
        _assert_wait_page(flow.sign_in(client, "Nobody@Mail.example "), 1)


def test_the_11th_sign_in_from_an_address_in_a_minute_gets_a_page_to_wait(app, db, clock):
    with _from(app, "198.51.100.60") as client:
        for number in range(10):
            assert flow.sign_in(client, f"person{number}@mail.example").status_code == 401
        _assert_wait_page(flow.sign_in(client, "person10@mail.example"), 55)

"""Bearer tokens and scopes, enforced from the document's security requirements."""

import asyncio
import types

import pytest

from edge.admission import CurrentStamp
from models import tokens
from tests.factories import OrganisationFactory


def _error(response, status, code):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"]["code"] == code
    assert body["error"]["message"]
    assert body["meta"]["request_id"] == response.headers["x-request-id"]
    return body


@pytest.mark.parametrize("header", [
    None,
    "",
    "Bearer",
    "Bearer ",
    "Basic dXNlcjpwYXNz",
    "Bearer svc_live_thisTokenDoesNotExist0000000000000000000",
    "Bearer not-a-live-token",
    "Bearer two words",
    "svc_live_withoutScheme",
])
def test_missing_or_bad_authorization_is_401_with_a_bearer_challenge(client, header):
    headers = {} if header is None else {"Authorization": header}
    response = client.get("/v1/me", headers=headers)
    _error(response, 401, "unauthorized")
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_a_revoked_token_is_401(client, db, make_token):
    token = make_token("read")
    assert client.get("/v1/me", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    tokens.revoke_token(db, token[:17])
    response = client.get("/v1/me", headers={"Authorization": f"Bearer {token}"})
    _error(response, 401, "unauthorized")


def test_a_suspended_organisation_gets_403_everywhere(client, make_token):
    organisation = OrganisationFactory(suspended=True)
    token = make_token("read", organisation=organisation)
    for path in ("/v1/me", "/v1/events", "/v1/genres", "/v1/cities"):
        _error(client.get(path, headers={"Authorization": f"Bearer {token}"}), 403, "forbidden")


@pytest.mark.parametrize(("method", "path", "scope"), [
    ("GET", "/v1/me", "read"),
    ("GET", "/v1/events", "read"),
    ("POST", "/v1/scan", "scan"),
    ("GET", "/v1/events/e1/attendance", "attendance"),
    ("GET", "/v1/events/e1/external-tickets", "tickets"),
])
def test_a_token_without_the_operation_scope_is_403(client, make_token, method, path, scope):
    others = [s for s in tokens.SCOPES if s != scope]
    token = make_token(*others)
    response = client.request(method, path, headers={"Authorization": f"Bearer {token}"},
                              json={"code": "ABCD1234"} if method == "POST" else None)
    body = _error(response, 403, "forbidden")
    assert scope in body["error"]["message"]
    assert f'scope="{scope}"' in response.headers["www-authenticate"]


def test_each_operation_asks_for_exactly_one_scope(app):
    document = app.service.document
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method not in ("get", "post"):
                continue
            security = operation.get("security", document["security"])
            if path in ("/terms", "/openapi.json"):
                assert security == [], path
                continue
            assert len(security) == 1 and list(security[0]) == ["bearer"], path
            assert len(security[0]["bearer"]) == 1, f"{method} {path}"


def test_the_tickets_scope_needs_the_organisations_own_ticket_shop(db):
    from models.errors import BadRequest

    organisation = OrganisationFactory(ticket_shop_url=None)
    with pytest.raises(BadRequest) as refused:
        tokens.create_token(db, organisation=organisation, name="shop", scopes=["tickets"])
    assert refused.value.params[0]["name"] == "scopes"


def test_tokens_are_stored_only_as_a_hash(db, make_token):
    token = make_token("read")
    record = db.query(tokens.ApiToken).filter_by(prefix=token[:17]).one()
    assert record.token_hash == tokens.hash_token(token)
    assert token not in (record.token_hash, record.prefix, record.name)
    assert len(token) >= len("svc_live_") + 32


def test_the_current_stamp_is_read_after_each_request_asked_one_read_for_all_waiting():
    """A request arriving while a read is under way waits for the next read (the one under
    way may have begun before a change the request must see); that read serves every
    request waiting when it begins."""
    reads = []

    async def scenario():
        release = asyncio.Event()

        async def read() -> str:
            reads.append(len(reads))
            await release.wait()
            return f"stamp-{len(reads)}"

        stamps = CurrentStamp(types.SimpleNamespace(value=read, close=lambda: None), 5.0)
        first = asyncio.ensure_future(stamps.read())
        await asyncio.sleep(0.05)  # its read is under way
        later = [asyncio.ensure_future(stamps.read()) for _ in range(3)]
        await asyncio.sleep(0.05)
        assert len(reads) == 1
        release.set()
        return await first, await asyncio.gather(*later)

    first, later = asyncio.run(scenario())
    assert first == "stamp-1"
    assert later == ["stamp-2"] * 3
    assert len(reads) == 2


def test_requests_asking_for_the_stamp_in_the_same_turn_of_the_loop_share_one_read():
    reads = []

    async def read() -> str:
        reads.append(len(reads))
        return f"stamp-{len(reads)}"

    async def scenario():
        stamps = CurrentStamp(types.SimpleNamespace(value=read, close=lambda: None), 5.0)
        together = await asyncio.gather(*(stamps.read() for _ in range(5)))
        after = await stamps.read()
        return together, after

    together, after = asyncio.run(scenario())
    assert together == ["stamp-1"] * 5
    assert after == "stamp-2"  # asked after that read: a read of its own
    assert len(reads) == 2


def test_a_failed_read_of_the_current_stamp_fails_its_waiters_and_the_next_read_runs():
    outcomes = iter([RuntimeError("database away"), "stamp"])

    async def read() -> str:
        outcome = next(outcomes)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    async def scenario():
        stamps = CurrentStamp(types.SimpleNamespace(value=read, close=lambda: None), 5.0)
        with pytest.raises(RuntimeError):
            await stamps.read()
        return await stamps.read()

    assert asyncio.run(scenario()) == "stamp"


def test_requests_waiting_for_a_stamp_the_database_does_not_give_fail_within_the_deadline():
    """A read that does not come back (a database that does not answer) fails every
    request waiting for it once the deadline passed from the first one's arrival; those
    arriving meanwhile wait for the next read, and fail by their own deadline too."""
    reads = []

    async def scenario():
        release = asyncio.Event()

        async def read() -> str:
            reads.append(len(reads))
            await release.wait()
            return "late"

        loop = asyncio.get_running_loop()
        stamps = CurrentStamp(types.SimpleNamespace(value=read, close=lambda: None), 0.2)
        started = loop.time()
        first = asyncio.ensure_future(stamps.read())
        await asyncio.sleep(0.1)  # its read is under way
        later = [asyncio.ensure_future(stamps.read()) for _ in range(3)]  # the next read's
        outcome = (await asyncio.gather(first, return_exceptions=True))[0]
        first_after = loop.time() - started
        later_outcomes = await asyncio.gather(*later, return_exceptions=True)
        later_after = loop.time() - started
        release.set()
        await asyncio.sleep(0.05)
        return outcome, first_after, later_outcomes, later_after

    outcome, first_after, later_outcomes, later_after = asyncio.run(scenario())
    assert isinstance(outcome, TimeoutError)
    assert 0.2 <= first_after < 0.3
    assert all(isinstance(later, TimeoutError) for later in later_outcomes)
    assert 0.3 <= later_after < 1.0
    assert len(reads) == 1  # the next read waits for the database's answer to the first

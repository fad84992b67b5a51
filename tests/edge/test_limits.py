"""Rate limits: 120 a minute aligned to the clock, a daily quota ending at Amsterdam
midnight (daylight-saving days included), 304s free of the quota, failed
authentication limited per address. Time is controlled through the counters' clock.
"""

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from edge.limits import PAGES_PER_MINUTE, Usage, address_key
from models import tokens
from oauth.prefetch import AUTHORIZATIONS_PER_MINUTE
from pages.subscriptions import FEED_PER_MINUTE
from models.tokens import Caller

AMSTERDAM = ZoneInfo("Europe/Amsterdam")


def at(*args) -> float:
    """Unix seconds of a wall-clock moment in Amsterdam."""
    return dt.datetime(*args, tzinfo=AMSTERDAM).timestamp()


@pytest.fixture
def clock(app, monkeypatch):
    """Set the counters' clock: `clock.now = ...`."""

    class Clock:
        now = at(2026, 11, 25, 14, 0, 5)

    monkeypatch.setattr(app.service.usage, "clock", lambda: Clock.now)
    return Clock


def _get(client, token, path="/v1/genres", **headers):
    return client.get(path, headers={"Authorization": f"Bearer {token}", **headers})


def test_request_120_passes_and_121_gets_429_until_the_minute_turns(client, make_token, clock):
    token = make_token("read")
    for count in range(1, 121):
        response = _get(client, token)
        assert response.status_code == 200, count
        assert response.headers["x-ratelimit-remaining"] == str(120 - count)
    clock.now += 20
    refused = _get(client, token)
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limited"
    assert refused.headers["retry-after"] == "35"
    assert refused.headers["x-ratelimit-remaining"] == "0"
    assert refused.headers["x-ratelimit-reset"] == str(int(at(2026, 11, 25, 14, 1)))
    clock.now = at(2026, 11, 25, 14, 1, 0)
    again = _get(client, token)
    assert again.status_code == 200
    assert again.headers["x-ratelimit-remaining"] == "119"


def test_every_token_has_its_own_minute(client, make_token, clock):
    first, second = make_token("read"), make_token("read")
    for _ in range(120):
        _get(client, first)
    assert _get(client, first).status_code == 429
    assert _get(client, second).status_code == 200


@pytest.mark.parametrize(("start", "midnight"), [
    # The day the clocks go back (25 hours) and the day they go forward (23 hours).
    ((2026, 10, 25, 0, 30), (2026, 10, 26, 0, 0)),
    ((2026, 3, 29, 0, 30), (2026, 3, 30, 0, 0)),
    ((2026, 11, 25, 23, 59, 58), (2026, 11, 26, 0, 0)),
])
def test_the_daily_quota_resets_at_amsterdam_midnight(client, make_token, clock, start, midnight):
    token = make_token("read", per_day=3)
    clock.now = at(*start)
    for _ in range(3):
        assert _get(client, token).status_code == 200
    refused = _get(client, token)
    assert refused.status_code == 429
    assert int(refused.headers["retry-after"]) == int(at(*midnight) - at(*start))
    clock.now = at(*midnight) - 1
    assert _get(client, token).status_code == 429
    clock.now = at(*midnight)
    assert _get(client, token).status_code == 200


def test_the_day_is_not_the_utc_day(client, make_token, clock):
    token = make_token("read", per_day=1)
    clock.now = at(2026, 11, 25, 23, 30)  # 22:30 UTC: still the 25th in UTC
    assert _get(client, token).status_code == 200
    clock.now = at(2026, 11, 26, 0, 30)  # 23:30 UTC on the 25th, the 26th in Amsterdam
    assert _get(client, token).status_code == 200


def test_a_raised_daily_limit_applies_at_once(client, db, make_token, clock, app):
    token = make_token("read", per_day=2)
    assert _get(client, token).status_code == 200
    assert _get(client, token).status_code == 200
    assert _get(client, token).status_code == 429
    tokens.set_daily_limit(db, token[:17], 20_000)
    response = _get(client, token, "/v1/me")
    assert response.status_code == 200
    assert response.json()["data"]["rate_limit"]["per_day"] == 20_000
    assert response.json()["data"]["rate_limit"]["used_today"] == 4


def test_the_default_quota_is_10000_and_headers_name_both_windows(client, make_token, clock, app):
    token = make_token("read")
    response = _get(client, token)
    assert response.headers["ratelimit-policy"] == '"minute";q=120;w=60, "day";q=10000;w=86400'
    day_left = int(at(2026, 11, 26) - clock.now)
    assert response.headers["ratelimit"] == f'"minute";r=119;t=55, "day";r=9999;t={day_left}'
    me = _get(client, token, "/v1/me").json()["data"]
    assert me["rate_limit"] == {"per_minute": 120, "remaining_this_minute": 118,
                                "per_day": 10000, "used_today": 2}
    # Fill today's counter up to the quota: the next request is refused for the day.
    app.service.usage.store.add(f"agenda:{{{me['token']['id']}}}:d:2026-11-25", 10000 - 2)
    refused = _get(client, token)
    assert refused.status_code == 429
    assert "daily quota of 10000" in refused.json()["error"]["message"]


def test_a_304_is_free_of_the_daily_quota_but_counts_in_the_minute(client, make_token, clock):
    token = make_token("read", per_day=3)
    tag = _get(client, token).headers["etag"]
    for _ in range(10):
        response = _get(client, token, **{"If-None-Match": tag})
        assert response.status_code == 304
    assert response.headers["x-ratelimit-remaining"] == str(120 - 11)
    assert _get(client, token).status_code == 200
    assert _get(client, token).status_code == 200
    assert _get(client, token).status_code == 429


def test_failed_authentication_is_limited_per_address(client, clock):
    for count in range(30):
        response = client.get("/v1/genres", headers={"Authorization": f"Bearer svc_live_x{count}"})
        assert response.status_code == 401
    refused = client.get("/v1/genres", headers={"Authorization": "Bearer svc_live_guess"})
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limited"
    assert int(refused.headers["retry-after"]) == 55
    clock.now += 60
    assert client.get("/v1/genres").status_code == 401


def test_failed_authentication_at_the_door_is_limited_per_address_once(client, clock):
    # POST /scan is admitted before the framework (edge/door_lane.py); a refusal there goes
    # the full way without being counted a second time.
    clock.now = at(2026, 11, 25, 15, 7, 5)
    for count in range(30):
        response = client.post("/v1/scan", json={"code": "X"},
                               headers={"Authorization": f"Bearer svc_live_x{count}"})
        assert response.status_code == 401, count
    refused = client.post("/v1/scan", json={"code": "X"},
                          headers={"Authorization": "Bearer svc_live_guess"})
    assert refused.status_code == 429


def test_a_429_carries_the_request_id_and_the_limit_headers(client, make_token, clock):
    token = make_token("read")
    for _ in range(120):
        _get(client, token)
    refused = _get(client, token)
    assert refused.headers["x-request-id"] == refused.json()["meta"]["request_id"]
    for header in ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset",
                   "ratelimit", "ratelimit-policy", "retry-after"):
        assert header in refused.headers


def test_the_requests_of_many_tokens_today_are_read_at_once():
    usage = Usage("memory://", per_minute=1000, per_day=10_000)
    busy, idle, capped = (Caller(token_id=name, organisation_id="org", scopes=frozenset(),
                                 per_day=per_day)
                          for name, per_day in (("busy", None), ("idle", None), ("capped", 2)))
    for caller, times in ((busy, 3), (capped, 2)):
        for _ in range(times):
            usage.hit(caller, "/v1/genres")
    assert usage.used_today([busy, idle, capped]) == [3, 0, 2]
    assert usage.used_today([busy]) == [usage.figures(busy).used_today]


@pytest.mark.parametrize("address, key", [
    ("198.51.100.7", "198.51.100.7"), ("::ffff:198.51.100.7", "198.51.100.7"),
    ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"), ("2001:db8:1:2::", "2001:db8:1:2::/64"),
    ("unknown", "unknown"),
])
def test_an_ipv6_address_counts_as_its_64_in_per_address_limits(address, key):
    assert address_key(address) == key


# Every per-address limit (the request a surface counts, its limit per window).
PER_ADDRESS = {
    "tokenless REST": (("GET", "/v1/terms"), 30),
    "failed authentication": (("GET", "/v1/genres", {"Authorization": "Bearer svc_live_x"}), 30),
    "pages and /docs": (("GET", "/docs"), PAGES_PER_MINUTE),
    "calendar feeds": (("GET", "/calendar.ics"), FEED_PER_MINUTE),
    "/oauth/authorize": (("GET", "/oauth/authorize"), AUTHORIZATIONS_PER_MINUTE),
    "registrations": (("POST", "/oauth/register", {"Content-Type": "application/json"}), 30),
}


@pytest.mark.parametrize("surface", PER_ADDRESS)
def test_every_per_address_limit_counts_an_ipv6_64_and_a_mapped_ipv4_as_one_address(
        app, client, clock, surface):
    (method, path, *headers), limit = PER_ADDRESS[surface]

    def status(address: str) -> int:
        # The client address uvicorn puts in the ASGI scope.
        return app.test_client(client=(address, 50000)).request(
            method, path, headers=headers[0] if headers else None,
            content=b"{}" if method == "POST" else None).status_code

    # (an address that uses up the limit, one the same address, one another)
    for first, same, other in (("2001:db8:1:2::1", "2001:db8:1:2:ffff::9", "2001:db8:1:3::1"),
                               ("198.51.100.7", "::ffff:198.51.100.7", "198.51.100.8")):
        for count in range(limit):
            assert status(first) != 429, count
        assert status(same) == 429
        assert status(other) != 429


def _limit_headers(response) -> tuple[str, str, str]:
    return (response.headers["x-ratelimit-limit"], response.headers["x-ratelimit-remaining"],
            response.headers["x-ratelimit-reset"])


def test_rate_limit_headers_on_every_token_authenticated_response(client, make_token, clock):
    # Issue 22: a 403 for a missing scope and every error after admission carry them too.
    token = make_token("read")
    reset = str(int(at(2026, 11, 25, 14, 1)))
    answers = [
        _get(client, token),  # 200
        _get(client, token, "/v1/events/e_missing"),  # 404
        _get(client, token, "/v1/events?limit=0"),  # 400
        _get(client, token, "/v1/events/e1/attendance"),  # 403: no `attendance` scope
        client.post("/v1/scan", json={"code": "ABCD1234"},  # 403 in the door's lane
                    headers={"Authorization": f"Bearer {token}"}),
        _get(client, token, "/v1/events/e1/external-tickets"),  # 403: no `tickets` scope
    ]
    assert [a.status_code for a in answers] == [200, 404, 400, 403, 403, 403]
    for count, answer in enumerate(answers, start=1):
        assert _limit_headers(answer) == ("120", str(120 - count), reset), answer.text
        assert answer.headers["ratelimit-policy"].startswith('"minute";q=120')
    # A request without a valid token is not token-authenticated: no limit headers.
    assert "x-ratelimit-limit" not in client.get("/v1/genres").headers


def test_a_429_from_the_day_window_describes_the_day(client, make_token, clock):
    token = make_token("read", per_day=2)
    midnight = int(at(2026, 11, 26))
    for _ in range(2):
        assert _get(client, token).status_code == 200
    refused = _get(client, token)
    assert refused.status_code == 429
    assert _limit_headers(refused) == ("2", "0", str(midnight))
    wait = midnight - int(clock.now)
    assert refused.headers["retry-after"] == str(wait)
    assert refused.json()["error"]["details"] == {
        "window": "day", "limit": 2, "reset": midnight, "retry_after": wait}
    # The minute's refusal describes the minute.
    other = make_token("read")
    for _ in range(120):
        _get(client, other)
    minute = _get(client, other)
    assert _limit_headers(minute) == ("120", "0", str(int(at(2026, 11, 25, 14, 1))))
    assert minute.json()["error"]["details"] == {
        "window": "minute", "limit": 120, "reset": int(at(2026, 11, 25, 14, 1)),
        "retry_after": 55}


@pytest.mark.parametrize("path", ["/v1/terms", "/v1/openapi.json"])
def test_anonymous_limits_everywhere_the_readme_promises_them(client, clock, path):
    # Issue 22: the operations that need no token count as requests without a valid token,
    # 30 a minute per address, with failed authentications in the same count.
    clock.now = at(2026, 11, 25, 14, 0, 20)
    for count in range(1, 21):
        assert client.get(path).status_code == 200, count
    for count in range(10):
        assert client.get("/v1/genres", headers={
            "Authorization": f"Bearer svc_live_x{count}"}).status_code == 401
    refused = client.get(path)
    assert refused.status_code == 429
    body = refused.json()
    assert body["error"]["code"] == "rate_limited"
    assert body["meta"]["request_id"] == refused.headers["x-request-id"]
    assert refused.headers["retry-after"] == "40"
    assert body["error"]["details"] == {"window": "address", "limit": 30,
                                        "reset": int(at(2026, 11, 25, 14, 1)), "retry_after": 40}
    clock.now = at(2026, 11, 25, 14, 1)
    assert client.get(path).status_code == 200

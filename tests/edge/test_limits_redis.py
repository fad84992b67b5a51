"""Limits held in Redis: exact across worker processes, and a Redis outage fails open.

These tests start real processes: `agenda serve --workers 4` against the real Redis,
and a private redis-server that is stopped and started again mid-test.
"""

import asyncio
import logging
import os
import shutil
import subprocess
import time

import httpx
import pytest
import redis

from agenda.app import create_app
from edge.limits import Usage
from models import organisations, tokens
from models.errors import RateLimited
from models.tokens import Caller
from tests.servers import agenda_serve, committed, free_port



def _redis_answers(url: str) -> bool:
    try:
        return redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except redis.RedisError:
        return False


def _committed_token(database_url: str, **limits) -> str:
    """A token committed to the run's database, visible to other processes."""
    with committed(database_url) as session:
        owner = organisations.create_organisation(session, name=f"Limits {os.urandom(4).hex()}")
        return tokens.create_token(session, organisation=owner, name="limits",
                                   scopes=["read"], **limits)[1]


def _fresh_minute(margin: int = 25) -> None:
    """Sleep into the next minute when this one has fewer than `margin` seconds left."""
    second = time.time() % 60
    if second > 60 - margin:
        time.sleep(60 - second + 0.5)


def test_four_workers_let_exactly_120_of_300_concurrent_requests_through(
        database_url, redis_url, tmp_path):
    token = _committed_token(database_url)
    env = {"AGENDA_DATABASE_URL": database_url, "AGENDA_SECRET_KEY": "limits",
           "AGENDA_RATELIMIT_STORAGE": redis_url}
    with agenda_serve(env, workers=4) as base:
        _fresh_minute()

        async def fire() -> list[int]:
            limits = httpx.Limits(max_connections=100)
            async with httpx.AsyncClient(limits=limits, timeout=30) as client:
                responses = await asyncio.gather(*[
                    client.get(f"{base}/v1/genres", headers={"Authorization": f"Bearer {token}"})
                    for _ in range(300)])
            return [response.status_code for response in responses]

        statuses = asyncio.run(fire())
    assert statuses.count(200) == 120
    assert statuses.count(429) == 180


@pytest.fixture
def private_redis(tmp_path):
    """A redis-server of this test's own, that the test can stop and start."""
    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("redis-server is not installed")
        pytest.skip("redis-server is not installed")
    port = free_port()

    class Server:
        url = f"redis://127.0.0.1:{port}/0"
        process = None

        def start(self):
            self.process = subprocess.Popen(
                [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", str(tmp_path)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(100):
                if _redis_answers(self.url):
                    return
                time.sleep(0.05)
            raise AssertionError("redis-server did not start")

        def stop(self):
            self.process.terminate()
            self.process.wait(timeout=10)

    server = Server()
    server.start()
    yield server
    if server.process.poll() is None:
        server.stop()


def test_a_redis_outage_fails_open_and_counting_resumes_when_it_returns(
        database_url, private_redis, caplog):
    _fresh_minute(margin=15)
    app = create_app({"database_url": database_url, "ratelimit_storage": private_redis.url,
                      "secret_key": "limits"})
    token = _committed_token(database_url)
    headers = {"Authorization": f"Bearer {token}"}
    try:
        with app.test_client() as client:
            assert client.get("/v1/genres", headers=headers).headers["x-ratelimit-remaining"] == "119"
            assert client.get("/v1/genres", headers=headers).headers["x-ratelimit-remaining"] == "118"
            private_redis.stop()
            with caplog.at_level(logging.WARNING, logger="agenda.usage"):
                during = [client.get("/v1/genres", headers=headers) for _ in range(3)]
            assert [r.status_code for r in during] == [200, 200, 200]
            assert "rate-limit store unreachable" in caplog.text
            private_redis.start()
            after = [client.get("/v1/genres", headers=headers) for _ in range(3)]
    finally:
        app.service.close()
    assert all(r.status_code == 200 for r in after)
    # The restarted Redis kept nothing: counting starts again from one.
    assert after[-1].headers["x-ratelimit-remaining"] in ("118", "117")


def test_a_refund_takes_one_off_todays_count_and_never_creates_one(private_redis):
    """The 304's refund, from a Flask thread (`refund_day`) and from the event loop
    (`refund_day_async`, the response cache's): one round trip each, a script in Redis."""
    usage = Usage(private_redis.url, per_minute=120, per_day=10)
    caller = Caller(token_id="tok_refund", organisation_id="org", scopes=frozenset({"read"}),
                    per_day=None)
    stranger = Caller(token_id="tok_stranger", organisation_id="org",
                      scopes=frozenset({"read"}), per_day=None)

    async def on_the_loop():
        await usage.open()
        try:
            for _ in range(3):
                await usage.hit_async(caller, "/v1/genres")
            await usage.refund_day_async(caller)
            await usage.refund_day_async(stranger)
        finally:
            await usage.close()

    asyncio.run(on_the_loop())
    assert usage.figures(caller).used_today == 2
    usage.refund_day(caller)
    usage.refund_day(stranger)
    assert usage.figures(caller).used_today == 1
    keys = redis.Redis.from_url(private_redis.url).keys("agenda:{tok_stranger}*")
    assert keys == [], "a refund never creates a counter"


@pytest.mark.parametrize("store", ["memory", "redis"])
def test_a_backoff_admits_attempts_made_at_once_exactly_and_doubles_its_wait(
        store, private_redis):
    """Sign-ins per account (oauth/views.py): fifty attempts at once from many threads,
    five free and the sixth admitted, the rest told to wait; then the doubling waits."""
    from concurrent.futures import ThreadPoolExecutor

    moment = [1_000_000]
    usage = Usage(private_redis.url if store == "redis" else "memory://", per_minute=120,
                  per_day=10, clock=lambda: moment[0])
    backoff = {"free": 5, "longest": 300, "forget_after": 3600}
    with ThreadPoolExecutor(max_workers=16) as pool:
        waits = list(pool.map(lambda _: usage.backoff("signin-account:x", **backoff),
                              range(50)))
    assert waits.count(None) == 6 and set(waits) == {None, 1}
    seen = []
    for _ in range(10):
        moment[0] += seen[-1] if seen else 1
        assert usage.backoff("signin-account:x", **backoff) is None
        seen.append(usage.backoff("signin-account:x", **backoff))
    assert seen == [2, 4, 8, 16, 32, 64, 128, 256, 300, 300]
    usage.forgive("signin-account:x")
    assert [usage.backoff("signin-account:x", **backoff) for _ in range(6)] == [None] * 6
    if store == "redis":
        ttl = redis.Redis.from_url(private_redis.url).ttl("agenda:{throttle}:backoff:signin-account:x")
        assert 3590 < ttl <= 3600


def test_anonymous_limits_everywhere_the_readme_promises_them_count_in_redis(private_redis):
    """Requests without a token counted from the event loop (the outermost layer's) and from
    a thread (a failed authentication's) fall in one window of the address, in Redis."""
    usage = Usage(private_redis.url, per_minute=120, per_day=10)
    moment = [1_795_000_025.0]  # 5 seconds into a clock minute
    usage.clock = lambda: moment[0]

    async def on_the_loop(times: int):
        await usage.open()
        try:
            for _ in range(times):
                await usage.refuse_unauthenticated_async("192.0.2.7")
        finally:
            await usage.close()

    asyncio.run(on_the_loop(20))
    for _ in range(10):
        usage.refuse_unauthenticated("192.0.2.7")
    with pytest.raises(RateLimited) as refused:
        asyncio.run(on_the_loop(1))
    assert refused.value.details["retry_after"] == 55
    usage.refuse_unauthenticated("192.0.2.8")  # another address has its own window
    moment[0] += 55
    asyncio.run(on_the_loop(1))


def test_counts_asked_at_once_from_the_event_loop_share_round_trips_and_count_exactly(
        private_redis, monkeypatch, caplog):
    """A worker under load counts the requests waiting together, in a few round trips to
    Redis: each request is still counted once, sees its own count, and is refused on its
    own; a script Redis forgot is loaded again; Redis away fails every one of them open."""
    from edge import redis_counters

    trips = []
    pipelined = redis_counters._Batched._pipelined

    async def counted_trip(self, batch):
        trips.append(len(batch))
        return await pipelined(self, batch)

    monkeypatch.setattr(redis_counters._Batched, "_pipelined", counted_trip)
    moment = [1_795_000_025.0]  # 5 seconds into a clock minute
    usage = Usage(private_redis.url, per_minute=50, per_day=10**6, clock=lambda: moment[0])
    caller = Caller(token_id="tok_batched", organisation_id="org", scopes=frozenset({"read"}),
                    per_day=None)

    async def at_once(count: int):
        await usage.open()
        try:
            return await asyncio.gather(*[usage.hit_async(caller, "/v1/genres")
                                          for _ in range(count)], return_exceptions=True)
        finally:
            await usage.close()

    first = asyncio.run(at_once(80))
    admitted = [r for r in first if not isinstance(r, Exception)]
    assert sorted(f.remaining_this_minute for f in admitted) == list(range(50))
    assert sum(isinstance(r, RateLimited) for r in first) == 30
    # One round trip for all 80, then one that loads the script (this Redis did not know it
    # yet) and sends the 80 again.
    assert trips == [80, 81]
    moment[0] += 60
    trips.clear()
    second = asyncio.run(at_once(20))
    assert sorted(f.remaining_this_minute for f in second) == list(range(30, 50))
    assert trips == [20]
    # Redis restarted or flushed: its scripts are gone; counting goes on, nothing twice.
    redis.Redis.from_url(private_redis.url).script_flush()
    moment[0] += 60
    trips.clear()
    third = asyncio.run(at_once(20))
    assert sorted(f.remaining_this_minute for f in third) == list(range(30, 50))
    assert trips == [20, 21]
    # The day counts what each minute admitted, the 30 refused not.
    assert usage.figures(caller).used_today == 90
    private_redis.stop()
    with caplog.at_level(logging.WARNING, logger="agenda.usage"):
        away = asyncio.run(at_once(10))
    assert all(f.remaining_this_minute == 50 for f in away)
    assert "rate-limit store unreachable" in caplog.text


def test_counts_waiting_on_a_round_trip_that_is_cancelled_do_not_wait_forever(private_redis):
    """The server stopping cancels the task sending a batch: the requests waiting for it
    end with it rather than wait for an answer that will not come."""
    usage = Usage(private_redis.url, per_minute=120, per_day=10**6)
    caller = Caller(token_id="tok_stopping", organisation_id="org", scopes=frozenset({"read"}),
                    per_day=None)

    async def stopping():
        await usage.open()
        try:
            asks = [asyncio.ensure_future(usage.hit_async(caller, "/v1/genres"))
                    for _ in range(5)]
            for _ in range(3):  # the asks wait; the batch is on its way to Redis
                await asyncio.sleep(0)
            usage.store._batched._sending.cancel()
            return await asyncio.wait_for(asyncio.gather(*asks, return_exceptions=True), 5)
        finally:
            await usage.close()

    ended = asyncio.run(stopping())
    assert len(ended) == 5
    assert all(isinstance(e, asyncio.CancelledError) for e in ended), ended


def test_the_event_loops_connection_to_redis_is_opened_again_after_redis_restarts(
        private_redis, caplog):
    """The commands of the event loop share one connection (edge/redis_counters.py): Redis
    restarted under it, the round trip that finds it closed fails open, and the next opens
    a new one and counts again, answers shared in Redis too."""
    usage = Usage(private_redis.url, per_minute=120, per_day=10**6)
    caller = Caller(token_id="tok_restarted", organisation_id="org", scopes=frozenset({"read"}),
                    per_day=None)

    async def restarted():
        await usage.open()
        try:
            before = await usage.hit_async(caller, "/v1/genres")
            await usage.store.command("SET", "agenda:test:shared", b"kept", "EX", 60)
            private_redis.stop()
            private_redis.start()
            with caplog.at_level(logging.WARNING, logger="agenda.usage"):
                during = await usage.hit_async(caller, "/v1/genres")
            after = [await usage.hit_async(caller, "/v1/genres") for _ in range(2)]
            await usage.store.command("SET", "agenda:test:shared", b"again", "EX", 60)
            return before, during, after, await usage.store.command("GET", "agenda:test:shared")
        finally:
            await usage.close()

    before, during, after, shared = asyncio.run(restarted())
    assert before.remaining_this_minute == 119
    # The round trip on the closed connection failed open, and said so.
    assert during.remaining_this_minute == 120
    assert "rate-limit store unreachable" in caplog.text
    # The restarted Redis kept nothing: counting starts again from one.
    assert [f.remaining_this_minute for f in after] == [119, 118]
    assert shared == b"again"

"""A worker loads the libraries of what it serves, not of all it could serve: redis-py only
when it counts in Redis, icalendar at its first calendar file (the MCP SDK at its first MCP
request: tests/mcp_server/test_loading.py). Each is megabytes of every worker."""

from __future__ import annotations

import json

import pytest

from tests.servers import fresh_interpreter

WORKER = """
import json, sys
import httpx
from tests.servers import served_with_a_token

seen = {}
with served_with_a_token("loaded", ratelimit_storage=sys.argv[1]) as (app, site, token), \\
        httpx.Client(base_url=site, timeout=30) as client:
    listed = client.get("/v1/events", headers={"Authorization": f"Bearer {token}"})
    seen["listed"] = [listed.status_code, {name: name in sys.modules
                                           for name in ("redis", "icalendar")}]
    feed = client.get("/calendar.ics")
    seen["feed"] = [feed.status_code, feed.text[:15], "icalendar" in sys.modules]
print(json.dumps(seen))
"""


@pytest.mark.parametrize("in_redis", [False, True])
def test_a_worker_loads_redis_only_to_count_there_and_icalendar_at_its_first_file(
        in_redis, request):
    storage = request.getfixturevalue("redis_url") if in_redis else "memory://"
    seen = json.loads(fresh_interpreter(WORKER, storage))
    assert seen["listed"] == [200, {"redis": in_redis, "icalendar": False}]
    assert seen["feed"] == [200, "BEGIN:VCALENDAR", True]

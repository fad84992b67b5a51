"""The server's entry point (agenda/asgi.py): its log, written in batches, keeps every line."""

import datetime as dt
import re
import uuid
from pathlib import Path

import httpx
import pytest

from tests.servers import agenda_serve, agenda_server


def test_every_request_is_in_the_log_when_the_server_stops(database_url, tmp_path):
    log = tmp_path / "agenda.log"
    ids = [str(uuid.uuid4()) for _ in range(25)]
    # Nothing would be written before the server stops, but for that stop.
    env = {"AGENDA_DATABASE_URL": database_url, "AGENDA_LOG_FLUSH_SECONDS": "3600"}
    with log.open("w") as written, agenda_serve(env, workers=2, log=written) as base:
        for request_id in ids:
            # A connection each, so that both workers answer.
            httpx.get(f"{base}/healthz", headers={"X-Request-Id": request_id,
                                                   "Connection": "close"})
    lines = {line.rpartition("request_id=")[2]: line
             for line in log.read_text().splitlines() if "agenda.access" in line}
    assert set(ids) <= set(lines)
    assert all(" GET /healthz 200 " in lines[request_id] for request_id in ids)
    # Each line begins with its local time to the millisecond, as logging's own format.
    line = re.compile(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),\d{3} INFO agenda\.access "
                      r"GET /healthz 200 \d+\.\dms request_id=[-0-9a-f]{36}")
    times = [dt.datetime.fromisoformat(line.fullmatch(lines[request_id]).group(1))
             for request_id in ids]
    assert times == sorted(times)
    assert abs(times[-1] - dt.datetime.now()) < dt.timedelta(minutes=5)


# An application answering every request, as another `agenda` package's would.
STRAY_APPLICATION = """
async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": b'{"status": "stray"}'})
"""


def test_the_server_serves_its_own_package_from_whatever_directory_it_is_started(
        database_url, tmp_path):
    """A directory holding another `agenda` package (an older checkout, say) is not where
    the workers find their application."""
    (tmp_path / "agenda").mkdir()
    (tmp_path / "agenda" / "__init__.py").write_text("")
    (tmp_path / "agenda" / "asgi.py").write_text(STRAY_APPLICATION)
    with agenda_serve({"AGENDA_DATABASE_URL": database_url}, workers=1, cwd=tmp_path) as base:
        answer = httpx.get(f"{base}/healthz")
    assert answer.json() == {"status": "ok"}


def _session_environments(leader: int) -> list[dict[str, str]]:
    """The environments of the processes in the session `leader` leads (a server started
    by `agenda_server`: uvicorn's process and its children)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            raw = (entry / "environ").read_bytes()
        except OSError:  # not a process, gone meanwhile or another user's
            continue
        # stat(5): the fields after the command's closing parenthesis; the 4th is the session.
        if int(stat[stat.rindex(")") + 2:].split()[3]) != leader:
            continue
        found.append(dict(item.split("=", 1) for item in raw.decode(errors="replace")
                          .split("\0") if "=" in item))
    return found


@pytest.mark.parametrize(("given", "expected"), [(None, "1"), ("4", "4")])
def test_the_workers_allocate_from_one_malloc_arena_unless_the_operator_says_otherwise(
        database_url, monkeypatch, given, expected):
    """With an arena a thread (glibc's default), a worker's catalogue threads each kept ~7 MB
    of freed memory that no other thread's allocations could use (agenda/cli.py)."""
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    env = {"AGENDA_DATABASE_URL": database_url} | ({"MALLOC_ARENA_MAX": given} if given else {})
    with agenda_server(env, workers=2) as (_base, server):
        environments = _session_environments(server.pid)
    # uvicorn's process, its two workers and multiprocessing's resource tracker.
    assert len(environments) >= 3
    assert {environment.get("MALLOC_ARENA_MAX") for environment in environments} == {expected}

"""The response cache across processes: `agenda serve` with two workers sharing Redis (or,
counting in memory, a file of the host), while `agenda import` and `agenda demo-data` write
the catalogue from processes of their own, and `agenda token revoke` revokes the token every
worker knows (adapters/watch.py).
"""

import os
import re
import subprocess
import threading
import time

import httpx
import pytest
import redis

from sqlalchemy import text

from adapters import watch as watch_module
from agenda.app import create_app
from edge import openapi
from edge.cache import Keys, Shared
from edge.limits import Usage
from models import organisations, tokens
from tests.edge.test_cache import in_host_file
from tests.servers import AGENDA, agenda_serve, committed, drop_database, migrated_database

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "example-import.jsonl")


@pytest.fixture
def database(worker_id):
    """A migrated database of this test's own, with one organisation and a read token."""
    url = migrated_database(f"{worker_id}_cache")
    with committed(url) as session:
        owner = organisations.create_organisation(session, name="Cache")
        token = tokens.create_token(session, organisation=owner, name="cache", scopes=["read"])[1]
    yield url, token
    drop_database(url)


def _agenda(url: str, *args: str) -> None:
    subprocess.run([AGENDA, *args], env={**os.environ, "AGENDA_DATABASE_URL": url}, check=True,
                   capture_output=True)


def _shared_key(base: str, name: str) -> str:
    """The key the servers of these tests (secret key "cache", site `base`) share `name`
    under."""
    return Shared("", Shared.namespace_of("cache", openapi.load_document(f"{base}/v1"))).key(
        name)


def _left_today(answer: httpx.Response) -> int:
    """The day's remaining requests in an answer's `RateLimit` header."""
    return int(re.search(r'"day";r=(\d+)', answer.headers["ratelimit"]).group(1))


def _revoke(url: str, token: str) -> None:
    _agenda(url, "token", "revoke", token[:len(tokens.LIVE_PREFIX) + tokens.VISIBLE_CHARS])


def test_writes_of_other_processes_are_visible_at_once_on_every_worker(database, redis_url):
    url, token = database
    env = {"AGENDA_DATABASE_URL": url, "AGENDA_SECRET_KEY": "cache",
           "AGENDA_RATELIMIT_STORAGE": redis_url}
    # A connection each, so that both workers answer.
    headers = {"Authorization": f"Bearer {token}", "Connection": "close"}
    with agenda_serve(env, workers=2) as base, httpx.Client(base_url=base, headers=headers) as web:
        empty = [web.get("/v1/venues?limit=50") for _ in range(6)]
        assert {answer.headers["etag"] for answer in empty} == {empty[0].headers["etag"]}
        assert empty[0].json()["data"] == []
        # The answer is in Redis for the other worker and other hosts, under its handler's
        # arguments: another spelling of them is served what was kept.
        assert redis.Redis.from_url(redis_url).exists(
            _shared_key(base, Keys.of("/v1/venues", {"limit": 50})))
        spelled = [web.get("/v1/venues?limit=0050") for _ in range(4)]
        assert {answer.headers["x-cache"] for answer in spelled} == {"hit"}

        _agenda(url, "import", EXAMPLE)
        imported = [web.get("/v1/venues?limit=50") for _ in range(6)]
        assert {len(answer.json()["data"]) for answer in imported} == {3}
        assert empty[0].headers["etag"] not in {answer.headers["etag"] for answer in imported}

        before = [web.get("/v1/events?limit=5").json()["data"] for _ in range(4)]
        _agenda(url, "demo-data", "--events", "100", "--seed", "3")
        after = [web.get("/v1/events?limit=5").json()["data"] for _ in range(4)]
        # A 304 costs no daily quota here either (counted from the event loop, refunded).
        first = web.get("/v1/events?limit=5")
        assert web.get("/v1/events?limit=5", headers={
            "If-None-Match": first.headers["etag"]}).status_code == 304
        then = web.get("/v1/events?limit=5")
        assert _left_today(then) == _left_today(first) - 1

        _revoke(url, token)
        revoked = [web.get("/v1/venues?limit=50") for _ in range(6)]
    assert all(answer == before[0] for answer in before)
    assert all(answer == after[0] for answer in after)
    assert len(after[0]) == 5
    assert {event["id"] for event in after[0]} - {event["id"] for event in before[0]}
    assert {answer.status_code for answer in revoked} == {401}


def _until_both_workers_answer(web: httpx.Client, path: str) -> list[httpx.Response]:
    """`path` asked (a connection each) until both workers of a server counting in memory
    have answered: each counts on its own, so a count seen twice in one minute is both
    (the second may still be starting: up to a minute on a busy machine)."""
    answers, remaining = [], []
    deadline = time.monotonic() + 60
    while len(remaining) == len(set(remaining)) and time.monotonic() < deadline:
        answers.append(web.get(path))
        remaining.append((answers[-1].headers["x-ratelimit-remaining"],
                          answers[-1].headers["x-ratelimit-reset"]))
        time.sleep(0.05)
    assert len(remaining) > len(set(remaining)), "one worker answered every request"
    return answers


def test_requests_counted_in_each_worker_see_changes_at_once_too(database):
    """Limits in memory: a token each worker knows is admitted without leaving the worker."""
    url, token = database
    env = {"AGENDA_DATABASE_URL": url, "AGENDA_SECRET_KEY": "cache",
           "AGENDA_RATELIMIT_STORAGE": "memory://", "AGENDA_PER_MINUTE": "100000"}
    # A connection each, so that both workers answer.
    headers = {"Authorization": f"Bearer {token}", "Connection": "close"}
    with agenda_serve(env, workers=2) as base, httpx.Client(base_url=base, headers=headers) as web:
        assert {tuple(answer.json()["data"])
                for answer in _until_both_workers_answer(web, "/v1/venues?limit=50")} == {()}
        _agenda(url, "import", EXAMPLE)
        imported = [web.get("/v1/venues?limit=50") for _ in range(10)]
        _revoke(url, token)
        revoked = [web.get("/v1/venues?limit=50") for _ in range(10)]
    assert {len(answer.json()["data"]) for answer in imported} == {3}
    assert {answer.status_code for answer in revoked} == {401}


def test_workers_counting_in_memory_serve_each_others_answers_from_the_hosts_file(
        database, tmp_path):
    """Each worker would otherwise build every answer once for itself."""
    url, token = database
    file = tmp_path / "answers.sqlite3"
    file.write_bytes(b"a file of an earlier run")  # started empty
    env = {"AGENDA_DATABASE_URL": url, "AGENDA_SECRET_KEY": "cache",
           "AGENDA_RATELIMIT_STORAGE": "memory://", "AGENDA_PER_MINUTE": "100000",
           "AGENDA_HOST_CACHE_PATH": str(file)}
    headers = {"Authorization": f"Bearer {token}", "Connection": "close"}
    with agenda_serve(env, workers=2) as base, httpx.Client(base_url=base, headers=headers) as web:
        first = web.get("/v1/venues?limit=33")
        assert in_host_file(file, _shared_key(base, Keys.of("/v1/venues", {"limit": 33})))
        served = _until_both_workers_answer(web, "/v1/venues?limit=33")
    assert first.headers["x-cache"] == "miss"
    assert {answer.headers["x-cache"] for answer in served} == {"hit"}
    assert {answer.headers["etag"] for answer in served} == {first.headers["etag"]}


def _sql(url: str, statement: str, **params) -> None:
    with committed(url) as session:
        session.execute(text(statement), params)


def test_a_change_by_any_writer_is_visible_at_once_in_lists_and_detail_pages_on_two_workers(
        database, tmp_path):
    """Plain SQL on an event's venue and genres (what its summary embeds), an import and a
    command: the very next list and detail answers of both workers show it, though each
    worker kept those answers and the summaries inside them."""
    url, token = database
    _agenda(url, "import", EXAMPLE)
    env = {"AGENDA_DATABASE_URL": url, "AGENDA_SECRET_KEY": "cache",
           "AGENDA_RATELIMIT_STORAGE": "memory://", "AGENDA_PER_MINUTE": "100000"}
    headers = {"Authorization": f"Bearer {token}", "Connection": "close"}
    event_id = "nw-2027-01-16"
    pages = ("/v1/events?from=2027-01-01&limit=100", f"/v1/events/{event_id}",
             "/v1/events?city=Amsterdam&from=2027-01-01", "/v1/organisations?limit=100")

    def answers(web) -> list[dict]:
        """Each page twice per worker (a connection each: either worker may answer)."""
        return [web.get(page).json() for page in pages for _ in range(4)]

    def event_in(answer: dict) -> dict | None:
        data = answer["data"]
        found = [item for item in (data if isinstance(data, list) else [data])
                 if item.get("id") == event_id]
        return found[0] if found else None

    with agenda_serve(env, workers=2) as base, httpx.Client(base_url=base, headers=headers) as web:
        before = answers(web)
        assert {event_in(answer)["venue"]["name"] for answer in before[:12]} == {"Hangar Noord"}
        # Kept by the workers (which worker answers is the kernel's choice): what follows
        # must not be served from what they keep.
        assert {web.get(page).headers["x-cache"] for page in pages for _ in range(4)} >= {"hit"}

        _sql(url, "UPDATE venues SET name = 'Hangar Zuid' WHERE id = 'hangar-noord'")
        renamed = answers(web)
        _sql(url, "DELETE FROM event_genres WHERE event_id = :id AND genre = 'Hard Techno'",
             id=event_id)
        regenred = answers(web)
        changed = tmp_path / "changed.jsonl"
        with open(EXAMPLE, encoding="utf-8") as example:
            changed.write_text("".join(
                line.replace("Nachtwerk: Mira Voss all night long", "Nachtwerk: Mira Voss b2b Ilse")
                for line in example if event_id in line))
        _agenda(url, "import", str(changed))
        imported = answers(web)
        _agenda(url, "organisation", "create", "Made By The Command")
        created = answers(web)
    assert {event_in(a)["venue"]["name"] for a in renamed[:12]} == {"Hangar Zuid"}
    assert {tuple(event_in(a)["genres"]) for a in regenred[:12]} == {("Techno",)}
    assert {event_in(a)["title"] for a in imported[:12]} == {"Nachtwerk: Mira Voss b2b Ilse"}
    assert {event_in(a)["venue"]["name"] for a in imported[:12]} == {"Hangar Zuid"}
    names = [{o["name"] for o in answer["data"]} for answer in created[12:]]
    assert all("Made By The Command" in found for found in names)
    assert all("Made By The Command" not in {o["name"] for o in a["data"]} for a in imported[12:])


@pytest.mark.parametrize("admitted", ["on the event loop", "on an admission thread"])
def test_a_change_whose_notification_has_not_arrived_is_still_in_the_next_answer(
        database, monkeypatch, admitted):
    """A worker serves kept answers under the stamp it knows; a change committed elsewhere
    reaches it by a notification, a moment later (longer on a busy machine). Here the
    notification never arrives: the next answer still shows the change, since a kept
    answer is served only once the database's stamp confirms it, whether the known token
    was admitted on the event loop or on a thread (counts that cannot be made on the loop;
    a token learnt by another request while this one waited for a thread)."""
    url, token = database
    if not url.startswith("postgresql"):
        pytest.skip("SQLite has no notifications: every request reads the stamp")
    if admitted == "on an admission thread":
        monkeypatch.setattr(Usage, "counts_on_loop", property(lambda _usage: False))
    _agenda(url, "import", EXAMPLE)
    hold = threading.Event()

    def nothing_arrives(socket, timeout):
        if threading.current_thread().name == "watch":
            hold.wait()  # the watch's thread never gets to look
        return False

    monkeypatch.setattr(watch_module, "_readable", nothing_arrives)
    app = create_app({"database_url": url, "secret_key": "cache", "listen": True,
                      "ratelimit_storage": "memory://", "per_minute": 100000})
    page, headers = "/v1/events/nw-2027-01-16", {"Authorization": f"Bearer {token}"}
    try:
        assert app.service.watch.wait_listening(10)
        with app.test_client() as web:
            for _ in range(3):  # read with the token, then known: kept and served again
                served = web.get(page, headers=headers)
            assert served.headers["x-cache"] == "hit"
            assert served.json()["data"]["venue"]["name"] == "Hangar Noord"
            assert tokens.known(app.service.watch, token) is not None
            _sql(url, "UPDATE venues SET name = 'Hangar Zuid' WHERE id = 'hangar-noord'")
            changed = web.get(page, headers=headers)
            assert changed.json()["data"]["venue"]["name"] == "Hangar Zuid"
            assert changed.headers["x-cache"] == "miss"
            # Still unheard of by the watch: answered with the change again.
            assert web.get(page, headers=headers).json()["data"]["venue"]["name"] == \
                "Hangar Zuid"
    finally:
        hold.set()
        app.service.close()


def test_a_list_a_change_left_as_it_was_is_checked_once_for_both_workers(database, redis_url):
    """PostgreSQL (row versions): after a change elsewhere, one worker checks the kept list
    and shares it renewed, the other is served that; a change to what it shows is in the
    very next answer of both."""
    url, token = database
    if not url.startswith("postgresql"):
        pytest.skip("row versions are PostgreSQL's: on SQLite a stale answer is built again")
    _agenda(url, "import", EXAMPLE)
    env = {"AGENDA_DATABASE_URL": url, "AGENDA_SECRET_KEY": "cache",
           "AGENDA_RATELIMIT_STORAGE": redis_url, "AGENDA_PER_MINUTE": "100000"}
    headers = {"Authorization": f"Bearer {token}", "Connection": "close"}
    gent = "/v1/events?city=Gent&from=2026-12-01&limit=7"
    with agenda_serve(env, workers=2) as base, httpx.Client(base_url=base, headers=headers) as web:
        kept = [web.get(gent) for _ in range(6)]
        _sql(url, "UPDATE venues SET name = 'Hangar Zuid' WHERE id = 'hangar-noord'")
        checked = [web.get(gent) for _ in range(6)]
        _sql(url, "UPDATE venues SET name = 'De Kade' WHERE id = 'de-kaai'")
        changed = [web.get(gent) for _ in range(6)]
    assert [event["id"] for event in kept[0].json()["data"]] == ["sk-2026-12-19",
                                                                  "sk-2027-02-06"]
    assert [answer.headers["x-cache"] for answer in checked] == ["revalidated"] + ["hit"] * 5
    assert {answer.headers["etag"] for answer in kept + checked} == {kept[0].headers["etag"]}
    assert changed[0].headers["x-cache"] == "miss"
    assert {event["venue"]["name"] for answer in changed for event in answer.json()["data"]} == {
        "De Kade"}

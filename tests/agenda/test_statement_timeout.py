"""Issue 22, statement timeout: a database that freezes costs a request and /healthz at most
their deadline, then a 503 with Retry-After, and the service recovers when it thaws.

Served for real (uvicorn in a thread) on a database of the test's own. PostgreSQL is frozen
two ways: a second connection holding ACCESS EXCLUSIVE locks (the server's
`statement_timeout` and `lock_timeout` end the waiting statements), and a relay between the
service and PostgreSQL that stops relaying (a stopped server or a host gone from the
network: the connections stay open and nothing answers; the client's own deadlines end the
waits). On both databases, another writer holding the write lock.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import time

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from agenda.app import create_app
from agenda.health import HEALTH_SECONDS
from models import organisations, tokens
from models.db import make_engine
from tests.servers import (FreezingRelay, committed, drop_database, migrated_database,
                           served_in_thread)

SQLITE = ("SQLite has no server to freeze, and in WAL mode a lock held by another "
          "connection never holds up a read (nor /healthz): shown on SQLite are a write "
          "held up by another writer (below) and a long statement (tests/models/test_db.py)")
DEADLINE = 1.0
# What a deadline may be late by on a machine shared with other test runs.
MARGIN = 2.0


@contextlib.contextmanager
def _served(url: str):
    """The service on `url` with a deadline of `DEADLINE`, served; yields its site."""
    made = []

    def app_for(site: str):
        made.append(create_app({"database_url": url, "site_url": site, "listen": False,
                                "statement_timeout_ms": int(DEADLINE * 1000),
                                "secret_key": "test-secret"}))
        return made[0]

    try:
        with served_in_thread(app_for) as (_app, site):
            yield site
    finally:
        for app in made:
            app.service.close()


@pytest.fixture
def token(committing):
    url, _ = committing
    with committed(url) as session:
        owner = organisations.create_organisation(session, name="Frozen")
        return tokens.create_token(session, organisation=owner, name="frozen",
                                   scopes=["read"])[1]


def _timed(site: str, path: str, token: str | None = None) -> tuple[httpx.Response, float]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    started = time.monotonic()
    response = httpx.get(site + path, headers=headers, timeout=30)
    return response, time.monotonic() - started


def _unavailable(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "service_unavailable"
    assert response.json()["meta"]["request_id"] == response.headers["x-request-id"]
    assert int(response.headers["retry-after"]) > 0


def test_statement_timeout_a_locked_table_is_a_503_within_the_deadline(committing, token):
    url, engine = committing
    with _served(url) as site, engine.connect() as locker:
        assert _timed(site, "/v1/genres", token)[0].status_code == 200
        locker.execute(text("LOCK TABLE genres IN ACCESS EXCLUSIVE MODE"))
        # The handler's query waits for the lock until the server ends it.
        response, seconds = _timed(site, "/v1/genres?limit=5", token)
        _unavailable(response)
        assert DEADLINE <= seconds < DEADLINE + MARGIN
        # The server ended the statement: nothing of the service still waits for a lock.
        with engine.connect() as probe:
            assert probe.execute(text(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock'")).scalar_one() == 0
        # Every request's admission reads the tokens: requests queued behind a waiting one
        # wait no longer than the deadline either.
        locker.execute(text("LOCK TABLE api_tokens IN ACCESS EXCLUSIVE MODE"))
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda _: _timed(site, "/v1/genres", token), range(4)))
        for response, seconds in answers:
            _unavailable(response)
            assert seconds < DEADLINE + MARGIN
        # The database answers (a lock on a table is not a frozen database), promptly.
        health, seconds = _timed(site, "/healthz")
        assert health.status_code == 200 and seconds < HEALTH_SECONDS
        locker.rollback()
        assert _timed(site, "/v1/genres", token)[0].status_code == 200


@pytest.fixture
def writer_held(worker_id):
    """(url, hold) on a database of the test's own, SQLite or PostgreSQL: `hold()` has another
    connection take the write lock of the tokens (SQLite: of the whole database) and keep it
    until the test ends; reads go on."""
    url = migrated_database(f"{worker_id}_writer_held")
    engine = make_engine(url)
    held = []

    def hold() -> None:
        connection = engine.connect()
        held.append(connection)
        if engine.dialect.name == "sqlite":
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            connection.execute(text("LOCK TABLE api_tokens IN SHARE ROW EXCLUSIVE MODE"))

    yield url, hold
    for connection in held:
        connection.rollback()
        connection.close()
    engine.dispose()
    drop_database(url)


def test_statement_timeout_a_write_behind_another_writer_is_a_503_within_the_deadline(
        writer_held):
    # Shown on SQLite too: its busy timeout is the deadline. A token's first request marks it
    # used (a write); it waits for the other writer no longer than the deadline.
    url, hold = writer_held
    with committed(url) as session:
        owner = organisations.create_organisation(session, name="Held")
        token = tokens.create_token(session, organisation=owner, name="held",
                                    scopes=["read"])[1]
    with _served(url) as site:
        assert _timed(site, "/v1/terms")[0].status_code == 200
        hold()
        response, seconds = _timed(site, "/v1/genres", token)
        _unavailable(response)
        assert DEADLINE <= seconds < DEADLINE + MARGIN
        assert _timed(site, "/v1/terms")[0].status_code == 200  # reads go on


def test_statement_timeout_a_frozen_database_is_a_503_and_healthz_says_so_promptly(
        committing, token):
    url, _ = committing
    parsed = make_url(url)
    relay = FreezingRelay(parsed.host or "127.0.0.1", parsed.port or 5432)
    relayed = parsed.set(host="127.0.0.1", port=relay.port).render_as_string(hide_password=False)
    try:
        with _served(relayed) as site:
            assert _timed(site, "/healthz")[0].status_code == 200
            assert _timed(site, "/v1/genres", token)[0].status_code == 200
            relay.frozen.set()
            health, seconds = _timed(site, "/healthz")
            assert health.status_code == 503 and seconds < DEADLINE + MARGIN
            assert health.json() == {"status": "unavailable"}
            assert int(health.headers["retry-after"]) > 0
            response, seconds = _timed(site, "/v1/genres", token)
            _unavailable(response)
            assert seconds < DEADLINE + MARGIN
            # The first check still waits for the database; the next one does not wait for it.
            health, seconds = _timed(site, "/healthz")
            assert health.status_code == 503 and seconds < DEADLINE + MARGIN
            relay.frozen.clear()
            deadline = time.monotonic() + 10
            while _timed(site, "/healthz")[0].status_code != 200:
                assert time.monotonic() < deadline, "the service did not recover"
                time.sleep(0.2)
            assert _timed(site, "/v1/genres", token)[0].status_code == 200
    finally:
        relay.close()

"""Statements straight on a DBAPI connection: DirectStatements (the token lookup, a scan) on a
pooled one, session_rows (a list's and its counts' statements) on a session's."""

import asyncio
import concurrent.futures
import datetime as dt
import time

import pytest
from sqlalchemy import (Date, Integer, String, bindparam, column, func, literal_column, select,
                        text, update)
from sqlalchemy.exc import DBAPIError

from agenda.app import create_app
from models import door, migrate, organisations, tokens
from models.releases import Release
from models.tokens import ApiToken
from adapters import direct as direct_module
from adapters.direct import (PLAIN_ROWS, PLANNED_ONCE_RUNNER, DirectStatements, KeptStatement,
                             compiled, planned_once, session_rows, timed_out)
from models import stamp
from models.db import among, connection_arguments, make_engine, make_sessionmaker
from tests import api
from tests.conftest import APP_SETTINGS
from tests.servers import FreezingRelay, drop_database, scratch_database


@pytest.fixture
def engine(worker_id):
    url = scratch_database(f"{worker_id}_reads")
    engine = make_engine(url)
    migrate.upgrade(engine)
    yield engine
    engine.dispose()
    drop_database(url)


def _token(engine) -> str:
    with make_sessionmaker(engine).begin() as session:
        owner = organisations.create_organisation(session, name="Reads")
        return tokens.create_token(session, organisation=owner, name="reads", scopes=["read"])[1]


def test_a_token_is_read_with_the_stamp_and_its_use_is_written(engine):
    token = _token(engine)
    caller, stamp = tokens.authenticate_with_stamp(DirectStatements(engine).execute, token)
    assert caller.scopes == frozenset({"read"})
    with engine.connect() as connection:
        assert stamp == connection.execute(text("SELECT stamp FROM catalogue_stamp")).scalar_one()
        # Written in autocommit: visible to another connection.
        assert connection.execute(text("SELECT last_used_at FROM api_tokens")).scalar_one()


def test_a_conditional_update_returns_its_rows_and_columns_come_typed(engine):
    _token(engine)
    direct = DirectStatements(engine).execute
    take = (update(ApiToken).where(ApiToken.last_used_at.is_(None))
            .values(last_used_at=bindparam("now")).returning(ApiToken.id, ApiToken.created_at))
    (taken,) = direct(take, {"now": 5})
    assert taken.id.startswith("tok_") and isinstance(taken.created_at, int)
    assert direct(take, {"now": 6}) == [], "the condition no longer holds"
    with engine.connect() as connection:
        assert connection.execute(text("SELECT last_used_at FROM api_tokens")).scalar_one() == 5
    with make_sessionmaker(engine).begin() as session:
        session.add(Release(id="rel-1", title="Dates", type="single", genre="techno",
                            release_date=dt.date(2026, 11, 26), updated_at=1))
    # SQLite hands a date over as text; the column's type makes it a date, as SQLAlchemy does.
    (row,) = direct(select(Release.release_date), {})
    assert row.release_date == dt.date(2026, 11, 26)


def test_on_an_engine_made_in_autocommit_each_statement_commits_as_it_runs(engine,
                                                                          monkeypatch):
    """The service's direct and planned-once engines are made in autocommit: a statement
    commits as it runs, without the connection switched to autocommit and back each time
    (~4% of a long tail's miss)."""
    _token(engine)
    autocommit = make_engine(engine.url.render_as_string(hide_password=False),
                             autocommit=True)
    switches = []
    try:
        direct = DirectStatements(autocommit).execute
        direct(select(literal_column("1")), {})  # its connection made (in autocommit)
        monkeypatch.setattr(autocommit.dialect, "set_isolation_level",
                            lambda *args: switches.append(args))
        take = (update(ApiToken).where(ApiToken.last_used_at.is_(None))
                .values(last_used_at=bindparam("now")).returning(ApiToken.id))
        (taken,) = direct(take, {"now": 7})
        assert taken.id.startswith("tok_") and switches == []
        with engine.connect() as connection:
            assert connection.execute(text("SELECT last_used_at FROM api_tokens")
                                      ).scalar_one() == 7
    finally:
        autocommit.dispose()


def test_a_connection_the_database_dropped_is_replaced_once(engine):
    if engine.dialect.name != "postgresql":
        pytest.skip("a server-side disconnect needs PostgreSQL")
    token = _token(engine)
    reads = DirectStatements(engine)
    tokens.authenticate_with_stamp(reads.execute, token)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as admin:
        admin.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                           "WHERE datname = current_database() AND pid <> pg_backend_pid()"))
    caller, _ = tokens.authenticate_with_stamp(reads.execute, token)
    assert caller.scopes == frozenset({"read"})


def test_an_unreachable_database_raises_as_sqlalchemy_does():
    reads = DirectStatements(make_engine("postgresql+psycopg://postgres@127.0.0.1:9/none"))
    with pytest.raises(DBAPIError) as raised:
        reads.execute(tokens._TOKEN_ROW, {"token_hash": "x"})
    assert raised.value.connection_invalidated


def _kept_stamp(url: str, dialect, seconds: float) -> KeptStatement:
    """The catalogue stamp's statement as the service keeps it (agenda/app.py)."""
    return KeptStatement(url, stamp.READ, dialect,
                         connection_arguments(statement_timeout_ms=int(seconds * 1000)), seconds)


def _stamp_now(engine) -> str:
    with engine.connect() as connection:
        return connection.execute(stamp.READ).scalar_one()


def test_the_kept_statement_reads_the_stamp_as_committed_and_again_after_its_connection_dropped(
        engine):
    if engine.dialect.name != "postgresql":
        pytest.skip("the kept statement is PostgreSQL's")
    kept = _kept_stamp(engine.url.render_as_string(hide_password=False), engine.dialect, 2.0)
    before = _stamp_now(engine)

    async def scenario():
        first = await kept.value()
        with engine.begin() as connection:
            connection.execute(text("UPDATE catalogue_stamp SET stamp = 'changed' WHERE id = 1"))
        second = await kept.value()
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as admin:
            admin.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                               "WHERE datname = current_database() AND pid <> pg_backend_pid()"))
        return first, second, await kept.value()

    try:
        assert asyncio.run(scenario()) == (before, "changed", "changed")
        # A connection made on another event loop is not used on this one.
        assert asyncio.run(kept.value()) == "changed"
    finally:
        kept.close()


def test_a_kept_statement_the_database_does_not_answer_fails_in_its_time_and_the_next_runs(
        engine):
    """Past its time the run fails, without waiting for the server to cancel the statement
    (psycopg's `execute` would ask it to, and wait up to 10 s more), and the next run is on
    a new connection."""
    if engine.dialect.name != "postgresql":
        pytest.skip("the kept statement is PostgreSQL's")
    relay = FreezingRelay(engine.url.host or "127.0.0.1", engine.url.port or 5432)
    relayed = engine.url.set(host="127.0.0.1", port=relay.port)
    kept = _kept_stamp(relayed.render_as_string(hide_password=False), engine.dialect, 0.5)

    async def scenario():
        loop = asyncio.get_running_loop()
        first = await kept.value()
        relay.frozen.set()
        started = loop.time()
        with pytest.raises(TimeoutError):
            await kept.value()
        waited = loop.time() - started
        relay.frozen.clear()
        return first, waited, await kept.value()

    try:
        first, waited, after = asyncio.run(scenario())
    finally:
        kept.close()
        relay.close()
    assert first == after == _stamp_now(engine)
    assert 0.5 <= waited < 1.5


def test_the_services_key_lookups_are_planned_once(app):
    """A door's scan and a token's lookup find one row by key: PostgreSQL plans each once
    (a generic plan) rather than at every call, as the list queries are (custom plans)."""
    if app.service.direct_engine.dialect.name != "postgresql":
        pytest.skip("SQLite has no plan cache")
    direct = DirectStatements(app.service.direct_engine).execute
    # psycopg prepares a statement at its 6th run; PostgreSQL plans it generically after 5 more.
    for _ in range(16):
        direct(door._CANDIDATES, {"code": "NOPE", "organisation_id": "org_none"})
        direct(tokens._TOKEN_ROW, {"token_hash": "none"})
    plans = text("SELECT statement, generic_plans FROM pg_prepared_statements").columns(
        column("statement", String), column("generic_plans", Integer))
    generic = [row.statement for row in direct(plans, {}) if row.generic_plans]
    assert [any(f"FROM {table} " in statement for statement in generic)
            for table in ("tickets", "api_tokens")] == [True, True], generic


@pytest.fixture
def single(engine):
    """On PostgreSQL (the libpq path's), an engine on `engine`'s database with one pooled
    connection, in autocommit as the service's direct engines are: every statement on the
    same connection."""
    if engine.dialect.name != "postgresql":
        pytest.skip("the libpq path is PostgreSQL's")
    single = make_engine(engine.url.render_as_string(hide_password=False), pool_size=1,
                         pre_ping=False, autocommit=True)
    yield single
    single.dispose()


# Columns of the types a list's rows carry, and None among them.
_TYPED = select(bindparam("day", type_=Date).label("day"),
                (bindparam("n", type_=Integer) + 1).label("next"),
                literal_column("2.5::float8").label("price"),
                literal_column("ARRAY['Techno', 'House']::varchar[]").label("genres"),
                literal_column("true").label("verified"),
                literal_column("NULL::varchar").label("nothing"),
                literal_column("'{\"a\": 1}'::json").label("data"))


def test_statements_run_by_libpq_give_the_same_typed_rows_at_every_run(single):
    """On PostgreSQL, DirectStatements runs its statements by libpq's own calls, prepared at
    their first run, their rows read in text then, in binary after: the same values, of the
    same types, at every run."""
    direct = DirectStatements(single).execute
    runs = [[tuple(row) for row in direct(_TYPED, {"day": dt.date(2026, 12, 3), "n": n})]
            for n in (1, 1, 40000)]
    expected = (dt.date(2026, 12, 3), 2, 2.5, ["Techno", "House"], True, None, {"a": 1})
    assert runs[0] == runs[1] == [expected]
    assert runs[2] == [(*expected[:1], 40001, *expected[2:])]
    assert [type(value) for value in runs[1][0]] == [type(value) for value in expected]
    # Marked for plain rows: tuples of the same values, at the first run and after.
    plain = _TYPED.execution_options(**{PLAIN_ROWS: True})
    rows = [direct(plain, {"day": dt.date(2026, 12, 3), "n": 1}) for _ in range(2)]
    assert rows == [[expected]] * 2 and {type(run[0]) for run in rows} == {tuple}
    # A type psycopg reads only as text (a point) stays text at every run.
    point = select(literal_column("point(1, 2)").label("p"))
    assert [direct(point, {})[0].p for _ in range(3)] == ["(1,2)"] * 3


def test_a_connection_keeps_a_bounded_number_of_statements_prepared(single, monkeypatch):
    """As psycopg keeps its own: past the bound, the least recently run is deallocated."""
    monkeypatch.setattr(direct_module, "PREPARED_AT_MOST", 3)
    prepared = text("SELECT count(*) AS n FROM pg_prepared_statements "
                    "WHERE name LIKE 'agenda_%'").columns(column("n", Integer))
    direct = DirectStatements(single).execute
    for number in range(6):
        assert direct(select(literal_column(str(number)).label("n")), {})[0].n == number
    # The last two of the six and the count itself.
    assert direct(prepared, {})[0].n == 3
    assert direct(select(literal_column("5").label("n")), {})[0].n == 5


def test_a_failing_statement_raises_as_sqlalchemy_does_and_runs_again_after(single):
    share = select((10 / bindparam("n", type_=Integer)).label("share"))
    direct = DirectStatements(single).execute
    assert direct(share, {"n": 5})[0].share == 2
    with pytest.raises(DBAPIError) as raised:
        direct(share, {"n": 0})
    assert raised.value.orig.sqlstate == "22012"  # division by zero
    assert not raised.value.connection_invalidated
    assert direct(share, {"n": 2})[0].share == 5


# The server process serving the statement's connection (the slow one after 0.3 s asleep).
_BACKEND = select(literal_column("pg_backend_pid()").label("pid"))
_SLOW_BACKEND = _BACKEND.select_from(text("pg_sleep(0.3)"))


def test_the_connection_is_held_between_statements_until_closed_or_held_long_enough(
        single, monkeypatch):
    """The connection a statement ran on is held for the next one, not checked in and out
    of the pool each time (bench/RESULTS.md: that cost a worker 40-140 µs of CPU a
    statement); `close` gives it back, and so does a statement once it has been held
    `HELD_SECONDS`, so that the pool's recycling and disposal reach it."""
    direct = DirectStatements(single)
    pids = {direct.execute(_BACKEND, {})[0].pid for _ in range(5)}
    assert len(pids) == 1 and single.pool.checkedout() == 1
    direct.close()
    assert single.pool.checkedout() == 0
    monkeypatch.setattr(direct_module, "HELD_SECONDS", 0.0)
    assert direct.execute(_BACKEND, {})[0].pid in pids, "the pool's one connection"
    assert single.pool.checkedout() == 0


def test_statements_at_once_hold_a_connection_each_and_a_restart_replaces_every_one(single):
    """Threads running statements at once hold as many connections, and no more after; when
    the database drops them (a restart), the next statement runs on a new one rather than
    failing on another held connection the restart cut too."""
    direct = DirectStatements(single)
    with concurrent.futures.ThreadPoolExecutor(3) as threads:
        pids = set(threads.map(lambda _: direct.execute(_SLOW_BACKEND, {})[0].pid, range(3)))
    assert len(pids) == 3 and single.pool.checkedout() == 3
    assert {direct.execute(_BACKEND, {})[0].pid for _ in range(6)} <= pids
    assert single.pool.checkedout() == 3
    with single.connect() as admin:
        admin.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                           "WHERE datname = current_database() AND pid <> pg_backend_pid()"))
    after = {direct.execute(_BACKEND, {})[0].pid for _ in range(3)}
    assert len(after) == 1 and not after & pids
    assert single.pool.checkedout() == 1
    direct.close()


def test_a_closed_service_leaves_none_of_the_connections_its_statements_held(database_url):
    """Its direct statements (the token lookups, a door's scan) and its reads' statements
    planned once hold their connections between statements: closing the service closes
    them too (disposing of an engine does not close a connection checked out of it)."""
    if not database_url.startswith("postgresql"):
        pytest.skip("connections are held on PostgreSQL")
    service = create_app({"database_url": database_url, **APP_SETTINGS}).service
    planned_once = service.reads.kw["info"][PLANNED_ONCE_RUNNER]
    pids = {service.direct(_BACKEND, {})[0].pid, planned_once(_BACKEND, {})[0].pid}
    service.close()
    admin = make_engine(database_url)
    alive = text("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(:pids)")
    try:
        for _ in range(50):  # a server process ends soon after its connection closes
            with admin.connect() as connection:
                left = connection.execute(alive, {"pids": list(pids)}).scalar_one()
            if not left:
                break
            time.sleep(0.1)
    finally:
        admin.dispose()
    assert len(pids) == 2 and left == 0


# --- session_rows ----------------------------------------------------------------------------

_RELEASES = (select(Release.id, Release.release_date)
             .where(Release.release_date >= bindparam("since"), among(Release.id, "ids"))
             .order_by(Release.release_date))


def _release(session, number: int, day: int) -> None:
    session.add(Release(id=f"rel-{number}", title=f"Release {number}", type="single",
                        genre="techno", release_date=dt.date(2026, 11, day), updated_at=1))


def test_session_rows_read_in_the_sessions_transaction_with_typed_values(engine):
    with make_sessionmaker(engine)() as session:
        for number, day in ((1, 20), (2, 26), (3, 27)):
            _release(session, number, day)
        session.flush()  # not committed: only this session's transaction sees the rows
        rows = session_rows(session, _RELEASES, {"since": dt.date(2026, 11, 21),
                                                 "ids": ["rel-1", "rel-2", "rel-3", "rel-9"]})
        # A date goes and comes typed (SQLite's text both ways), columns by name.
        assert [(row.id, row.release_date) for row in rows] == [
            ("rel-2", dt.date(2026, 11, 26)), ("rel-3", dt.date(2026, 11, 27))]
        assert session_rows(session, _RELEASES, {"since": dt.date(2026, 1, 1),
                                                 "ids": ["rel-3"]})[0].id == "rel-3"
        # Marked for plain rows: tuples, their values typed the same.
        since = (select(Release.id, Release.release_date)
                 .where(Release.release_date >= bindparam("since")))
        plain = session_rows(session, since.execution_options(**{PLAIN_ROWS: True}),
                             {"since": dt.date(2026, 11, 27)})
        assert plain == [("rel-3", dt.date(2026, 11, 27))] and type(plain[0]) is tuple
        session.rollback()
    if engine.dialect.name == "postgresql":
        # One parameter however many ids: the statement is compiled once, for every length.
        assert compiled(_RELEASES, engine.dialect).order == ("since", "ids")


# A literal `%` beside parameters: SQLAlchemy writes it `%%` for psycopg, which runs
# PostgreSQL's own SQL ($1, $2, ...) as it is (adapters/direct.py `Compiled`).
_TITLED = (select(Release.id, literal_column("'100%'").label("share"),
                  (literal_column("7") % bindparam("by", type_=Integer)).label("rest"))
           .where(Release.title.like(literal_column("'Release %'")),
                  Release.release_date >= bindparam("since"), Release.id != bindparam("not_id"))
           .order_by(Release.id))


def test_a_literal_percent_beside_parameters_reaches_the_database_as_written(engine):
    with make_sessionmaker(engine)() as session:
        for number, day in ((1, 20), (2, 26), (3, 27)):
            _release(session, number, day)
        session.flush()
        rows = session_rows(session, _TITLED, {"since": dt.date(2026, 11, 21), "by": 4,
                                               "not_id": "rel-3"})
        assert [tuple(row) for row in rows] == [("rel-2", "100%", 3)]
        session.rollback()
    if engine.dialect.name == "postgresql":
        done = compiled(_TITLED, engine.dialect)
        assert "%%" not in done.sql and "$3" in done.sql and "%s" not in done.sql
        assert done.order == ("by", "since", "not_id")
    # The pooled path runs the same SQL (its rows committed: it has a transaction of its own).
    with make_sessionmaker(engine).begin() as session:
        _release(session, 4, 28)
    found = DirectStatements(engine).execute(_TITLED, {"since": dt.date(2026, 11, 28), "by": 5,
                                                       "not_id": "rel-1"})
    assert [tuple(row) for row in found] == [("rel-4", "100%", 2)]


def test_session_rows_run_the_engines_cursor_events(engine):
    with api.statements(engine) as seen, make_sessionmaker(engine)() as session:
        session_rows(session, _RELEASES, {"since": dt.date(2026, 1, 1), "ids": ["rel-1"]})
    assert [statement for statement in seen if "FROM releases" in statement]


def test_a_session_statement_past_its_deadline_fails_as_sqlalchemy_raises_it(engine):
    """The deadline of models/db.py ends it (SQLite's interrupt hangs on the cursor events)."""
    bounded = make_engine(engine.url.render_as_string(hide_password=False),
                          statement_timeout_ms=200)
    if bounded.dialect.name == "postgresql":
        slow = select(func.pg_sleep(5).label("slept"))
    else:
        slow = select(literal_column("count(*)").label("n")).select_from(text(
            "(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
            "WHERE x < 1000000000) SELECT x FROM c)"))
    try:
        with make_sessionmaker(bounded)() as session, pytest.raises(DBAPIError) as raised:
            session_rows(session, slow, {})
        assert timed_out(raised.value.orig)
        assert not raised.value.connection_invalidated
    finally:
        bounded.dispose()


def test_a_session_statement_whose_connection_was_dropped_invalidates_it(engine):
    if engine.dialect.name != "postgresql":
        pytest.skip("a server-side disconnect needs PostgreSQL")
    sessions = make_sessionmaker(engine)
    with sessions() as session:
        pid = session.execute(text("SELECT pg_backend_pid()")).scalar_one()
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as admin:
            admin.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        with pytest.raises(DBAPIError) as raised:
            session_rows(session, _RELEASES, {"since": dt.date(2026, 1, 1), "ids": []})
        assert raised.value.connection_invalidated
    with sessions() as session:  # the pool gives a working connection again
        assert session_rows(session, _RELEASES, {"since": dt.date(2026, 1, 1), "ids": []}) == []


# --- generic plans ---------------------------------------------------------------------------

_MODE = select(func.current_setting("plan_cache_mode").label("mode"),
               func.current_setting("enable_seqscan").label("seqscan"),
               (bindparam("n", type_=Integer) * 2).label("twice"))
_FAILING = select((1 / bindparam("n", type_=Integer)).label("share"))


def _mode(session) -> tuple[str, str]:
    return tuple(session.execute(text(f"SHOW {name}")).scalar_one()
                 for name in ("plan_cache_mode", "enable_seqscan"))


@pytest.mark.parametrize("autocommit", [True, False], ids=["autocommit", "transaction"])
def test_a_statement_marked_for_a_generic_plan_runs_under_it_and_then_the_mode_is_back(
        engine, autocommit):
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite has no plan cache")
    bind = engine.execution_options(isolation_level="AUTOCOMMIT") if autocommit else engine
    with api.statements(engine) as seen, make_sessionmaker(bind)() as session:
        assert [tuple(row) for row in session_rows(session, planned_once(_MODE), {"n": 21})] == [
            ("force_generic_plan", "off", 42)]
        assert _mode(session) == ("force_custom_plan", "on")
        assert session_rows(session, _MODE, {"n": 1})[0][:2] == ("force_custom_plan", "on")
        with pytest.raises(DBAPIError):  # division by zero: the SET is undone with it
            session_rows(session, planned_once(_FAILING), {"n": 0})
        session.rollback()
        assert _mode(session) == ("force_custom_plan", "on")
    # The engine's cursor events see the statement (not the SET and RESET around it).
    assert len([statement for statement in seen if "current_setting" in statement]) == 2


def test_a_statement_marked_for_a_generic_plan_past_its_deadline_fails_and_leaves_the_mode(
        engine):
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite has no plan cache")
    bounded = make_engine(engine.url.render_as_string(hide_password=False),
                          statement_timeout_ms=200)
    slow = planned_once(select(func.pg_sleep(bindparam("seconds", type_=Integer)).label("slept")))
    try:
        with make_sessionmaker(bounded.execution_options(isolation_level="AUTOCOMMIT"))() as session:
            with pytest.raises(DBAPIError) as raised:
                session_rows(session, slow, {"seconds": 5})
            assert timed_out(raised.value.orig) and not raised.value.connection_invalidated
            assert _mode(session) == ("force_custom_plan", "on")
    finally:
        bounded.dispose()

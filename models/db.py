"""The database: declarative base, engine set-up and id/time conventions."""

from __future__ import annotations

import functools
import math
import secrets
import time

from sqlalchemy import BigInteger, MetaData, String, bindparam, create_engine, event, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.sql.functions import FunctionElement

from adapters.direct import PLANNED_ONCE, PLANNED_ONCE_SETTINGS

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# A pooled connection idle this long is checked before use (`_ping_when_idle`).
PING_AFTER_IDLE = 5.0
# SQLite: how long a statement without a deadline waits for another writer's lock.
SQLITE_BUSY_SECONDS = 15
# SQLite: virtual machine steps between two looks at a statement's deadline (~1 ms).
SQLITE_PROGRESS_STEPS = 10_000
# Unix seconds, as every timestamp of the API.
Timestamp = BigInteger


class Base(DeclarativeBase):
    """Base of every model; constraint names are fixed so migrations stay stable."""

    metadata = MetaData(naming_convention=NAMING)


def new_id(kind: str) -> str:
    """A new public id: a short kind prefix and 16 random url-safe characters."""
    return f"{kind}_{secrets.token_urlsafe(12)}"


def now() -> int:
    """The current time in Unix seconds."""
    return int(time.time())


def haversine_km(lat1: float, lng1: float, lat2: float, lng2: float) -> float:
    """Great-circle distance in km (PostgreSQL has the same function, from migration 0002)."""
    a = (math.sin(math.radians(lat2 - lat1) / 2) ** 2
         + math.cos(math.radians(lat1)) * math.cos(math.radians(lat2))
         * math.sin(math.radians(lng2 - lng1) / 2) ** 2)
    return 12742.0 * math.asin(math.sqrt(a))


def make_engine(url: str, *, pool_size: int = 10, pre_ping: bool = True,
                plans: str | None = "force_custom_plan", ping_after: float = PING_AFTER_IDLE,
                statement_timeout_ms: int | None = None, requests: bool = False,
                autocommit: bool = False) -> Engine:
    """An engine for `url`: SQLite with foreign keys and WAL, PostgreSQL with a sized pool.

    `statement_timeout_ms` bounds each statement and every wait for the database (a lock,
    a connection): what a request's work may take (agenda/app.py). None, for the command
    line: an import or a migration runs as long as it needs (SQLite waits 15 s for a lock).
    `requests` (the service's request work): PostgreSQL starts no parallel workers and
    compiles nothing (JIT) for it. `autocommit`: each statement a transaction of its own
    (adapters/direct.py `DirectStatements` then switches nothing).
    """
    isolation = {"isolation_level": "AUTOCOMMIT"} if autocommit else {}
    if url.startswith("sqlite"):
        busy = statement_timeout_ms / 1000 if statement_timeout_ms else SQLITE_BUSY_SECONDS
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": busy},
                               **isolation)

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection, record):
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            if ":memory:" not in url:
                cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()
            dbapi_connection.create_function("haversine_km", 4, haversine_km, deterministic=True)
            if statement_timeout_ms:
                _interrupt_after_deadline(dbapi_connection, record.info)

        if statement_timeout_ms:
            _deadline_per_statement(engine, statement_timeout_ms / 1000)
        return engine
    # `pool_size`: one connection per thread that holds one (agenda/app.py), a few spare.
    # Custom plans (by default): psycopg prepares a statement run 5 times, and PostgreSQL's
    # generic plan for a filtered list (no values for the dates, the radius, the price) is a
    # parallel scan of the whole table: at 1M events, 10 requests/s instead of hundreds.
    # Key lookups (a token, a ticket) plan once: `plans=None` (PostgreSQL's own choice). A
    # statement whose plan its values do not change plans once on this engine too
    # (adapters/direct.py `planned_once`), or on one whose `plans` are `PLANNED_ONCE`: every
    # statement under `PLANNED_ONCE_SETTINGS`.
    bounds = {"pool_timeout": statement_timeout_ms / 1000} if statement_timeout_ms else {}
    engine = create_engine(url, pool_size=pool_size, max_overflow=5, pool_recycle=1800,
                           connect_args=connection_arguments(
                               plans=plans, requests=requests,
                               statement_timeout_ms=statement_timeout_ms),
                           **isolation, **bounds)
    if pre_ping:
        _ping_when_idle(engine, ping_after)
    return engine


def connection_arguments(*, plans: str | None = None, requests: bool = False,
                         statement_timeout_ms: int | None = None) -> dict:
    """psycopg's arguments for a connection to PostgreSQL that plans its statements by
    `plans`, does a request's work (`requests`) and bounds each statement, and each wait of
    its own, by `statement_timeout_ms` (see `make_engine`)."""
    settings = ([f"{name}={value}" for name, value in PLANNED_ONCE_SETTINGS]
                if plans == PLANNED_ONCE else [f"plan_cache_mode={plans}"] if plans else [])
    if requests:
        # Requests read a few rows to a few thousand: starting parallel workers costs more
        # than it saves (a small organisation's facet counts took 17 ms with them, 6
        # without) and takes the cores of other requests; so does JIT compiling a statement
        # estimated dear (GET /cities at 1M events: 95 ms with it, 4 ms without).
        settings += ["max_parallel_workers_per_gather=0", "jit=off"]
    arguments: dict = {}
    if statement_timeout_ms:
        # The server ends a statement (and a wait for a lock) past the deadline; the client
        # bounds its own waits: for a new connection (whole seconds, at least 2), for one of
        # the pool (`make_engine`), and for data sent but not acknowledged (a host gone from
        # the network).
        settings += [f"statement_timeout={statement_timeout_ms}",
                     f"lock_timeout={statement_timeout_ms}"]
        arguments = {"connect_timeout": max(2, math.ceil(statement_timeout_ms / 1000)),
                     "tcp_user_timeout": statement_timeout_ms}
    if settings:
        arguments["options"] = " ".join(f"-c {setting}" for setting in settings)
    return arguments


def _interrupt_after_deadline(dbapi_connection, info: dict) -> None:
    """SQLite: interrupt a statement still running past the deadline its connection's
    `info` holds (`_deadline_per_statement`); it fails with "interrupted"."""

    def past_deadline() -> bool:
        deadline = info.get("deadline")
        return deadline is not None and time.monotonic() > deadline

    dbapi_connection.set_progress_handler(past_deadline, SQLITE_PROGRESS_STEPS)


def _deadline_per_statement(engine: Engine, seconds: float) -> None:
    """SQLite: each statement's deadline, from its start, on its connection's `info`."""

    @event.listens_for(engine, "before_cursor_execute")
    def _start(connection, _cursor, _statement, _parameters, _context, _executemany):
        connection.info["deadline"] = time.monotonic() + seconds

    @event.listens_for(engine, "after_cursor_execute")
    def _end(connection, _cursor, _statement, _parameters, _context, _executemany):
        connection.info.pop("deadline", None)


def _ping_when_idle(engine: Engine, seconds: float) -> None:
    """Check a pooled connection before use when it has been idle `seconds` or longer (a
    database restart or a dropped link shows there), and replace it if it fails. Not every
    checkout, as `pool_pre_ping` does: under load that was a round trip per request. A
    connection that dies while in use fails its request (503) and invalidates the pool."""

    @event.listens_for(engine, "checkin")
    def _idle_from(_dbapi_connection, record):
        record.info["idle_from"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _ping(dbapi_connection, record, _proxy):
        idle_from = record.info.pop("idle_from", None)
        if idle_from is None or time.monotonic() - idle_from < seconds:
            return
        try:
            engine.dialect.do_ping(dbapi_connection)
        except engine.dialect.loaded_dbapi.Error as error:
            # The pool discards the connection and checks out another (a new one).
            raise DisconnectionError(f"a pooled connection failed its ping: {error}") from error


def make_sessionmaker(engine: Engine) -> sessionmaker:
    """Sessions that keep loaded objects usable after commit."""
    return sessionmaker(bind=engine, expire_on_commit=False, autoflush=True)


def insert_for(session: Session, table):
    """The dialect's INSERT for `table`, which has `on_conflict_do_nothing/_update`."""
    dialect = session.get_bind().dialect.name
    return (postgresql.insert if dialect == "postgresql" else sqlite.insert)(table)


def insert_rows(session: Session, table, rows: list[dict]):
    """`insert_for(session, table)` of `rows` (not empty, dicts with the same keys), in their
    order, and the parameters to run it with: `session.execute(statement, parameters)`.

    On PostgreSQL the rows go as one array a column (INSERT ... SELECT FROM unnest). As a
    multi-row VALUES with a parameter a field, psycopg converts the statement again each
    time (it is too long for its cache): 500 tickets took twice as long that way. Text
    goes as unbounded text, so that a value too long for its column is refused, not cut
    (an explicit cast to varchar(n) would cut it).
    """
    if session.get_bind().dialect.name != "postgresql":
        return insert_for(session, table), rows
    names = tuple(rows[0])
    return arrays_insert(table, names), {f"{name}_values": [row[name] for row in rows]
                                         for name in names}


@functools.cache
def arrays_insert(table, names: tuple[str, ...]):
    """PostgreSQL's INSERT of rows of `table` given as one array a column `names` (the
    parameter `{name}_values` each), in their order: one statement however many rows,
    built once for the table and its columns (`insert_rows`; a statement run as prebuilt,
    adapters/direct.py)."""
    arrays = []
    for name in names:
        kind = table.c[name].type
        arrays.append(bindparam(f"{name}_values", type_=postgresql.ARRAY(
            String() if isinstance(kind, String) else kind)))
    given = func.unnest(*arrays).table_valued(*names, with_ordinality="position").render_derived()
    chosen = select(*(given.c[name] for name in names)).order_by(given.c.position)
    return postgresql.insert(table).from_select(names, chosen)


class among(FunctionElement):  # noqa: N801 (a SQL function, named as one)
    """`among(column, name)`: the column's value is one of the ids of the parameter `name`
    (a list). On PostgreSQL `= ANY(array)`: one parameter however many ids, so that the
    statement is the same whatever the list's length (adapters/direct.py `session_rows`
    runs it as compiled once). On SQLite an expanding `IN`, its SQL made at each run: with a
    JSON array instead, its planner did not see how few the ids are (it read a radius
    search's box, not its venues' events)."""

    inherit_cache = True
    name = "among"

    def __init__(self, column, name: str):
        super().__init__(column, bindparam(name, type_=postgresql.ARRAY(String())))


@compiles(among, "postgresql")
def _among_postgresql(element, compiler, **kw):
    column, ids = (compiler.process(clause, **kw) for clause in element.clauses)
    return f"{column} = ANY({ids})"


@compiles(among)
def _among(element, compiler, **kw):
    column, ids = element.clauses
    return compiler.process(column.in_(bindparam(ids.key, expanding=True)), **kw)

"""The database: declarative base, engine set-up and id/time conventions."""

from __future__ import annotations

import collections
import math
import re
import secrets
import time

from sqlalchemy import BigInteger, MetaData, String, bindparam, create_engine, event, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# A pooled connection idle this long is checked before use (`_ping_when_idle`).
PING_AFTER_IDLE = 5.0
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
                custom_plans: bool = True, ping_after: float = PING_AFTER_IDLE) -> Engine:
    """An engine for `url`: SQLite with foreign keys and WAL, PostgreSQL with a sized pool."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 15})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection, _record):
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            if ":memory:" not in url:
                cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()
            dbapi_connection.create_function("haversine_km", 4, haversine_km, deterministic=True)

        return engine
    # `pool_size`: one connection per thread that holds one (agenda/app.py), a few spare.
    # Custom plans (by default): psycopg prepares a statement run 5 times, and PostgreSQL's
    # generic plan for a filtered list (no values for the dates, the radius, the price) is a
    # parallel scan of the whole table: at 1M events, 10 requests/s instead of hundreds.
    # Key lookups (a token, a ticket) plan once: `custom_plans=False`.
    options = {"options": "-c plan_cache_mode=force_custom_plan"} if custom_plans else {}
    engine = create_engine(url, pool_size=pool_size, max_overflow=5, pool_recycle=1800,
                           connect_args=options)
    if pre_ping:
        _ping_when_idle(engine, ping_after)
    return engine


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


def rows(connection, statement, params: dict) -> list:
    """The rows of `statement` on a Core connection (none for a statement without rows): what
    `DirectStatements.execute` answers, inside a connection's transaction."""
    result = connection.execute(statement, params)
    return result.all() if result.returns_rows else []


class DirectStatements:
    """Runs a few hot, prebuilt statements on a pooled DBAPI connection in autocommit, each
    its own transaction, without the ORM's or the Connection's machinery (~50 µs a statement
    instead of ~280 µs): the token lookup every request makes, a door's scan.
    `execute(statement, params)` returns the rows (of a SELECT, or of an UPDATE's RETURNING),
    each with attribute access, like a Core result's `.all()`.

    No pre-ping: a connection the database dropped fails once, is discarded, and the
    statement runs again on a new one. (So may a write that had committed as its connection
    dropped: only a conditional write, which the second time changes nothing, belongs here.)
    """

    def __init__(self, engine: Engine):
        self.engine = engine
        self._compiled: dict[int, tuple[str, dict, tuple, type | None, tuple | None]] = {}

    def execute(self, statement, params: dict) -> list:
        sql, defaults, order, row_type, processors = self._compile(statement)
        values = {**defaults, **params}
        arguments = tuple(values[name] for name in order)
        dialect = self.engine.dialect
        for attempt in (1, 2):
            try:
                pooled = self.engine.raw_connection()
            except dialect.loaded_dbapi.Error as error:
                raise DBAPIError.instance(sql, params, error, dialect.loaded_dbapi.Error,
                                          connection_invalidated=True) from error
            try:
                dialect.set_isolation_level(pooled.dbapi_connection, "AUTOCOMMIT")
                try:
                    cursor = pooled.dbapi_connection.cursor()
                    cursor.execute(sql, arguments)
                    rows = cursor.fetchall() if row_type else []
                    cursor.close()
                finally:
                    dialect.reset_isolation_level(pooled.dbapi_connection)
                if processors:
                    rows = [[value if process is None else process(value)
                             for process, value in zip(processors, row)] for row in rows]
                return [row_type._make(row) for row in rows]
            except dialect.loaded_dbapi.Error as error:
                dropped = isinstance(error, dialect.loaded_dbapi.OperationalError)
                if dropped:
                    pooled.invalidate()
                if not dropped or attempt == 2:
                    # As SQLAlchemy raises it, so that the error handler knows it (503).
                    raise DBAPIError.instance(sql, params, error, dialect.loaded_dbapi.Error,
                                              connection_invalidated=dropped) from error
            finally:
                pooled.close()
        raise AssertionError("unreachable")

    def _compile(self, statement) -> tuple[str, dict, tuple, type | None, tuple | None]:
        """(SQL with positional parameters, default values, parameter names in order, row type
        or None for a statement without rows, the columns' result processors or None where no
        column has one: SQLite's dates come as text, say)."""
        known = self._compiled.get(id(statement))
        if known is None:
            dialect = self.engine.dialect
            compiled = statement.compile(dialect=dialect)
            sql = str(compiled)
            if compiled.positional:  # SQLite: `?` in order
                order = tuple(compiled.positiontup)
            else:  # psycopg: `%(name)s`, rewritten as `%s` (cheaper to bind than a dict)
                order = tuple(re.findall(r"%\((\w+)\)s", sql))
                sql = re.sub(r"%\((\w+)\)s", "%s", sql)
            columns = statement.exported_columns
            processors = tuple(column.type.dialect_impl(dialect).result_processor(dialect, None)
                               for column in columns)
            known = (sql, dict(compiled.params), order,
                     collections.namedtuple("Row", [column.key for column in columns])
                     if columns else None,
                     processors if any(processors) else None)
            self._compiled[id(statement)] = known
        return known


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
    names = list(rows[0])
    arrays = []
    for name in names:
        kind = table.c[name].type
        arrays.append(bindparam(f"{name}_values", [row[name] for row in rows],
                                type_=postgresql.ARRAY(String() if isinstance(kind, String)
                                                       else kind)))
    given = func.unnest(*arrays).table_valued(*names, with_ordinality="position").render_derived()
    chosen = select(*(given.c[name] for name in names)).order_by(given.c.position)
    return postgresql.insert(table).from_select(names, chosen), None

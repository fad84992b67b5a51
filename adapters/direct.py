"""Statements run straight on a DBAPI connection: the hot key lookups on a pooled one, a
list's and its counts' prebuilt statements on a session's."""

from __future__ import annotations

import asyncio
import collections
import functools
import itertools
import re
import time
import weakref
from collections.abc import Callable, Iterable, Iterator

import psycopg
from psycopg import pq
from psycopg.adapt import PyFormat, Transformer
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session


def rows(connection, statement, params: dict) -> list:
    """The rows of `statement` on a Core connection (none for a statement without rows): what
    `DirectStatements.execute` answers, inside a connection's transaction."""
    result = connection.execute(statement, params)
    return result.all() if result.returns_rows else []


# What ends a statement at its deadline (models/db.py): PostgreSQL's statement and lock
# timeouts (SQLSTATE), SQLite's busy timeout and interrupt. Not a dropped connection: the
# statement is not run again, which would double the wait.
TIMED_OUT = frozenset({"57014", "55P03", "SQLITE_BUSY", "SQLITE_INTERRUPT"})


def timed_out(error: Exception) -> bool:
    """Whether a DBAPI error ended a statement at its deadline (see `TIMED_OUT`)."""
    return bool({getattr(error, "sqlstate", None),
                 getattr(error, "sqlite_errorname", None)} & TIMED_OUT)


def dropped(error: Exception, dbapi) -> bool:
    """Whether a DBAPI error of `dbapi` lost its connection (an operational error that is
    not a deadline): a statement that only reads may run again on a new one."""
    return isinstance(error, dbapi.OperationalError) and not timed_out(error)


# A prebuilt statement's execution option (`statement.execution_options(generic_plan=True)`):
# PostgreSQL plans it once, for any values (its generic plan), rather than at each run for
# the run's values (the custom plans of the service's engine, models/db.py). For statements
# whose plan their values do not change: a list that walks one index in its order whatever
# the city or the dates, an event by its id. At a million events, planning a city's list
# for its values took 1.2-1.6 ms, more than running it (0.8-2.3).
GENERIC_PLAN = "generic_plan"


def planned_once(statement):
    """`statement` marked to run under PostgreSQL's generic plan (`GENERIC_PLAN`)."""
    return statement.execution_options(**{GENERIC_PLAN: True})


# What a statement planned once runs under: set around it (`_run_generic`), or for every
# statement of connections that run only such statements (models/db.py `make_engine`
# with `plans=PLANNED_ONCE`). Its generic plan, and no sequential scan where an index can
# read: such a statement walks an index in its order or looks a key up, whatever its
# values, but its plan is made for the tables' sizes when it is made and kept until
# their statistics change. An analysed table that is empty then (the summaries kept as
# JSON, models/events.py, after a crash or a first deploy) is estimated at no rows: the
# plan scanned the whole table for every row of every page once it had filled, until
# autovacuum's next ANALYZE (after a crash, which keeps the old statistics, not before a
# tenth of the old row count was written again).
PLANNED_ONCE_SETTINGS = (("plan_cache_mode", "force_generic_plan"), ("enable_seqscan", "off"))
PLANNED_ONCE = "planned once"


# A prebuilt statement's execution option: its parameters go to PostgreSQL in binary
# (`Prepared`), where psycopg would write a list of texts as an array's text, escaping each
# quote of each by a regular expression (a page's 25 summaries' JSON: ~20 ms).
BINARY_PARAMETERS = "binary_parameters"


# A prebuilt statement's execution option: its rows are plain tuples, read by position,
# not rows with attribute access (a namedtuple made for each: ~0.4 µs a row, the facet
# counts' hundred-odd rows).
PLAIN_ROWS = "plain_rows"


# The key of a session's `info` (its sessionmaker's) holding where `session_rows` runs the
# statements marked `planned_once`, instead of on the session's connection between `SET
# plan_cache_mode` and `RESET`: `DirectStatements.execute` on connections that plan every
# prepared statement once (agenda/app.py, the sessions of public answers, which read in
# autocommit: each statement its own transaction, on whichever connection). Such a list
# then opens no session's connection at all: a miss of the long tail cost the workers
# 11-16% less CPU (bench/RESULTS.md).
PLANNED_ONCE_RUNNER = "planned_once_runner"


def _run_generic(dbapi_connection, cursor, sql: str, arguments: tuple) -> None:
    """Run `sql` on `cursor` under `PLANNED_ONCE_SETTINGS`, and the connection's settings
    back as they were: all in one round trip (psycopg's pipeline). Between two syncs
    PostgreSQL runs them as one transaction (or inside the connection's own): a statement
    that fails undoes the SETs with it."""
    with dbapi_connection.pipeline():
        for name, value in PLANNED_ONCE_SETTINGS:
            dbapi_connection.execute(f"SET {name} = {value}")
        cursor.execute(sql, arguments)
        # Back to the session's defaults: the settings the connection was opened with.
        for name, _value in PLANNED_ONCE_SETTINGS:
            dbapi_connection.execute(f"RESET {name}")


# A named parameter as SQLAlchemy writes it for psycopg, or a literal `%` (written `%%`).
_PYFORMAT = re.compile(r"%%|%\((\w+)\)s")


class Compiled:
    """A prebuilt statement as a DBAPI cursor takes it (`compiled`): the SQL with positional
    parameters, the parameters' names in order with their bind processors, the rows' type and
    the columns' result processors (SQLite's dates go and come as text, say), known from the
    first run's cursor (a number's depends on the type the database answers).

    For psycopg the SQL is PostgreSQL's own (`$1`, `$2`, ...), run by a `RawCursor`
    (`cursor`): a cursor of psycopg's default kind rewrites `%s` into them at every run, and
    a list's statement is too long for psycopg to keep the rewritten form (4 KB): ~6% of
    a list's miss."""

    def __init__(self, statement, dialect):
        done = statement.compile(dialect=dialect)
        sql = str(done)
        if "POSTCOMPILE" in sql:
            raise Varying(sql)
        if done.positional:  # SQLite: `?` in order
            self.order = tuple(done.positiontup)
        else:  # psycopg
            names = []

            def positional(found: re.Match) -> str:
                if found.group(1) is None:
                    return "%"
                names.append(found.group(1))
                return f"${len(names)}"

            sql, self.order = _PYFORMAT.sub(positional, sql), tuple(names)
        self.raw = not done.positional
        self.sql, self.defaults, self.dialect = sql, dict(done.params), dialect
        binders = tuple(done.binds[name].type.dialect_impl(dialect).bind_processor(dialect)
                        for name in self.order)
        self.binders = binders if any(binders) else None
        self.columns = tuple(statement.exported_columns)
        # What makes a row of its values (a list): a tuple (`PLAIN_ROWS`) or one with
        # attribute access; None for a statement without rows.
        self.make_row: Callable[[Iterable], tuple] | None = None
        if self.columns:
            # A named row made by `tuple.__new__` itself: the named tuple's `_make` is Python
            # (~1 µs a row; a page of 100 summaries reads 100), and the row's length is the
            # statement's.
            self.make_row = tuple if statement.get_execution_options().get(PLAIN_ROWS) else \
                functools.partial(tuple.__new__, collections.namedtuple(
                    "Row", [column.key for column in self.columns], rename=True))
        self.processors: tuple | None = None
        self.described = False
        self.generic = (dialect.name == "postgresql"
                        and bool(statement.get_execution_options().get(GENERIC_PLAN)))
        # libpq's way (`Prepared`): each parameter's format chosen by its value, as psycopg's
        # cursor chooses it (or binary: `BINARY_PARAMETERS`); the rows' format, text until a
        # first run has named the columns' types, then binary where psycopg reads every one
        # of them so (`Prepared.rows`).
        self.formats = [PyFormat.BINARY if statement.get_execution_options().get(
            BINARY_PARAMETERS) else PyFormat.AUTO] * len(self.order)
        self.result_format: pq.Format | None = None

    def cursor(self, dbapi_connection):
        """A cursor of `dbapi_connection` that runs this SQL as it is."""
        return psycopg.RawCursor(dbapi_connection) if self.raw else dbapi_connection.cursor()

    def arguments(self, params: dict) -> tuple:
        """The positional arguments of a run with `params` (and the defaults)."""
        # The values in order by C calls, not a generator (a faceted count's statement
        # binds 40).
        ordered = tuple(map((self.defaults | params).__getitem__, self.order))
        if self.binders is None:
            return ordered
        return tuple(value if bind is None else bind(value)
                     for value, bind in zip(ordered, self.binders))

    def rows(self, cursor) -> list:
        """The rows a run left on `cursor`, each with attribute access (or a plain tuple:
        `PLAIN_ROWS`)."""
        if self.make_row is None:
            return []
        if not self.described:
            processors = tuple(
                column.type.dialect_impl(self.dialect).result_processor(self.dialect, kind[1])
                for column, kind in zip(self.columns, cursor.description))
            self.processors = processors if any(processors) else None
            self.described = True
        rows = cursor.fetchall()
        if self.processors:
            rows = [[value if process is None else process(value)
                     for process, value in zip(self.processors, row)] for row in rows]
        return list(map(self.make_row, rows))


class Prepared:
    """A PostgreSQL connection's statements run by libpq's own calls (psycopg's `pq`),
    prepared by name at their first run on it: what `DirectStatements` runs there. psycopg's
    cursor takes ~60 µs of CPU more a statement for the same round trip (its prepared
    statements' bookkeeping, its generators and waits, the rows' text parsed: the rows come
    in binary here where every column's type reads so); a list's miss runs one or two.
    libpq's call waits for the server without the interpreter (others run meanwhile).
    Kept in the pooled connection's `info`, which goes with the connection (a new one when
    the pool replaces it); the least recently run past `PREPARED_AT_MOST` deallocated, as
    psycopg keeps its own."""

    def __init__(self, connection: psycopg.Connection):
        self._connection = connection
        self._transformer = Transformer(connection)
        self._encoding = connection.info.encoding
        # (statement, its parameters' types) -> its name on this connection.
        self._names: collections.OrderedDict[tuple, bytes] = collections.OrderedDict()

    @classmethod
    def of(cls, pooled) -> Prepared:
        """What the pooled connection `pooled` keeps (made at its first statement)."""
        kept = pooled.info.get(_PREPARED)
        if kept is None:
            kept = pooled.info[_PREPARED] = cls(pooled.dbapi_connection)
        return kept

    def rows(self, done: Compiled, arguments: tuple) -> list:
        """The rows of `done` run with `arguments` (positional) on this connection."""
        transformer, pgconn = self._transformer, self._connection.pgconn
        params = transformer.dump_sequence(arguments, done.formats)
        key = (done, transformer.types)
        name = self._names.get(key)
        if name is None:
            name = self._prepare(key, done.sql)
        else:
            self._names.move_to_end(key)
        format_ = pq.Format.TEXT if done.result_format is None else done.result_format
        result = pgconn.exec_prepared(name, params, param_formats=transformer.formats,
                                      result_format=format_)
        if result.status not in _SUCCEEDED:
            # Prepared again at its next run (a change of the schema may have made its
            # prepared form unusable), unless the connection is lost (then it is replaced).
            error = self._error(result)
            if pgconn.status != pq.ConnStatus.BAD:
                self._check(pgconn.close_prepared(self._names.pop(key)))
            raise error
        if done.make_row is None or not result.nfields:
            return []
        if done.result_format is None:
            self._describe(done, result)
        transformer.set_pgresult(result)
        if done.processors is None:
            return transformer.load_rows(0, result.ntuples, done.make_row)
        return [done.make_row([value if process is None else process(value)
                               for process, value in zip(done.processors, row)])
                for row in transformer.load_rows(0, result.ntuples, tuple)]

    def _prepare(self, key: tuple, sql: str) -> bytes:
        pgconn = self._connection.pgconn
        if len(self._names) >= PREPARED_AT_MOST:
            _, oldest = self._names.popitem(last=False)
            self._check(pgconn.close_prepared(oldest))
        name = f"agenda_{next(_PREPARED_NAMES)}".encode()
        self._check(pgconn.prepare(name, sql.encode(self._encoding), key[1]))
        self._names[key] = name
        return name

    def _describe(self, done: Compiled, result) -> None:
        """Once, from a first run's result (in text): its columns' result processors and
        whether later runs read them in binary."""
        oids = [result.ftype(index) for index in range(result.nfields)]
        processors = tuple(
            column.type.dialect_impl(done.dialect).result_processor(done.dialect, oid)
            for column, oid in zip(done.columns, oids))
        done.processors = processors if any(processors) else None
        adapters = self._connection.adapters
        done.result_format = (pq.Format.BINARY if all(
            adapters.get_loader(oid, pq.Format.BINARY) is not None for oid in oids)
            else pq.Format.TEXT)

    def _check(self, result) -> None:
        if result.status not in _SUCCEEDED:
            raise self._error(result)

    def _error(self, result) -> psycopg.Error:
        """A failed result's error, as psycopg raises it: a lost connection's an
        OperationalError (which `DirectStatements` replaces)."""
        pgconn = self._connection.pgconn
        if pgconn.status == pq.ConnStatus.BAD:
            return psycopg.OperationalError(pq.error_message(pgconn, encoding=self._encoding))
        return psycopg.errors.error_from_result(result, encoding=self._encoding)


# How many statements `Prepared` keeps prepared on a connection (psycopg's `prepared_max`).
PREPARED_AT_MOST = 100
_PREPARED = "agenda.prepared"
_PREPARED_NAMES = itertools.count()
_SUCCEEDED = (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK)


class Varying(ValueError):
    """A statement whose SQL changes from run to run (an expanding `IN` a list: with the
    list's length), which cannot be compiled once."""


@functools.lru_cache(maxsize=1024)
def compiled(statement, dialect) -> Compiled | None:
    """`statement` (prebuilt and kept: it is the cache's key) compiled for `dialect` once;
    None for a statement whose SQL varies (`Varying`)."""
    try:
        return Compiled(statement, dialect)
    except Varying:
        return None


def session_rows(session: Session, statement, params: dict) -> list:
    """The rows of a prebuilt `statement` run with `params` in `session`'s transaction,
    straight on its DBAPI connection: ~150 µs of CPU a statement where `session.execute`
    takes 300 to 500 (no cache key walked through the statement, no execution context,
    no result object). Each row has attribute access, like a Core result's `.all()` (a
    plain tuple if the statement is marked `PLAIN_ROWS`).

    The engine's cursor events run around it as around any statement (SQLite's deadline,
    models/db.py; whoever counts the statements); an error is raised as SQLAlchemy raises
    it, and a connection it lost is invalidated. A statement whose SQL varies (`Varying`)
    runs through `session.execute`; one marked `planned_once`, where the session names a
    runner for them (`PLANNED_ONCE_RUNNER`), there."""
    runner = session.info.get(PLANNED_ONCE_RUNNER)
    if runner is not None and statement.get_execution_options().get(GENERIC_PLAN):
        return runner(statement, params)
    connection = session.connection()
    dialect = connection.dialect
    done = compiled(statement, dialect)
    if done is None:
        return session.execute(statement, params).all()
    sql, arguments = done.sql, done.arguments(params)
    dbapi_connection = connection.connection.dbapi_connection
    cursor = done.cursor(dbapi_connection)
    try:
        for before in connection.dispatch.before_cursor_execute:
            sql, arguments = before(connection, cursor, sql, arguments, None, False)
        if done.generic:
            _run_generic(dbapi_connection, cursor, sql, arguments)
        else:
            cursor.execute(sql, arguments)
        connection.dispatch.after_cursor_execute(connection, cursor, sql, arguments, None,
                                                 False)
        return done.rows(cursor)
    except dialect.loaded_dbapi.Error as error:
        lost = dialect.is_disconnect(error, dbapi_connection, cursor)
        if lost:
            connection.invalidate(error)
        raise DBAPIError.instance(sql, arguments, error, dialect.loaded_dbapi.Error,
                                  connection_invalidated=lost) from error
    finally:
        cursor.close()


# How long a connection is held between statements before it goes back to the pool
# (`DirectStatements`).
HELD_SECONDS = 60.0


class DirectStatements:
    """Runs a few hot, prebuilt statements on a pooled DBAPI connection in autocommit, each
    its own transaction, without the ORM's or the Connection's machinery (~50 µs a statement
    instead of ~280 µs), on PostgreSQL by libpq's own calls (`Prepared`): the token lookup
    every request makes, a door's scan, the statements planned once of a public answer
    (`PLANNED_ONCE_RUNNER`).
    `execute(statement, params)` returns the rows (of a SELECT, or of an UPDATE's RETURNING),
    each with attribute access, like a Core result's `.all()` (a plain tuple: `PLAIN_ROWS`).

    No pre-ping: a connection the database dropped fails once, is discarded, and the
    statement runs again on a new one. (So may a write that had committed as its connection
    dropped: only a conditional write, which the second time changes nothing, belongs here.)

    Between statements a connection is held here rather than checked in: the pool's
    check-out and check-in (its events, the reset's rollback, its queue) cost the worker
    40-140 µs a statement on 2 slow cores, half a token lookup's CPU and a fifth of a facet
    count's (bench/RESULTS.md). On PostgreSQL, at most as many are held as threads ran
    statements at once, within the pool's bound (they are checked out of it), the one used
    last taken first; each goes back to the pool once held `HELD_SECONDS` (so that the
    pool's recycling and `Engine.dispose` reach it), and all of them on `close`.
    """

    def __init__(self, engine: Engine):
        self.engine = engine
        # Connections between statements, each with when it left the pool (`_take`, `_give`):
        # on PostgreSQL (SQLite's pool may give each thread a database of its own).
        self._held: collections.deque[tuple[object, float]] = collections.deque()
        self._holds = engine.dialect.name == "postgresql"
        # Collected while holding some (one made for a while, not closed): they are closed.
        weakref.finalize(self, _drop_held, self._held)

    def execute(self, statement, params: dict) -> list:
        dialect = self.engine.dialect
        done = compiled(statement, dialect)
        if done is None:
            raise Varying(str(statement))
        arguments = done.arguments(params)
        for attempt in (1, 2):
            try:
                pooled, taken = self._take()
            except dialect.loaded_dbapi.Error as error:
                raise DBAPIError.instance(done.sql, params, error, dialect.loaded_dbapi.Error,
                                          connection_invalidated=True) from error
            try:
                connection = pooled.dbapi_connection
                switched = not _in_autocommit(connection, dialect)
                if switched:
                    dialect.set_isolation_level(connection, "AUTOCOMMIT")
                try:
                    if done.raw:
                        rows = Prepared.of(pooled).rows(done, arguments)
                    else:
                        cursor = done.cursor(connection)
                        cursor.execute(done.sql, arguments)
                        rows = done.rows(cursor)
                        cursor.close()
                finally:
                    if switched:
                        dialect.reset_isolation_level(connection)
                self._give(pooled, taken)
                pooled = None
                return rows
            except dialect.loaded_dbapi.Error as error:
                lost = dropped(error, dialect.loaded_dbapi)
                if lost:
                    pooled.invalidate()
                    # The others held were most likely cut with it (a restart): new ones.
                    _drop_held(self._held)
                if not lost or attempt == 2:
                    # As SQLAlchemy raises it, so that the error handler knows it (503).
                    raise DBAPIError.instance(done.sql, params, error,
                                              dialect.loaded_dbapi.Error,
                                              connection_invalidated=lost) from error
            finally:
                if pooled is not None:  # a failure: back to the pool (or dropped, if lost)
                    pooled.close()
        raise AssertionError("unreachable")

    def _take(self) -> tuple:
        """A connection held since an earlier statement, the one used last first, or one
        checked out of the pool; with when it left the pool."""
        try:
            return self._held.pop()
        except IndexError:
            return self.engine.raw_connection(), time.monotonic()

    def _give(self, pooled, taken: float) -> None:
        """Hold `pooled` for the next statement; back to the pool once held `HELD_SECONDS`."""
        if self._holds and time.monotonic() - taken < HELD_SECONDS:
            self._held.append((pooled, taken))
        else:
            pooled.close()

    def close(self) -> None:
        """Return the connections held between statements to the pool (before the engine is
        disposed: a held connection is checked out, which disposing does not close)."""
        for pooled in _taken_out(self._held):
            pooled.close()


def _taken_out(held: collections.deque) -> Iterator:
    """Every connection `held`, each taken out of it (another thread may take one meanwhile)."""
    while True:
        try:
            yield held.pop()[0]
        except IndexError:
            return


def _drop_held(held: collections.deque) -> None:
    """Close every connection `held` at once (invalidated, not returned to the pool): after
    one of them was dropped, or when its `DirectStatements` was collected without `close`
    (their pool perhaps disposed of already)."""
    for pooled in _taken_out(held):
        pooled.invalidate()


def _in_autocommit(dbapi_connection, dialect) -> bool:
    """Whether a DBAPI connection runs each statement in a transaction of its own already
    (that of an engine made so: models/db.py `make_engine(autocommit=True)`)."""
    if dialect.name == "postgresql":
        return dbapi_connection.autocommit
    return dbapi_connection.isolation_level is None


def conninfo(url: str) -> str:
    """libpq's connection string of a SQLAlchemy URL (its driver's name left out), for the
    connections made outside an engine's pool."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


class KeptStatement:
    """One prebuilt statement without parameters, run again and again (one run at a time) on
    the event loop, on a connection of its own in autocommit, prepared: the catalogue stamp
    that confirms a kept answer (edge/admission.py `CurrentStamp`). `value()` is its first
    row's first column, as text. PostgreSQL (psycopg) only.

    On the event loop, not on a thread: a run costs ~26 µs of CPU, where one on a pooled
    connection on a thread cost ~80 and handing it to the thread and back more; a kept
    answer costs a sixth to a fifth less CPU (bench/RESULTS.md, "The stamp read on the
    event loop").
    The statement goes by libpq's own calls (psycopg's `pq`), its answer read as the
    connection's socket is readable: psycopg's `execute` would, once its run is past its
    time, ask the server to cancel it and wait for that too (up to 10 s more).

    A connection the database dropped fails once, is discarded and the statement runs again
    on a new one; a run past `seconds` (a database that does not answer) fails with a
    TimeoutError and its connection is closed, so that the next run does not wait behind
    it. A connection made on another event loop (a test's) is not used on this one."""

    _NAME = b"kept"

    def __init__(self, url: str, statement, dialect, connect_args: dict, seconds: float):
        self._conninfo = conninfo(url)
        self._sql = str(statement.compile(dialect=dialect,
                                          compile_kwargs={"literal_binds": True})).encode()
        self._connect_args = connect_args
        self._seconds = seconds
        self._connection: psycopg.AsyncConnection | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def value(self) -> str:
        try:
            async with asyncio.timeout(self._seconds):
                for attempt in (1, 2):
                    try:
                        pgconn = await self._connected()
                        pgconn.send_query_prepared(self._NAME, None)
                        return _first_value(await _results(pgconn))
                    except psycopg.Error as error:
                        if not dropped(error, psycopg):
                            raise
                        self.close()
                        if attempt == 2:
                            raise
        except TimeoutError:
            self.close()
            raise
        raise AssertionError("unreachable")

    async def _connected(self) -> pq.abc.PGconn:
        loop = asyncio.get_running_loop()
        if self._connection is not None and (self._loop is not loop or self._connection.closed):
            self.close()
        if self._connection is None:
            connection = await psycopg.AsyncConnection.connect(
                self._conninfo, autocommit=True, **self._connect_args)
            connection.pgconn.send_prepare(self._NAME, self._sql)
            _settled(await _results(connection.pgconn))
            self._connection, self._loop = connection, loop
        return self._connection.pgconn

    def close(self) -> None:
        """Close its connection, if any, at once (whatever it was doing)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.pgconn.finish()


async def _results(pgconn: pq.abc.PGconn) -> list[pq.abc.PGresult]:
    """The results of the statement sent on `pgconn`, read as its socket is readable."""
    loop = asyncio.get_running_loop()
    done = loop.create_future()

    def readable() -> None:
        try:
            pgconn.consume_input()
            if pgconn.is_busy():
                return
            results = []
            while (result := pgconn.get_result()) is not None:
                results.append(result)
            outcome = results
        except psycopg.Error as error:
            if not done.done():
                done.set_exception(error)
            return
        if not done.done():
            done.set_result(outcome)

    socket = pgconn.socket
    loop.add_reader(socket, readable)
    try:
        return await done
    finally:
        loop.remove_reader(socket)


def _settled(results: list[pq.abc.PGresult]) -> list[pq.abc.PGresult]:
    """`results`, or the error of the first that failed, raised."""
    for result in results:
        if result.status not in (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK):
            raise psycopg.errors.error_from_result(result)
    return results


def _first_value(results: list[pq.abc.PGresult]) -> str:
    return _settled(results)[0].get_value(0, 0).decode()
